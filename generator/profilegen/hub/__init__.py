"""Everything on the network and the files it pins: Hub artifacts, the lock file, patch files.

Owns: artifact lists, the lock, `check --online`/`lock`, `fetch`, the patch-file cache, the
Hugging Face client and a serving engine's API for `bench` (`serving.py`): the only code that
talks to the network. Importing this package is
cheap: `client`, `download`, `problems` and `checkpoint` load huggingface_hub (and `gguf` the
gguf library, lazily) and are imported only by the commands that need them.
May import: `errors`, `lockfile`, `resources`, `write`, `cache`, `model`, `registry`.
"""
