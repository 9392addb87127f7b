"""Writing new registry entries for a maintainer: a new profile, validated before it is written.

Owns: building registry documents (YAML that keeps comments and order) and proving them with
every check before the first byte lands.
May import: `errors`, `resources`, `write`, `model`, `registry`, `hub`, `fit`, `render`,
`docs`, `generated`, `explain`, `check`.
"""
