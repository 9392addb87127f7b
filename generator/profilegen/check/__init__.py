"""`profilegen check`: every named rule over the registry and the generated tree, one report.

Owns: the driver (load, run rules, collect), the rules (`rules/`, one module per area) and
the reporters (text, json, GitHub annotations).
May import: `errors`, `lockfile`, `units`, `families`, `resources`, `write`, `cache`, `model`, `registry`, `hub`, `fit`, `render`,
`docs`, `generated`, `explain`, `facts`.
"""
