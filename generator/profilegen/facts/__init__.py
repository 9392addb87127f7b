"""Engine facts from real releases: reading them, judging command lines, rehearsing patches.

Owns: the releases cache (`releases.py`: `pip download` of a release into the user cache, and
the throw-away environments it is installed in; the one module beside `hub/` that reaches the
network), the per-family readers of a release (`vllm.py`, `sglang.py`, `llamacpp.py`, and the
probes their release's own Python runs), the facts file writer, the judge of an engine command
line against facts (`judge.py`), the patch rehearsal on a release's source (`rehearse.py`) and
the upgrade report (`upgrade.py`).
May import: `errors`, `resources`, `write`, `cache`, `model`, `registry`, `render`,
`explain`, `sandbox`, `hub` (patch files: whether a profile's can all be had).
"""
