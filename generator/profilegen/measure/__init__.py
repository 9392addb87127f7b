"""`bench`: the canonical bench against a serving engine, and its result as evidence; `verify
--serving`: functional checks of a serving engine, and their verdict as evidence.

Owns: the method (pinned prompts and sampling, warm-ups and measured runs, the prefill probe),
the check that the server answering is the profile asked for, the statistics, the machine's
facts read through NVML, the evidence record that names the server measured, and the
functional checks (`functional.py`, `toolcall.py`, `probes.py`, `verifyrun.py`).
May import: `errors`, `units`, `resources`, `write`, `model`, `registry`, `hub`, `render`, `explain`,
`fit`, `authoring`, `families`.
"""
