"""What the entrypoint takes from its environment, run in the explain box: every value capped in
length before any pattern is matched, numbers finite and in range, an API key of one printable
line; and the registry's tunable defaults held to the same rules, located, so that every
default boots."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from profilegen.explain.core import Explanation, Scenario, explain
from profilegen.explain.report import as_json, as_text
from profilegen.model.tunable_values import value_problem
from profilegen.registry import Registry
from profilegen.registry.safeyaml import MAX_NUMBER
from profilegen.render.context import environments
from profilegen.render.targets.compose import render_helpers
from profilegen.render.tunables import LIMITS
from profilegen.resources import template_dirs
from tests.hostile.build import edit
from tests.support.base import build_base
from tests.support.cli import invoke_in
from tests.support.repo import shared_registry

VLLM = "qwen36-27b-minimal"  # TEMP, TOP_P, TP, KV_CACHE_DTYPE, W4A8
LLAMA = "qwen38-27b-single-iq4xs"  # CTX_SIZE
DRAFTING = "qwen38-27b-dual-fast"  # SPEC, SPEC_N
LLAMA_KEY = "deckard40b-dual-mtp"  # llama-server: the key goes to a file
VLLM_KEY = "qwen38-27b-dual-dflash15-fast"  # vLLM: the key goes to VLLM_API_KEY
HUGE = 100_000
FINITE = "must be a finite number at most 9,007,199,254,740,992 in size, got"
TINY = "must be 0 or at least 1e-37 in size, got"
CONTROL = (
    "holds a control character (a line break, a tab or the like): a key is one line of "
    "printable characters; refusing to boot"
)


@pytest.fixture(scope="module")
def registry() -> Registry:
    return shared_registry()


def run(registry: Registry, profile_id: str, **env: str) -> Explanation:
    profile = registry.profiles[profile_id]
    return explain(registry, profile, Scenario(env=tuple(sorted(env.items()))))


def refused(e: Explanation) -> tuple[bool, int | None, str | None]:
    return (e.launched, e.exit_code, e.message)


# -- lengths -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("profile", "name", "value", "message"),
    [
        # The trial's case: bash's pattern match recursed per character and overflowed its
        # stack (exit 139, nothing said).
        (LLAMA, "CTX_SIZE", "1" * HUGE, f"CTX_SIZE must be at most 64 characters long, got {HUGE}"),
        (VLLM, "KV_CACHE_DTYPE", "a" * HUGE, f"KV_CACHE_DTYPE must be at most 1024 characters long, got {HUGE}"),
        (VLLM, "TEMP", "1" * HUGE, f"TEMP must be at most 64 characters long, got {HUGE}"),
        (VLLM, "W4A8", "y" * HUGE, f"W4A8 must be at most 64 characters long, got {HUGE}"),
        (DRAFTING, "SPEC_N", "3" * HUGE, f"SPEC_N must be at most 64 characters long, got {HUGE}"),
        (DRAFTING, "SPEC", "o" * HUGE, f"SPEC must be at most 64 characters long, got {HUGE}"),
        (VLLM, "CUDA_VISIBLE_DEVICES", "0" * HUGE, f"CUDA_VISIBLE_DEVICES must be at most 4096 characters long, got {HUGE}"),
    ],
    ids=["ctx-size", "word", "float", "bool", "spec-n", "spec", "visible-devices"],
)  # fmt: skip
def test_a_long_value_is_refused_before_any_pattern(
    registry: Registry, profile: str, name: str, value: str, message: str
) -> None:
    assert refused(run(registry, profile, **{name: value})) == (False, 1, message)


def test_the_length_cap_is_exact(registry: Registry) -> None:
    # At the cap the value goes on to its own check; one more character is refused.
    at = run(registry, VLLM, KV_CACHE_DTYPE="a" * 1024)
    assert at.exit_code == 1 and at.message is not None
    assert at.message.startswith("KV_CACHE_DTYPE must be one of: ")
    past = run(registry, VLLM, KV_CACHE_DTYPE="a" * 1025)
    assert past.message == "KV_CACHE_DTYPE must be at most 1024 characters long, got 1025"


# -- numbers -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("TEMP", "1e39", f"TEMP {FINITE} '1e39'"),
        ("TEMP", "1e309", f"TEMP {FINITE} '1e309'"),
        ("TEMP", "1e99999999999999999999", f"TEMP {FINITE} '1e99999999999999999999'"),
        ("TEMP", "9007199254740993", f"TEMP {FINITE} '9007199254740993'"),
        ("TEMP", "9007199254740992.5", f"TEMP {FINITE} '9007199254740992.5'"),
        ("TEMP", "1e-400", f"TEMP {TINY} '1e-400'"),
        ("TEMP", "9.9e-38", f"TEMP {TINY} '9.9e-38'"),
        ("TEMP", "-1e39", "TEMP must be >= 0, got '-1e39'"),
        ("TEMP", "inf", "TEMP must be a number, got 'inf'"),
        ("TEMP", "nan", "TEMP must be a number, got 'nan'"),
        ("TEMP", "-inf", "TEMP must be a number, got '-inf'"),
        # The declared domain is named first; an exponent too long for bash's arithmetic (it
        # wrapped to -1 here, 0.1, inside the domain) is never read as a number.
        ("TOP_P", "1e39", "TOP_P must be > 0 and <= 1, got '1e39'"),
        ("TOP_P", "1e18446744073709551615", "TOP_P must be > 0 and <= 1, got '1e18446744073709551615'"),
        ("TOP_P", "1e-400", f"TOP_P {TINY} '1e-400'"),
        ("TP", "99999999999999999999", f"TP {FINITE} '99999999999999999999'"),
        ("MAX_MODEL_LEN", "9007199254740993", f"MAX_MODEL_LEN {FINITE} '9007199254740993'"),
    ],
)  # fmt: skip
def test_a_number_must_be_finite_and_in_its_domain(
    registry: Registry, name: str, value: str, message: str
) -> None:
    assert refused(run(registry, VLLM, **{name: value})) == (False, 1, message)


@pytest.mark.parametrize("value", ["9007199254740992", "1e-37", "0e99999999999", "0.5e1", "-0.0"])
def test_a_number_at_the_edges_boots(registry: Registry, value: str) -> None:
    e = run(registry, VLLM, TEMP=value)
    assert e.launched, e.message
    config = e.argv[e.argv.index("--override-generation-config") + 1]
    assert f'"temperature":{value},' in config


def test_the_limits_are_the_registrys() -> None:
    assert LIMITS["largest"] == MAX_NUMBER
    assert f"{MAX_NUMBER:,}" in FINITE


def _spelling(rng: random.Random) -> str:
    """A number as the float pattern admits it, often far past any bound."""
    digits = "".join(rng.choice("0123456789") for _ in range(rng.choice([1, 2, 15, 16, 17])))
    fraction = "".join(rng.choice("0009") for _ in range(rng.choice([0, 1, 5, 40])))
    body = rng.choice([digits, f"{digits}.{fraction}", f".{fraction or '5'}"])
    if rng.random() < 0.6:
        exponent = rng.choice(["0", "15", "16", "36", "37", "38", "400", "99999999999999999999"])
        body += rng.choice("eE") + rng.choice(["", "-", "+"]) + exponent
    return rng.choice(["", "-"]) + body


def test_the_entrypoint_and_check_agree_on_every_number() -> None:
    """The same refusal, word for word, from the entrypoint's bash and the registry's Python."""
    rng = random.Random(20261206)
    values = [_spelling(rng) for _ in range(300)]
    helpers = render_helpers(environments(tuple(template_dirs(None)))).decode()
    script = "\n".join(
        f"(X={value!r}; pg_tunable X float 1; pg_ranges; echo ok) 2>&1 | tail -n 1"
        for value in values
    )
    done = subprocess.run(
        ["bash"], input=f"{helpers}\n{script}\n", capture_output=True, text=True, check=True
    )
    said = done.stdout.splitlines()
    want = [
        "ok" if value_problem(v, "float") is None else f"profilegen: X {value_problem(v, 'float')}"
        for v in values
    ]
    assert [(v, s) for v, s, w in zip(values, said, want, strict=True) if s != w] == []
    assert sum(w == "ok" for w in want) > 30 and sum(w != "ok" for w in want) > 30


# -- the API key -------------------------------------------------------------------------------


def everything_shown(e: Explanation) -> str:
    return as_text(e) + json.dumps(as_json(e))


@pytest.mark.parametrize("profile", [LLAMA_KEY, VLLM_KEY])
@pytest.mark.parametrize(
    "key", ["sk-one\nsk-two", "sk-one\tx", "sk-one\rx", "sk-one\x7f", "sk-one\n"]
)
def test_a_key_with_a_control_character_is_refused_unshown(
    registry: Registry, profile: str, key: str
) -> None:
    e = run(registry, profile, API_KEY=key)
    assert refused(e) == (False, 1, f"API_KEY {CONTROL}")
    assert "sk-one" not in everything_shown(e)


def test_a_key_file_of_many_lines_is_refused(registry: Registry) -> None:
    # A file of the container with several lines (the kernel's view of the process).
    e = run(registry, LLAMA_KEY, API_KEY_FILE="/proc/self/status")
    assert refused(e) == (False, 1, f"the key in API_KEY_FILE {CONTROL}")


def test_a_key_is_held_to_a_length(registry: Registry) -> None:
    assert run(registry, VLLM_KEY, API_KEY="k" * 4096).env["VLLM_API_KEY"] == "k" * 4096
    too_long = run(registry, VLLM_KEY, API_KEY="k" * 4097)
    assert refused(too_long) == (
        False,
        1,
        "API_KEY is longer than 4096 characters; refusing to boot",
    )
    # A key file is read no further than one character past the cap (the helpers: 15 KB).
    from_file = run(registry, VLLM_KEY, API_KEY_FILE="/profilegen/helpers.sh")
    assert from_file.message == (
        "the key in API_KEY_FILE is longer than 4096 characters; refusing to boot"
    )


# -- the registry's defaults -------------------------------------------------------------------

ENGINE = "registry/engines/vllm-test.yaml"
PROFILE = "registry/profiles/tiny-chat.yaml"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_base(tmp_path_factory.mktemp("boot-limits") / "base")


def _copy(base: Path, dest: Path) -> Path:
    subprocess.run(["cp", "-a", str(base), str(dest)], check=True)
    return dest


@pytest.mark.parametrize(
    ("default", "kind", "problem"),
    [
        ("'1e39'", "float", f"{FINITE} '1e39'"),
        ("'1e-400'", "float", f"{TINY} '1e-400'"),
        ("inf", "float", "must be a number, got 'inf'"),
        ("'99999999999999999999'", "int", f"{FINITE} '99999999999999999999'"),
        ("'2.5'", "int", "must be a whole number, got '2.5'"),
        ("maybe", "bool", "must be true or false (1/0), got 'maybe'"),
    ],
)
def test_check_refuses_an_engine_default_no_boot_takes(
    base: Path, tmp_path: Path, default: str, kind: str, problem: str
) -> None:
    root = _copy(base, tmp_path / "repo")
    line = f"  - {{env: TEMP_X, default: {default}, type: {kind}, help: a sampler knob}}"
    edit(ENGINE, "help: host model folder}", f"help: host model folder}}\n{line}")(root)
    done = invoke_in(root, "check")
    assert done.code == 1
    assert (
        f"{ENGINE}:19: error: [schema] tunables.5.default: a {kind} tunable's default {problem}"
    ) in done.out.splitlines(), done.text


def test_check_refuses_a_profile_default_no_boot_takes(base: Path, tmp_path: Path) -> None:
    root = _copy(base, tmp_path / "repo")
    own = "tunables:\n  TEMP_X: {default: '1e39', type: float, help: a sampler knob}"
    edit(PROFILE, "bind_host: 127.0.0.1", f"bind_host: 127.0.0.1\n{own}")(root)
    done = invoke_in(root, "check")
    assert done.code == 1
    assert (
        f"{PROFILE}:22: error: [schema] tunables.TEMP_X.default: a float tunable's default "
        f"{FINITE} '1e39'"
    ) in done.out.splitlines(), done.text
