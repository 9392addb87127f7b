"""Importers: other catalogues' files read and written as registry entries in our layout.

Owns: reading a foreign catalogue without executing it, mapping its facts onto the model,
and the list of what could not be modelled.
May import: `errors`, `units`, `families`, `resources`, `write`, `model`, `registry`, `fit`, `render`,
`docs`, `generated`, `explain`, `check`.
"""
