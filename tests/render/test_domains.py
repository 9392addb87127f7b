"""One domain per setting: what the schema (so `check`) accepts boots, and only that.

The boot-time checks of the entrypoint come from the same field constraints as the schema;
these properties run the real entrypoint (explain's sandbox, stub engines) on generated
values: registry defaults the schema accepts must start the engine, host overrides the
engine takes must not be refused, and overrides outside the domain must be refused.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from profilegen.explain.core import Scenario, explain
from profilegen.model import Profile
from profilegen.model.profile import Sampler
from profilegen.registry import Registry
from tests.support.cli import Invoke

from .conftest import snapshot

VLLM = "qwen38-27b-dual-fast"
LLAMA = "qwen38-27b-single-iq4xs"
EXAMPLES = int(os.environ.get("PROFILEGEN_PROPERTY_EXAMPLES", "10"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# Sampler values inside the schema's bounds, boundaries and tiny exponents included.
SAMPLER = st.fixed_dictionaries(
    {},
    optional={
        "temperature": st.floats(0, 5, allow_nan=False) | st.just(1e-05),
        "top_p": st.floats(1e-6, 1, allow_nan=False) | st.just(1.0),
        "top_k": st.integers(-1, 500),
        "min_p": st.floats(0, 1, allow_nan=False) | st.just(1e-05),
        "presence_penalty": st.floats(-2, 2, allow_nan=False),
        "repetition_penalty": st.floats(0.01, 3, allow_nan=False),
    },
).filter(bool)


def _with(registry: Registry, profile: Profile) -> Registry:
    return dataclasses.replace(registry, profiles={**registry.profiles, profile.id: profile})


def _boot(registry: Registry, profile: Profile, env: dict[str, str] | None = None) -> Any:
    return explain(registry, profile, Scenario(tuple((env or {}).items())))


@pytest.mark.parametrize("profile_id", [VLLM, LLAMA])
@SETTINGS
@given(values=SAMPLER)
@example(values={"top_k": -1, "presence_penalty": -1.5, "min_p": 1e-05, "temperature": 0.0})
def test_every_sampler_the_schema_accepts_boots(
    repo_registry: Registry, profile_id: str, values: dict[str, Any]
) -> None:
    base = repo_registry.profiles[profile_id]
    sampler = Sampler.model_validate({**(base.serve.sampler or Sampler(top_k=20)).model_dump(
        exclude_none=True), **values})  # fmt: skip
    serve = base.serve.model_copy(update={"sampler": sampler, "sampler_thinking": None})
    profile = Profile.model_validate(base.model_copy(update={"serve": serve}).model_dump())
    run = _boot(_with(repo_registry, profile), profile)
    assert run.exit_code is None, run.message


OVERRIDES = [
    ("GPU_MEMORY_UTILIZATION", ".5"),
    ("GPU_MEMORY_UTILIZATION", "5e-1"),
    ("PRESENCE_PENALTY", "-0.5"),
    ("TOP_K", "-1"),
    ("MIN_P", "1e-05"),
    ("TOP_P", "1"),
    ("TEMP", "0"),
    ("KV_CACHE_DTYPE", "bfloat16"),
    ("MAX_NUM_SEQS", "4"),
]


@pytest.mark.parametrize(("name", "value"), OVERRIDES)
def test_overrides_the_engine_takes_are_not_refused(
    repo_registry: Registry, name: str, value: str
) -> None:
    profile = repo_registry.profiles[VLLM]
    run = _boot(repo_registry, profile, {name: value})
    assert run.exit_code is None, run.message


@pytest.mark.parametrize(
    ("profile_id", "name", "value", "message"),
    [
        (VLLM, "TP", "0", "TP must be > 0, got '0'"),
        (
            VLLM,
            "GPU_MEMORY_UTILIZATION",
            "1.5",
            "GPU_MEMORY_UTILIZATION must be > 0 and <= 1, got '1.5'",
        ),
        (VLLM, "TOP_P", "0", "TOP_P must be > 0 and <= 1, got '0'"),
        (VLLM, "TOP_K", "-2", "TOP_K must be >= -1, got '-2'"),
        (VLLM, "KV_CACHE_DTYPE", "fp4", "KV_CACHE_DTYPE must be one of: auto bfloat16"),
        (LLAMA, "KV_TYPE", "bogus", "KV_TYPE must be one of: bf16 f16 f32 iq4_nl q4_0"),
        (LLAMA, "CTX_SIZE", "-5", "CTX_SIZE must be > 0, got '-5'"),
    ],
)
def test_overrides_outside_the_domain_are_refused(
    repo_registry: Registry, profile_id: str, name: str, value: str, message: str
) -> None:
    run = _boot(repo_registry, repo_registry.profiles[profile_id], {name: value})
    assert run.exit_code == 1
    assert message in (run.message or "")


@pytest.mark.parametrize("bad", [float("inf"), float("nan")])
def test_the_schema_refuses_what_no_engine_takes(bad: float) -> None:
    with pytest.raises(ValidationError):
        Sampler(temperature=bad)


def test_render_refuses_what_check_rejects(repo: Path, invoke: Invoke, tmp_path: Path) -> None:
    path = repo / "registry" / "profiles" / f"{VLLM}.yaml"
    path.write_text(path.read_text().replace("  tp: 2\n", "  tp: 5\n"))
    before = snapshot(repo / "compose")
    message = f"registry/profiles/{VLLM}.yaml:16: error: [hw-tp] TP 5 needs 5 GPUs"
    for args in (
        ("render", VLLM),
        ("render", VLLM, "-o", str(tmp_path / "out")),
        ("render", "--all"),
    ):
        run = invoke(*args)
        assert (run.code, run.out) == (1, ""), run.text
        assert message in run.err
    assert not (tmp_path / "out").exists()
    assert snapshot(repo / "compose") == before
