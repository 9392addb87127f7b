"""One mistake, one finding: a bad value is reported once, at the value, and the findings that
merely follow from it (a Kubernetes split of a TP the rig cannot hold, the fit of a context
past the model's, an entrypoint refusing the KV dtype) stay silent.

The cascades are planted in a copy of the real registry; the check must add exactly the
listed findings to those of the pristine copy, and take none away.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from profilegen.check.derived import drop_derived
from profilegen.cli import cli
from profilegen.errors import Finding, Location, Severity, Value
from tests.support.copies import copy_tree
from tests.support.repo import fast_schemas  # noqa: F401 (fixture)

from .mutations import DUAL_FAST, Apply, replace

pytestmark = pytest.mark.usefixtures("fast_schemas")

INT4_BASE = "registry/profiles/qwen3.8-27b-autoround-int4-vllm-v0.27.1-base.yaml"


def _lines(root: Path) -> tuple[int, list[str]]:
    result = CliRunner().invoke(
        cli, ["--root", str(root), "check", "--format", "json"], catch_exceptions=False
    )
    assert "Traceback" not in result.output
    found: list[dict[str, Any]] = json.loads(result.stdout)
    return result.exit_code, [_line(f) for f in found]


def _line(f: dict[str, Any]) -> str:
    where = f["file"] if f["line"] is None else f"{f['file']}:{f['line']}"
    hint = f" ({f['hint']})" if f["hint"] else ""
    return f"{where}: {f['severity']}: [{f['rule']}] {f['message']}{hint}"


@pytest.fixture(scope="module")
def baseline(pristine: Path) -> list[str]:
    code, lines = _lines(pristine)
    assert code == 0, lines
    return lines


@dataclass(frozen=True)
class Cascade:
    name: str
    apply: Apply
    # Every finding the mistake adds to the pristine copy's, exactly.
    added: tuple[str, ...]


CASCADES = [
    # Before: three hw-tp findings on the one value, and [k8s] "TP x PP = 3 GPUs do not
    # split evenly over 2 nodes".
    Cascade(
        "tp-beyond-the-rig-and-the-kv-heads",
        replace(DUAL_FAST, "  tp: 2\n", "  tp: 3\n"),
        (
            f"{DUAL_FAST}:16: error: [hw-tp] TP 3 needs 3 GPUs, rig 2x3090-pcie has 2 and "
            "neither divides nor is a multiple of the 4 KV heads (use TP 1 or 2)",
        ),
    ),
    # Before: also the entrypoint refusing KV_CACHE_DTYPE at its defaults, the fit that
    # cannot size the KV pool, and a fit-evidence error for each of the four evidence records.
    Cascade(
        "unknown-kv-dtype",
        replace(DUAL_FAST, "  kv_cache_dtype: fp8_e4m3\n", "  kv_cache_dtype: fp9\n"),
        (
            f"{DUAL_FAST}:20: error: [hw-kv-dtype] vllm does not know KV dtype 'fp9' (one of "
            "auto, bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2, int8_per_token_head)",
        ),
    ),
    # Before: also the fit's warning that the KV pool is short of 9,999,999 tokens.
    Cascade(
        "context-past-the-model",
        replace(DUAL_FAST, "  max_model_len: 262144\n", "  max_model_len: 9999999\n"),
        (
            f"{DUAL_FAST}:17: error: [hw-memory] max_model_len 9999999 exceeds qwen3.8-27b's "
            "maximum of 262144",
        ),
    ),
]


@pytest.mark.parametrize("cascade", CASCADES, ids=[c.name for c in CASCADES])
def test_a_mistake_is_one_finding(
    cascade: Cascade, pristine: Path, baseline: list[str], tmp_path: Path
) -> None:
    root = tmp_path / "root"
    copy_tree(pristine, root, link=True)  # mutations write new files
    cascade.apply(root)
    code, lines = _lines(root)
    assert code == 1
    added = [line for line in lines if line not in baseline]
    gone = [line for line in baseline if line not in lines]
    assert (added, gone) == (list(cascade.added), [])


def test_an_unknown_engine_in_a_base_is_the_only_finding(pristine: Path, tmp_path: Path) -> None:
    """Every qwen3.8 int4 profile extends the base: the reference is one finding, and nothing
    is checked on top of a registry whose references do not resolve."""
    root = tmp_path / "root"
    copy_tree(pristine, root, link=True)
    replace(INT4_BASE, "\nengine: vllm-v0.27.1\n", "\nengine: vllm-v9\n")(root)
    assert _lines(root) == (
        1,
        [
            f"{INT4_BASE}:7: error: [reference] engine 'vllm-v9' is not defined (did you mean "
            "'vllm-v0.27.1'?)"
        ],
    )


# -- the rule itself, on findings made here ------------------------------------------------

TP = Value.of_profile("p", "envelope", "tp")
ENVELOPE = Value.of_profile("p", "envelope")


def _finding(
    rule: str,
    severity: Severity = Severity.ERROR,
    about: Value | None = None,
    follows: tuple[Value, ...] = (),
) -> Finding:
    return Finding(Location("f.yaml", 1), rule, None, rule, severity, about=about, follows=follows)


def _kept(*findings: Finding) -> list[str]:
    return [f.rule for f in drop_derived(findings)]


def test_a_finding_that_follows_a_reported_value_goes() -> None:
    assert _kept(_finding("hw-tp", about=TP), _finding("k8s", follows=(TP,))) == ["hw-tp"]


def test_a_value_holds_the_values_under_it() -> None:
    # A fit follows the whole envelope; the TP is in it.
    assert _kept(_finding("fit", follows=(ENVELOPE,)), _finding("hw-tp", about=TP)) == ["hw-tp"]
    # A finding about the envelope as a whole covers one that follows its TP.
    assert _kept(_finding("env", about=ENVELOPE), _finding("k8s", follows=(TP,))) == ["env"]


def test_another_profile_or_value_is_not_covered() -> None:
    other = Value.of_profile("q", "envelope", "tp")
    pp = Value.of_profile("p", "envelope", "pp")
    findings = (
        _finding("hw-tp", about=TP),
        _finding("a", follows=(other,)),
        _finding("b", follows=(pp,)),
    )
    assert _kept(*findings) == ["hw-tp", "a", "b"]


def test_a_warning_never_hides_an_error() -> None:
    warning = _finding("hint", Severity.WARNING, about=TP)
    assert _kept(warning, _finding("k8s", follows=(TP,))) == ["hint", "k8s"]
    assert _kept(warning, _finding("fit", Severity.WARNING, follows=(TP,))) == ["hint"]


def test_findings_that_follow_each_other_leave_one() -> None:
    first = _finding("a", about=TP, follows=(ENVELOPE,))
    second = _finding("b", about=ENVELOPE, follows=(TP,))
    assert _kept(first, second) == ["b"]
