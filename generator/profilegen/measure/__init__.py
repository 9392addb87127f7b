"""`bench`: the canonical bench against a serving engine, and its result as evidence.

Owns: the method (pinned prompts and sampling, warm-ups and measured runs, the prefill probe),
the check that the server answering is the profile asked for, the statistics, the machine's
facts read through NVML, and the evidence record that names the server measured.
May import: `errors`, `units`, `resources`, `write`, `model`, `registry`, `hub`, `render`, `explain`,
`fit`, `authoring`.
"""
