"""Property tests: any string the schema admits arrives unchanged and never escapes its slot."""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from profilegen.model import Patch, Profile, Rig
from profilegen.model.common import TEXT_PATTERN
from profilegen.model.profile import Serve
from profilegen.registry import Registry
from profilegen.render import Rendered, render_profile

from .conftest import SEED, BootResult, Bundle, boot_rendered, compose_service

TEXT_RE = re.compile(TEXT_PATTERN)
SERVED_NAME = Serve.model_json_schema()["properties"]["served_names"]["items"]["pattern"]
# Set while compose-go reads the file: an interpolation would show up as this value.
COMPOSE_ENV = {"PG_CANARY": "INJECTED", "HOME": "/home/pg"}
# Fragments that matter to YAML, Compose, Jinja, bash or JSON, mixed into random text.
NASTY = [
    "$", "$$", "${", "}", "${PG_CANARY}", "$PG_CANARY", "${PG_CANARY:-x}", "$(", "`",
    "$(touch canary)", "`touch canary`", "'; touch canary; '", '"; touch canary; "',
    "\n touch canary\n", "{{", "}}", "{%", "%}", "{#", "#}", "{%#", "#%}",
    "\n", "\r", "\r\n", "\t", "\x85", "\u2028", "\u2029", "\ufeff", "\ufffe", "\U0001f600",
    "'", '"', "\\", "\\n", "#", " #", ": ", "- ", "? ", "&a", "*a", "!!str", "|", ">",
    "%", "@", ";", " ", "  ", "null", "true", "~", "0x1F", "1e3", "---", "...",
    "\x00", "\x1b", "\x7f",  # refused by the schema: the filter must drop them
]  # fmt: skip
# Pydantic refuses lone surrogates in strict str fields, so they are not admitted text.
CHARS = st.characters(exclude_categories=("Cs",))
TEXT = st.one_of(
    st.text(CHARS, max_size=30),
    st.lists(st.one_of(st.sampled_from(NASTY), CHARS), max_size=10).map("".join),
).filter(lambda s: TEXT_RE.fullmatch(s) is not None)
# Each example renders, parses with compose-go and often boots: a handful per run keeps the
# suite quick; PROFILEGEN_PROPERTY_EXAMPLES=200 runs a thorough pass.
EXAMPLES = int(os.environ.get("PROFILEGEN_PROPERTY_EXAMPLES", "10"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def with_profile(registry: Registry, profile: Profile, **tables: dict[str, Any]) -> Registry:
    """A registry whose profile (and any other table) is replaced, validated like a file."""
    Profile.model_validate(profile.model_dump())
    return dataclasses.replace(
        registry, profiles={**registry.profiles, profile.id: profile}, **tables
    )


def render(registry: Registry, profile: Profile, **tables: dict[str, Any]) -> Rendered:
    return render_profile(with_profile(registry, profile, **tables), profile)


def without(mapping: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k not in keys}


@pytest.fixture(scope="module")
def baseline(repo_registry: Registry) -> dict[str, Any]:
    profile = repo_registry.profiles[SEED]
    return compose_service(render(repo_registry, profile).compose, COMPOSE_ENV)


# --------------------------------------------------------------------------- (a) YAML values


@SETTINGS
@given(values=st.lists(TEXT, min_size=1, max_size=6), title=TEXT)
@example(values=["${PG_CANARY}", "$$", "a\nb: c", "\U0001f600\x85"], title="x\n  injected: 1")
def test_env_and_title_arrive_unchanged(
    repo_registry: Registry, baseline: dict[str, Any], values: list[str], title: str
) -> None:
    seed = repo_registry.profiles[SEED]
    added = {f"PG_PROP_{i}": value for i, value in enumerate(values)}
    profile = seed.model_copy(update={"env": {**seed.env, **added}, "title": title})
    service = compose_service(render(repo_registry, profile).compose, COMPOSE_ENV)
    assert set(service) == set(baseline)
    assert service["environment"] == {**baseline["environment"], **added}
    assert service["labels"] == {**baseline["labels"], "io.profilegen.title": title}
    assert without(service, "environment", "labels") == without(baseline, "environment", "labels")


# --------------------------------------------------------------------------- (b) engine argv


def _boot(registry: Registry, profile: Profile, workdir: Path) -> BootResult:
    """The profile rendered into a bundle under `workdir`, booted with a package there."""
    registry = with_profile(registry, profile)
    rendered = render_profile(registry, profile)
    return boot_rendered(registry, profile.id, rendered, workdir, workdir / "pkg", COMPOSE_ENV)


@pytest.fixture(scope="module")
def bare_seed(test_registry: Registry) -> Profile:
    """The seed without patches: the argv path alone, fast enough for many examples."""
    return test_registry.profiles[SEED].model_copy(update={"patches": []})


@pytest.fixture(scope="module")
def bare_argv(test_registry: Registry, bare_seed: Profile) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        result = _boot(test_registry, bare_seed, Path(tmp))
    assert result.returncode == 0 and result.argv is not None, result.stderr
    return result.argv


@SETTINGS
@given(args=st.lists(TEXT, max_size=5), served=st.from_regex(SERVED_NAME, fullmatch=True))
@example(args=["$(touch canary)", "`touch canary`", "'; touch canary; '", "${PG_CANARY}"],
         served="a")  # fmt: skip
@example(args=["a \n b", "\n", "\x85\u2028", "", "--host", "\\", "\t"], served="x:y/z")
@example(
    args=["x\n\ty", "a\n   \nb", "a\n# not a comment", "trailing \n", "\x85\U0001f600"], served="0"
)
def test_entrypoint_strings_arrive_unchanged(
    test_registry: Registry, bare_seed: Profile, bare_argv: list[str], args: list[str],
    served: str,
) -> None:  # fmt: skip
    serve = bare_seed.serve.model_copy(update={"extra_args": args, "served_names": [served]})
    profile = bare_seed.model_copy(update={"serve": serve})
    with tempfile.TemporaryDirectory() as tmp:
        result = _boot(test_registry, profile, Path(tmp))
        assert not (Path(tmp) / "canary").exists()
    assert result.returncode == 0, result.stderr
    want = list(bare_argv)
    want[want.index("--served-model-name") + 1] = served
    host = want.index("--host")
    want[host:host] = args
    assert result.argv == want


# --------------------------------------------------------------------------- (c) comments


@pytest.fixture(scope="module")
def booted_seed(seed: Bundle, tmp_path_factory: pytest.TempPathFactory) -> BootResult:
    """A package that has been through one boot, so later boots only re-check it."""
    result = seed.boot(tmp_path_factory.mktemp("booted"))
    assert result.returncode == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def comment_baseline(test_registry: Registry) -> tuple[Rendered, dict[str, Any]]:
    rendered = render(test_registry, test_registry.profiles[SEED])
    return rendered, compose_service(rendered.compose, COMPOSE_ENV)


def code_lines(script: str) -> list[str]:
    return [line for line in script.splitlines() if not line.lstrip().startswith("#")]


@settings(SETTINGS, max_examples=max(1, EXAMPLES * 3 // 4))
@given(
    caveats=st.lists(TEXT, max_size=3),
    capability=TEXT,
    drop_when=TEXT,
    reason=TEXT,
    mount_help=TEXT,
)
@example(
    caveats=["a\nb: 1", "\n  - x", "\x85\u2028"],
    capability="x\nexit 3\n",
    drop_when="\u2029touch canary",
    reason="y\u2028pg_die 5 z",
    mount_help="h\nPORT=9999\nSPEC=off",
)
def test_comments_cannot_break_out(
    test_registry: Registry,
    booted_seed: BootResult,
    comment_baseline: tuple[Rendered, dict[str, Any]],
    caveats: list[str],
    capability: str,
    drop_when: str,
    reason: str,
    mount_help: str,
) -> None:
    base_rendered, base_service = comment_baseline
    original = test_registry.profiles[SEED]
    mounts = dict(original.mounts)
    mounts["ninja"] = mounts["ninja"].model_copy(update={"help": mount_help})
    profile = original.model_copy(update={"caveats": caveats, "mounts": mounts})
    patch = test_registry.patches["vllm-dflash15"].model_copy(
        update={"capability": capability, "drop_when": drop_when}
    )
    Patch.model_validate(patch.model_dump())
    rig = test_registry.rigs[original.rig]
    rig = rig.model_copy(update={"policy": rig.policy.model_copy(update={"reason": reason})})
    Rig.model_validate(rig.model_dump())
    rendered = render(
        test_registry,
        profile,
        patches={**test_registry.patches, patch.id: patch},
        rigs={**test_registry.rigs, rig.id: rig},
    )
    # The compose (header comments included) parses to the same service; the .env.example,
    # used as .env, changes nothing either.
    service = compose_service(rendered.compose, COMPOSE_ENV, env_file=rendered.env_example)
    assert service == base_service
    assert code_lines(rendered.script) == code_lines(base_rendered.script)
    assert rendered.env_example.decode().count("\n") == base_rendered.env_example.decode().count(
        "\n"
    )
    registry = with_profile(
        test_registry,
        profile,
        patches={**test_registry.patches, patch.id: patch},
        rigs={**test_registry.rigs, rig.id: rig},
    )
    result = boot_rendered(registry, profile.id, rendered, booted_seed.workdir, booted_seed.pkg)
    assert result.returncode == 0, result.stderr
    assert result.argv == booted_seed.argv
    assert not (booted_seed.workdir / "canary").exists()
