"""The lock file and what it refers to: pure data, read from disk, no network.

Owns: the lock's data model and reading it (`lock.py`), which artifacts each profile uses and
what a lock entry promises of them (`artifacts.py`), what a Hub answer or a lock entry may name
as a file (`paths.py`), and the records of a Hub check that the lock keeps (`records.py`).
`hub/` writes the lock from the network; every other stage only reads it from here.
May import: `errors`, `units`, `model`, `registry`.
"""
