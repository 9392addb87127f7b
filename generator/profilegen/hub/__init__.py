"""Everything on the network and the files it pins: Hub artifacts, the lock file, patch files.

Owns: artifact lists, the lock, `check --online`/`lock`, `fetch`, the patch-file cache and the
Hugging Face client (the only code that talks to the network). Importing this package is
cheap: `client`, `download` and `problems` load huggingface_hub and are imported only by the
commands that go online.
May import: `errors`, `resources`, `write`, `model`, `registry`.
"""
