"""Engine families: everything profilegen knows about vLLM, llama.cpp (and its forks) or SGLang
as one kind of server, in one module each.

Owns: the `Family` record (how each stage treats an engine of that kind: its entrypoint
template, how it takes a served name and an API key, which memory model fits it, which log
format it writes, the hooks that build its command line and read its facts) and the table of
families. Every other stage asks `family(kind)` instead of comparing engine kinds; a new family
is one module here (or a `register` call) plus its entrypoint template.
May import: `errors`.
"""

from __future__ import annotations

from .base import Family, FitModel, hook
from .table import family, fit_model, kinds, register

__all__ = ["Family", "FitModel", "family", "fit_model", "hook", "kinds", "register"]
