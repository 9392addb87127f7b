"""The project's generated, checked-in files: compose/<id>/, docs/ and schema/ (planned purely).

Owns: what the checked-in tree must contain byte for byte, and which files are orphans.
May import: `errors`, `lockfile`, `families`, `resources`, `write`, `cache`, `model`, `registry`, `fit`,
`render`, `docs`, `explain`.
"""
