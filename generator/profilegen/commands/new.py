"""`profilegen new`: start a profile from a sibling, or a model's first profile on a rig."""

from __future__ import annotations

import click

from ..authoring.first_profile import FirstOptions
from ..authoring.new_profile import NewOptions, run_new
from ..errors import UsageError
from .common import Context, pass_context


@click.command("new")
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
    help="Override a dotted key, value read as YAML (envelope.max_model_len=131072).",
)
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
    return run_new(obj.root, NewOptions(new_id, sibling, sets, first))
