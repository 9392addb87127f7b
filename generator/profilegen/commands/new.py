"""`profilegen new`: start a profile from a sibling, or a model's first profile on a rig."""

from __future__ import annotations

import json

import click

from ..authoring.first_profile import FirstOptions
from ..authoring.new_profile import NewOptions, create_profile, run_new
from ..errors import EXIT_OK, UsageError
from ..model.vocabulary import aliases_help, find_setting
from .common import Command, Context, format_option, pass_context


def canonical_sets(sets: tuple[str, ...]) -> tuple[str, ...]:
    """`--set` items with a setting's alias (KV_CACHE_DTYPE, kv-dtype) spelt as its path."""
    out = []
    for item in sets:
        key, sep, value = item.partition("=")
        found = find_setting(key) if sep else None
        out.append(f"{found.path}={value}" if found is not None else item)
    return tuple(out)


@click.command(
    "new",
    cls=Command,
    exit_1="the new profile does not pass the check (nothing is written)",
    epilog="\b\nSettings and their aliases (--set takes any of them):\n" + aliases_help(),
)
@click.argument("new_id")
@click.option("--from", "sibling", help="Profile to extend (id or upstream key).")
@click.option("--model", help="A model with no profile yet: start its first profile.")
@click.option("--rig", help="With --model: the rig the first profile is sized for.")
@click.option(
    "--engine", help="With --model: the engine (default: the one most profiles of its kind run)."
)
@click.option(
    "--weights", help="With --model: the weights variant (needed when there are several)."
)
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a dotted key, value read as YAML (envelope.max_model_len=131072); an "
    "envelope setting may go by an alias (MAX_MODEL_LEN=131072).",
)
@format_option()
@pass_context
def command(
    obj: Context,
    new_id: str,
    sibling: str | None,
    model: str | None,
    rig: str | None,
    engine: str | None,
    weights: str | None,
    sets: tuple[str, ...],
    fmt: str,
) -> int:
    """Start profile NEW_ID: extending a sibling (--from), or a model's first (--model, --rig).

    A first profile gets the envelope `fit` proposes (every card, the most compact KV dtype
    the GPU takes, the largest context that fits), status incubating, and TODO placeholders
    that `check` refuses until they are filled.
    """
    if (sibling is None) == (model is None):
        raise UsageError("give either --from SIBLING or --model MODEL --rig RIG")
    if model is not None and rig is None:
        raise UsageError("--model needs --rig: the rig the profile is sized for")
    if sibling is not None and (rig or engine or weights):
        raise UsageError("--rig, --engine and --weights go with --model; with --from use --set")
    first = FirstOptions(model, rig, engine, weights) if model is not None and rig else None
    opts = NewOptions(new_id, sibling, canonical_sets(sets), first)
    if fmt == "text":
        return run_new(obj.root, opts)
    made = create_profile(obj.root, opts)
    doc = {
        "profile": made.profile,
        "file": made.file,
        "lines": made.lines,
        "how": made.how,
        "reasons": list(made.reasons),
        "findings": [f.as_json() for f in made.findings],
    }
    click.echo(json.dumps(doc, indent=2))
    return EXIT_OK
