"""`explain`: what a profile's container will actually run, found without a GPU.

Owns: Compose interpolation (as `docker compose` does it), running the rendered entrypoint
under bash with stub engines and a stub `nvidia-smi` (each run remembered), the fixed scenario
set, and reports.
May import: `errors`, `families`, `resources`, `write`, `cache`, `model`, `registry`, `render`, `sandbox`.
"""
