"""What an upstream entrypoint script does, recognised line by line from its conventions.

The scripts are not executed: each convention the catalogue uses (NVLink detection, the
drafter toggle, the W4A8 switch, patch installers, sampler rows, the llama.cpp drafter strip)
is matched by a pattern; anything else is reported as not modelled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...registry.safejson import load_json
from .words import default_value

_SPEC_DEFAULT = re.compile(
    r'_spec_n="\$\{SPEC_N:-(?:(?P<n>\d+)|\$\{(?P<var>\w+):-(?P<fallback>\d+)\})\}"'
)
_INSTALL = re.compile(
    r"^\s*bash /etc/club3090/(?P<dir>[\w.-]+)/install\.sh(?P<strict>\s*\|\|\s*exit 1)?\s*$", re.M
)
_SPEC_JSON = re.compile(r'--speculative-config "(?P<json>\{.*?\})"\)')
_ROW = re.compile(
    r': "\$\{_temp:=(?P<temp>[\d.]+)\}" "\$\{TOP_P:=(?P<top_p>[\d.]+)\}" "\$\{PRESENCE_PENALTY:=(?P<pp>[\d.]+)\}"'
)
_SAMPLER_JSON = re.compile(r'SAMPLER_ARGS=\(--override-generation-config "(?P<json>\{.*?\})"\)')
_ASSIGN = re.compile(r"^\s*([A-Z][A-Z0-9_]*)=([A-Za-z0-9_./-]+)\s*$", re.M)
_LMCACHE = re.compile(
    r'LM_ARGS=\(--chunk-size "\$\{LMCACHE_CHUNK_SIZE:-(?P<chunk>\d+)\}" '
    r'--l1-size-gb "\$\{LMCACHE_L1_GB:-(?P<l1>\d+)\}" --eviction-policy (?P<evict>\w+)\)'
)
_LMCACHE_L2 = re.compile(r'"base_path":"(?P<path>/[\w./-]+)"')
_LMCACHE_WAIT = re.compile(r"^\s*sleep (?P<s>\d+)\s*$", re.M)
_DRAFT_CHECK = re.compile(r"external DSpark drafter not found|drafter not found", re.I)
# Lines every recognised convention consists of (comments aside); the rest is reported.
_KNOWN = re.compile(
    r"^\s*(umask \d+|set -[euo ]+(pipefail)?|source /etc/club3090/detect_nvlink\.sh"
    r"|bash /etc/club3090/[\w.-]+/install\.sh|_spec_n=|case |esac|;;|echo |exit 1|fi$|else$|then$"
    r"|if |elif |SPEC_ARGS=|AR=|\[ |exec |ARGS=|for |done$|do$|_skip=|ARGS\+=|\*\)|--spec-|_temp="
    r'|: "\$\{|SAMPLER_ARGS=|export VLLM_MARLIN_INPUT_DTYPE=int8|\S+\)\s*_skip=|\S+\) _spec_n=0'
    r"|[A-Z][A-Z0-9_]*=[A-Za-z0-9_./-]+\s*$|#|$)"
)
# The LMCache server convention's lines, known where the convention is recognised.
_LMCACHE_LINES = re.compile(
    r"^\s*(LM_ARGS(\+)?=|lmcache server |sleep \d+$|unset PYTORCH_CUDA_ALLOC_CONF$)"
)


@dataclass
class ScriptFacts:
    nvlink_detection: bool = False
    # auto: passed unless NVLink was found; off: always passed; None: never passed.
    custom_all_reduce: str | None = None
    spec_gate: bool = False
    spec_default: int | None = None
    spec_fallback: str | None = None  # SPEC_N_MAX, NUM_SPEC_TOKENS: read when SPEC_N is unset
    spec_json: dict[str, object] | None = None  # vLLM --speculative-config keys (width aside)
    installs: list[tuple[str, bool]] = field(default_factory=list)  # (mount dir, fatal)
    w4a8: bool = False
    thinking_row: dict[str, float] = field(default_factory=dict)
    instruct_row: dict[str, float] = field(default_factory=dict)
    sampler_json: dict[str, object] | None = None  # the script-built generation config
    strips_draft_flags: bool = False
    draft_file_check: bool = False
    lmcache: dict[str, object] | None = None  # the LMCache server started before the engine
    not_modelled: list[str] = field(default_factory=list)


def read_script(script: str | None) -> ScriptFacts:
    facts = ScriptFacts()
    if not script:
        return facts
    text = default_value(script)  # as bash receives it: Compose has interpolated it
    facts.nvlink_detection = "source /etc/club3090/detect_nvlink.sh" in text
    if "--disable-custom-all-reduce" in text:
        facts.custom_all_reduce = "auto" if "_NVLINK_ENABLED" in text else "off"
    if (m := _SPEC_DEFAULT.search(text)) is not None:
        facts.spec_gate = True
        facts.spec_default = int(m["n"] or m["fallback"])
        facts.spec_fallback = m["var"]
    if (m := _SPEC_JSON.search(text)) is not None:
        facts.spec_json = _json_template(m["json"], dict(_ASSIGN.findall(text)))
    facts.installs = [(m["dir"], bool(m["strict"])) for m in _INSTALL.finditer(text)]
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    facts.w4a8 = "export VLLM_MARLIN_INPUT_DTYPE=int8" in code
    _rows(text, facts)
    facts.strips_draft_flags = "--spec-draft-n-max" in text and "_skip=1" in text
    facts.draft_file_check = bool(_DRAFT_CHECK.search(text))
    facts.lmcache = _lmcache(text)
    facts.not_modelled = [
        line.strip()
        for line in text.splitlines()
        if line.strip()
        and not _KNOWN.match(line)
        and not (facts.lmcache and _LMCACHE_LINES.match(line))
    ]
    return facts


def _lmcache(text: str) -> dict[str, object] | None:
    m = _LMCACHE.search(text)
    if m is None or "lmcache server" not in text:
        return None
    out: dict[str, object] = {
        "chunk_size": int(m["chunk"]),
        "l1_size_gb": int(m["l1"]),
        "eviction_policy": m["evict"],
    }
    if (l2 := _LMCACHE_L2.search(text)) is not None:
        out["l2_path"] = l2["path"]
    if (wait := _LMCACHE_WAIT.search(text)) is not None:
        out["startup_wait_s"] = int(wait["s"])
    return out


def _json_template(escaped: str, assigned: dict[str, str]) -> dict[str, object] | None:
    """The JSON a script builds: its literal assignments filled in, other variables set to 0."""
    text = escaped.replace('\\"', '"')
    for name, value in assigned.items():
        text = re.sub(r"\$\{" + name + r"\}|\$" + name + r"(?!\w)", value, text)
    text = re.sub(r"\$\{[A-Za-z_]\w*(?::-[^}]*)?\}|\$[A-Za-z_]\w*", "0", text)
    try:
        value = load_json(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _rows(text: str, facts: ScriptFacts) -> None:
    rows = list(_ROW.finditer(text))
    if len(rows) == 2 and 'ENABLE_THINKING:-false}" = "true"' in text:
        thinking, instruct = rows
        facts.thinking_row = _row(thinking)
        facts.instruct_row = _row(instruct)
    if (m := _SAMPLER_JSON.search(text)) is not None:
        template = m["json"].replace('\\"', '"')
        defaults = {k: float(v) for k, v in re.findall(r"\$\{(\w+):-([\d.]+)\}", template)}
        facts.sampler_json = {"defaults": defaults, "template": template}


def _row(match: re.Match[str]) -> dict[str, float]:
    return {
        "temperature": float(match["temp"]),
        "top_p": float(match["top_p"]),
        "presence_penalty": float(match["pp"]),
    }
