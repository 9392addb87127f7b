"""Read-only views of the registry for people: catalogue pages, listings, `show`, changelogs.

Owns: generated Markdown (docs/CATALOG.md and the per-model benchmark pages), the `list` and
`artifacts` tables, the resolved profile of `show`, CHANGELOG drafts.
May import: `errors`, `lockfile`, `families`, `resources`, `model`, `registry`, `fit`, `render`.
"""
