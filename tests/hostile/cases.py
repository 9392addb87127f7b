"""The hostile-registry corpus: small registries built from tests/registry/base, one per case.

Each case lays files over a fresh copy of the base (or builds what cannot be a plain file:
symlinks, FIFOs, folders), runs one command and states how it must end: the exit code and
the exact located findings, or a clean success. A case marked `bounded` runs the real CLI in
a subprocess with a time and memory limit: the classes that used to hang, eat gigabytes or
crash the interpreter. `test_hostile.py` also proves every failing run wrote nothing.
"""

from __future__ import annotations

from tests.hostile.build import Case
from tests.hostile.cases_container import container_cases
from tests.hostile.cases_deadlines import deadline_cases
from tests.hostile.cases_hub import hub_cases
from tests.hostile.cases_integrity import integrity_cases
from tests.hostile.cases_layout import layout_cases, write_cases
from tests.hostile.cases_numbers import number_cases
from tests.hostile.cases_writes2 import write_cases2
from tests.hostile.cases_yaml import yaml_cases

__all__ = ["Case", "cases"]


def cases() -> list[Case]:
    return [
        *yaml_cases(),
        *layout_cases(),
        *integrity_cases(),
        *write_cases(),
        *container_cases(),
        *write_cases2(),
        *hub_cases(),
        *deadline_cases(),
        *number_cases(),
    ]
