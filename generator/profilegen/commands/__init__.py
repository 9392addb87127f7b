"""The commands: one module per CLI command or group, each a thin adapter over a stage.

Owns: click options, turning them into a stage's options object, and printing its result.
May import: `*` (every package but `cli`; nothing imports the commands but `cli`).
"""
