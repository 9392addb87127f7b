"""Writing new registry entries: profiles and models (derived from a checkpoint), proven first.

Owns: building registry documents (YAML that keeps comments and order) and proving them with
every check before the first byte lands.
May import: `errors`, `lockfile`, `families`, `resources`, `write`, `model`, `registry`, `hub`, `fit`, `render`,
`docs`, `generated`, `explain`, `check`.
"""
