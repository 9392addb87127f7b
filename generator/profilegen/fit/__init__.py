"""Memory fit: will a profile's envelope boot on a rig, and how large is its KV pool.

Owns: the pure formulas (`formulas/`), registry facts as their inputs (`inputs`), what-if
retargeting and prediction (`predict`), calibration against evidence, local GPU detection.
May import: `errors`, `lockfile`, `units`, `families`, `model`, `registry`.
"""
