"""Pieces every dialect shares: extra arguments and the sampler as one JSON document."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...model.common import is_option
from ..command import Arg

if TYPE_CHECKING:
    from ..context import Context

# Sampler fields, in the order the JSON document lists them.
SAMPLER = (
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "presence_penalty",
    "repetition_penalty",
)


def extra_args(ctx: Context) -> list[Arg]:
    """serve.extra_args (words not modelled as facts), grouped flag by flag."""
    return group_words(ctx.profile.serve.extra_args)


def spec_extra_args(ctx: Context) -> list[Arg]:
    """The drafter's extra words, passed only while drafting."""
    use = ctx.profile.drafter
    return group_words(use.extra_args) if use is not None else []


def group_words(words: list[str]) -> list[Arg]:
    args: list[Arg] = []
    for word in words:
        if is_option(word):
            args.append(Arg(word, (), "extra"))
        elif not args:
            args.append(Arg(None, (word,), "extra"))
        else:
            last = args[-1]
            args[-1] = Arg(last.flag, (*last.values, word), "extra")
    return args


def sampler_json(ctx: Context) -> dict[str, Any] | None:
    sampler = ctx.profile.serve.sampler
    if sampler is None:
        return None
    out: dict[str, Any] = {}
    for key in SAMPLER:
        value = getattr(sampler, key)
        if value is not None:
            out[key] = ctx.slot(f"serve.sampler.{key}", value)
    return out
