"""A new registry of one's own (`profilegen init`): settings, a first rig, schemas, the lock,
the generated docs/ page, a CI workflow and a pre-commit config, written as one unit.

Owns: the packaged starting files (data/), the GPU shapes a first rig may take, and what a
registry needs to pass `profilegen check` before its first profile.
May import: `errors`, `write`, `model`, `registry`, `generated`, `lockfile`, `check`.
"""
