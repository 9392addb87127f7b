"""Container variables the registry may not set: what bash, the loader, Python or the entrypoint
itself interprets.

The entrypoint's own names are read off the rendered scripts (every upper-case variable they
read, set, export or unset), so the reserved set follows the scripts and cannot drift from
them; only the few inputs the entrypoint deliberately starts from are let through.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

# Variables that change how bash starts or runs a script (BASH_ENV and ENV are sourced,
# SHELLOPTS can turn on tracing that prints every command, the key included).
SHELL_NAMES = frozenset(
    {
        "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS1", "PS2", "PS3", "PS4",
        "PROMPT_COMMAND", "IFS", "PATH", "CDPATH", "GLOBIGNORE", "POSIXLY_CORRECT",
        "BASH_COMPAT", "BASH_XTRACEFD", "BASH_LOADABLES_PATH", "EXECIGNORE", "FUNCNEST",
        "TMPDIR", "HOME", "SHELL",
    }
)  # fmt: skip
# Variables the dynamic loader or the C library reads: each can load code into a process.
LOADER_NAMES = frozenset({"GCONV_PATH", "GLIBC_TUNABLES", "LOCPATH", "NLSPATH", "HOSTALIASES"})
LOADER_PREFIX = "LD_"
PYTHON_PREFIX = "PYTHON"
ENTRYPOINT_PREFIX = "PROFILEGEN_"
SECRET_NAMES = frozenset({"API_KEY", "API_KEY_FILE", "VLLM_API_KEY"})
# Names the entrypoint reads but starts from the container's value on purpose: a profile may
# set them (the NVLink step keeps or replaces them at boot, as the profile's notes say).
PASS_IN = frozenset(
    {"PYTORCH_CUDA_ALLOC_CONF", "NCCL_P2P_LEVEL", "NCCL_P2P_DISABLE", "CUDA_VISIBLE_DEVICES"}
)
_NAME = r"[A-Z_][A-Z0-9_]*"
_USES = re.compile(
    rf"\$\{{?({_NAME})"  # $NAME, ${NAME...}
    rf"|\b(?:export|unset|local|pg_tunable|pg_check|pg_range|pg_oneof|pg_inputs)((?:[ \t]+{_NAME}(?:=\S*)?)+)"
    rf"|^[ \t]*({_NAME})=",  # NAME=value
    re.M,
)


def entrypoint_names(*scripts: str) -> frozenset[str]:
    """Every upper-case variable the scripts read, set, export or unset."""
    return frozenset().union(*(_names(script) for script in scripts))


@lru_cache(maxsize=512)
def _names(script: str) -> frozenset[str]:
    """One script's names (the helpers are the same beside every entrypoint: read once)."""
    names: set[str] = set()
    for read, listed, assigned in _USES.findall(script):
        names.update(n for n in (read, assigned) if n)
        names.update(w.split("=", 1)[0] for w in listed.split())
    return frozenset(names)


def why_reserved(name: str, owned: frozenset[str], owners: Mapping[str, str]) -> str | None:
    """Why the registry may not set `name` in a container's environment, or None.

    `owned`: the entrypoint's own names (`entrypoint_names`); `owners`: what sets a name
    that the entrypoint takes from the profile (a tunable's field, a patch's switch).
    """
    if name in SHELL_NAMES:
        return "bash reads it as it starts or runs the entrypoint"
    if name in LOADER_NAMES or name.startswith(LOADER_PREFIX):
        return "the dynamic loader reads it (it can load code into every process)"
    if name.startswith(PYTHON_PREFIX):
        return "Python reads it as it starts (it can run code in the engine)"
    if name in SECRET_NAMES:
        return (
            "it carries the API key, a secret: the rig owner sets API_KEY or API_KEY_FILE "
            "on the host, never the registry"
        )
    if name.startswith(ENTRYPOINT_PREFIX):
        return "it steers the entrypoint itself (where patches are found and applied)"
    if name in owners:
        return f"the entrypoint sets it from {owners[name]}: set that instead"
    if name in owned and name not in PASS_IN:
        return "the entrypoint sets it itself, so a value here would be replaced at boot"
    return None
