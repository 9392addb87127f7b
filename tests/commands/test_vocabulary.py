"""One vocabulary: every command spells a concept the same way, the reference page is the
commands' own, and every spelling of an envelope setting is a declared alias of one setting."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path

import click
import pytest

from profilegen.cli import cli
from profilegen.commands.cli_doc import PAGE, cli_reference, walk
from profilegen.commands.common import FORMATS, Command
from profilegen.fit.options import WHAT_IF_SETTINGS, FitOptions
from profilegen.model.profile import Envelope
from profilegen.model.vocabulary import SETTINGS, find_setting, spellings
from profilegen.registry import open_registry
from tests.support.cli import invoke_in

ROOT = Path(__file__).resolve().parents[2]
# Commands that reach the Hub, a patch host or the package index: each takes --offline.
# (`bench` measures a server and needs one; `verify` never leaves the disk.)
NETWORK = {
    "profilegen check",
    "profilegen engine facts",
    "profilegen fetch",
    "profilegen lock",
    "profilegen model add",
    "profilegen rehearse",
    "profilegen render",
    "profilegen upgrade",
}
# Concepts with one spelling: the first; another may only be an alias on the same option.
SYNONYMS = [
    ("--revision", "--rev", "--ref"),
    ("--model-dir", "--models-dir", "--model-path", "--models"),
    ("--output", "--out", "--output-dir", "--outdir"),
    ("--format", "--fmt", "--output-format"),
    ("--offline", "--no-network", "--local"),
    ("--dry-run", "--dryrun", "--no-write"),
    ("--profile", "--profile-id"),
    ("--engine", "--engine-id"),
    ("--timeout", "--deadline"),
]


def _commands() -> list[tuple[str, click.Command]]:
    ctx = click.Context(cli, info_name="profilegen")
    return [(sub.command_path, sub.command) for sub, _cmd in walk(cli, ctx)]


COMMANDS = _commands()


def _options(command: click.Command) -> list[click.Option]:
    return [p for p in command.params if isinstance(p, click.Option)]


def test_docs_cli_md_is_the_commands_own_reference() -> None:
    page = (ROOT / PAGE).read_text(encoding="utf-8")
    assert page == cli_reference(cli), f"{PAGE} is out of date: run `make cli-doc`"


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[p for p, _c in COMMANDS])
def test_every_command_prints_text_and_json_and_says_when_it_exits_1(
    path: str, command: click.Command
) -> None:
    formats = [p for p in _options(command) if p.name == "fmt"]
    assert len(formats) == 1, f"{path} has no --format"
    (option,) = formats
    assert option.opts == ["--format"]
    assert isinstance(option.type, click.Choice)
    choices = set(option.type.choices)
    assert {"text", "json"} <= choices <= set(FORMATS), choices
    assert isinstance(command, Command) and command.exit_1, f"{path}: say when it exits 1"


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[p for p, _c in COMMANDS])
def test_offline_wherever_the_network_can_be_reached(path: str, command: click.Command) -> None:
    offline = [p for p in _options(command) if "--offline" in p.opts]
    assert bool(offline) == (path in NETWORK), path
    for option in offline:
        assert option.name == "offline" and option.is_flag
        assert "(also HF_HUB_OFFLINE=1)" in (option.help or "")


def test_a_concept_has_one_spelling_in_every_command() -> None:
    wrong = []
    for path, command in COMMANDS:
        for option in _options(command):
            names = set(option.opts) | set(option.secondary_opts)
            for canonical, *others in SYNONYMS:
                for other in set(others) & names:
                    if canonical not in names:
                        wrong.append(f"{path}: {other} where every command says {canonical}")
    assert not wrong, "\n".join(wrong)


def _normal(name: str) -> str:
    return re.sub(r"[-_]", "", name.lstrip("-").lower()).rstrip("s")


def test_no_two_option_names_differ_only_by_plural_or_punctuation() -> None:
    spelt: dict[str, set[str]] = {}
    for _path, command in COMMANDS:
        for option in _options(command):
            for name in option.opts:
                if name.startswith("--"):
                    spelt.setdefault(_normal(name), set()).add(name)
    clashes = {k: v for k, v in spelt.items() if len(v) > 1}
    assert not clashes, clashes


def test_the_registry_root_is_one_global_option() -> None:
    assert [p.opts for p in cli.params if p.name == "root"] == [["--root"]]
    for path, command in COMMANDS:
        for option in _options(command):
            assert not {"--root", "--registry"} & set(option.opts), path


def test_every_envelope_field_is_a_setting_and_every_spelling_names_one() -> None:
    paths = [s.path for s in SETTINGS]
    assert paths[:-1] == [f"envelope.{name}" for name in Envelope.model_fields]
    assert len(set(paths)) == len(paths)
    named = [a.lstrip("-") for s in SETTINGS for a in s.aliases]
    assert len(named) == len(set(named)), "an alias names two settings"
    assert not set(named) & set(paths)
    assert len(spellings()) == len(paths) + len(named)


def test_fit_varies_settings_and_its_options_are_their_declared_aliases() -> None:
    option_fields = {f.name for f in fields(FitOptions)}
    assert set(WHAT_IF_SETTINGS) <= {s.path for s in SETTINGS}
    assert set(WHAT_IF_SETTINGS.values()) <= option_fields
    fit = dict(COMMANDS)["profilegen fit"]
    for option in _options(fit):
        found = find_setting(option.opts[0])
        if found is None:
            continue
        assert option.opts[0] == f"--{found.option}", option.opts
        assert WHAT_IF_SETTINGS[found.path] == option.name, option.opts
        assert (option.help or "").startswith(found.path), option.opts


def test_every_engine_variable_of_a_setting_is_a_declared_alias() -> None:
    registry = open_registry(ROOT)
    undeclared = []
    for engine in registry.engines.values():
        for tunable in engine.tunables:
            for s in SETTINGS:
                if tunable.field in {f"profile.{f}" for f in s.fields} and tunable.env not in s.env:
                    undeclared.append(f"{engine.id}: {tunable.env} reads {s.path}")
    assert not undeclared, "\n".join(undeclared)


def _explained(profile: str, *env: str) -> dict[str, object]:
    run = invoke_in(
        ROOT, "explain", profile, *[w for e in env for w in ("-e", e)], "--format", "json"
    )
    assert run.code == 0, run.text
    data: dict[str, object] = json.loads(run.out)
    return data


def test_explain_sets_the_variable_the_engine_reads_a_setting_from() -> None:
    vllm = "qwen38-27b-dual-fast"
    canonical = _explained(vllm, "envelope.kv_cache_dtype=fp8_e4m3")
    assert canonical["scenario"] == {"KV_CACHE_DTYPE": "fp8_e4m3"}
    for alias in ("KV_CACHE_DTYPE", "KV_TYPE", "kv-dtype", "--kv-dtype"):
        assert _explained(vllm, f"{alias}=fp8_e4m3") == canonical, alias
    llamacpp = _explained("qwen38-27b-single-iq4xs", "envelope.max_model_len=65536")
    assert llamacpp["scenario"] == {"CTX_SIZE": "65536"}
    assert _explained("qwen38-27b-single-iq4xs", "MAX_MODEL_LEN=65536") == llamacpp


def test_explain_refuses_a_setting_no_variable_carries() -> None:
    run = invoke_in(ROOT, "explain", "qwen38-27b-dual-fast", "-e", "envelope.offload=uva")
    assert (run.code, run.err) == (
        2,
        "error: -e envelope.offload: vllm-v0.27.1 reads envelope.offload from no variable "
        "(the profile fixes it)\n",
    )
