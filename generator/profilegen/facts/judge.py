"""An engine command line and environment judged against the facts of the engine's release."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from ..cache import ByIdentity, Store, code_digest
from ..errors import Severity, suggest
from ..model.common import is_option
from ..model.facts import EngineFacts, FlagFacts
from ..registry.safejson import load_json
from ..render import Rendered


@dataclass(frozen=True)
class Problem:
    """One thing the release would refuse (or warn about), at a word of the command line."""

    index: int  # the word's position in argv (-1: the environment)
    word: str  # the option as written, or the variable's name
    flag: str | None  # the flag the word names (None: unknown)
    message: str
    hint: str | None = None
    severity: Severity = Severity.ERROR
    key: str | None = None  # a JSON key of the flag's value


def server_words(rendered: Rendered, argv: Sequence[str]) -> tuple[str, ...]:
    """The engine's argv without the words before its options (`serve` of `vllm serve`)."""
    lead = tuple(rendered.command.binary[1:])
    return tuple(argv[len(lead) :] if tuple(argv[: len(lead)]) == lead else argv)


# Judgements already made in this process, by facts and words: a check judges every scenario
# of every profile, most of them with an argv it judged before.
_JUDGED: ByIdentity[tuple[Problem, ...]] = ByIdentity(10_000)


def judge_argv(facts: EngineFacts, argv: Sequence[str]) -> list[Problem]:
    """Everything in `argv` the release's parser would refuse, in order."""
    judged = _JUDGED.get((facts,), lambda: tuple(_judge_argv(facts, argv)), ("argv", *argv))
    return list(judged)


def _judge_argv(facts: EngineFacts, argv: Sequence[str]) -> list[Problem]:
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    positionals = len(facts.parser.positionals)
    i = 0
    while i < len(argv):
        word = argv[i]
        if not is_option(word):
            if positionals > 0:
                positionals -= 1
            else:
                problems.append(_stray(i, argv))
            i += 1
            continue
        at = i
        name, eq, inline = word.partition("=") if word.startswith("--") else (word, "", "")
        base, _, dotted = name.partition(".")
        found = facts.canonical(base)
        if found is None and (whole := _abbreviated(facts, base)) is not None:
            problems.append(_abbreviation(at, word, base, whole))
            found = facts.canonical(whole)
        values, i = _values(argv, i + 1, found, facts, eq == "=")
        if eq:
            values = [inline, *values]
        if found is None:
            problems.append(_unknown(at, word, base, facts))
            continue
        flag, negated = found
        problems += _one(facts, flag, negated, word, at, values, dotted)
        if flag in seen and not dotted:
            problems.append(
                Problem(
                    at,
                    word,
                    flag,
                    f"{word} is passed twice ({seen[flag]} before it): the last one wins",
                    "pass it once",
                )
            )
        seen.setdefault(flag, word)
    return problems


def _values(
    argv: Sequence[str],
    start: int,
    found: tuple[str, bool] | None,
    facts: EngineFacts,
    inline: bool,
) -> tuple[list[str], int]:
    """The words a flag consumes after it, and where the next one starts."""
    # An unknown flag takes the words after it, so that they are not reported again.
    arity: str = "*" if found is None else "0" if found[1] else facts.flags[found[0]].arity
    if inline:
        arity = {"1": "0", "?": "0", "2": "1"}.get(arity, arity)
    limit = {"0": 0, "1": 1, "2": 2, "?": 1}.get(arity, len(argv))
    end = start
    while end < len(argv) and end - start < limit and not is_option(argv[end]):
        end += 1
    return list(argv[start:end]), end


def _one(
    facts: EngineFacts, flag: str, negated: bool, word: str, at: int, values: list[str], dotted: str
) -> list[Problem]:
    spec = facts.flags[flag]
    out: list[Problem] = []
    if spec.deprecated:
        instead = f"use {spec.replaced_by}" if spec.replaced_by else "use what replaced it"
        out.append(
            Problem(
                at, word, flag, f"{word} is deprecated in this release", instead, Severity.WARNING
            )
        )
    want = "0" if negated else spec.arity
    if dotted and flag in facts.json_flags:
        return out + list(_json_key(facts, flag, word, at, dotted.split(".")[0], values[:1]))
    need = {"1": 1, "2": 2, "+": 1}.get(want, 0)
    if len(values) < need:
        return out + [
            Problem(
                at,
                word,
                flag,
                f"{word} expects {_count(want)}, got {len(values)}",
                "give it its value",
            )
        ]
    out += _choices(spec, word, flag, at, values)
    out += _typed(spec, word, flag, at, values)
    if flag in facts.json_flags and values:
        out += list(_json_value(facts, flag, word, at, values[0]))
    return out


def _count(arity: str) -> str:
    return {"1": "one value", "2": "two values", "+": "at least one value"}.get(arity, "no value")


def _choices(spec: FlagFacts, word: str, flag: str, at: int, values: list[str]) -> list[Problem]:
    if spec.choices is None:
        return []
    out = []
    for value in values:
        if value not in spec.choices:
            close = suggest(value, spec.choices)
            out.append(
                Problem(
                    at,
                    word,
                    flag,
                    f"{word} {value!r} is not one of its choices",
                    f"did you mean {close!r}?" if close else "choices: " + ", ".join(spec.choices),
                )
            )
    return out


def _typed(spec: FlagFacts, word: str, flag: str, at: int, values: list[str]) -> list[Problem]:
    convert = {"int": int, "float": float}.get(spec.type or "")
    if convert is None:
        return []
    out = []
    for value in values:
        try:
            convert(value)
        except ValueError:
            out.append(Problem(at, word, flag, f"{word} takes {spec.type} values, not {value!r}"))
    return out


def _json_value(facts: EngineFacts, flag: str, word: str, at: int, value: str) -> Iterator[Problem]:
    try:
        data = load_json(value)
    except ValueError:
        return  # not JSON: a form the flag may take otherwise (a level, a dotted key)
    if not isinstance(data, dict):
        return
    for key, item in data.items():
        yield from _json_key(facts, flag, word, at, str(key), [item])


def _json_key(
    facts: EngineFacts, flag: str, word: str, at: int, key: str, items: Sequence[object]
) -> Iterator[Problem]:
    spec = facts.json_flags[flag]
    if spec.free:
        return
    if key not in spec.keys:
        close = suggest(key, spec.keys)
        yield Problem(
            at,
            word,
            flag,
            f"{flag} has no key {key!r}",
            f"did you mean {close!r}?" if close else None,
            key=key,
        )
        return
    allowed = spec.values.get(key)
    for item in items:
        if allowed is not None and item is not None and str(item) not in allowed:
            close = suggest(str(item), allowed)
            yield Problem(
                at,
                word,
                flag,
                f"{flag} {key} {item!r} is not one this release knows",
                f"did you mean {close!r}?" if close else "known: " + ", ".join(allowed),
                key=key,
            )


def _abbreviated(facts: EngineFacts, base: str) -> str | None:
    """The one long option `base` abbreviates, where the parser takes abbreviations."""
    if not facts.parser.abbreviations or not base.startswith("--"):
        return None
    spelled = "--" + base[2:].replace("_", "-") if facts.parser.underscores else base
    longer = [o for o in facts.option_strings() if o.startswith(spelled) and o.startswith("--")]
    return longer[0] if len(longer) == 1 else None


def _abbreviation(i: int, word: str, base: str, whole: str) -> Problem:
    return Problem(
        i,
        word,
        None,
        f"{base} is not a flag of this release; its parser takes it only as an abbreviation "
        f"of {whole}",
        f"write {whole}",
        Severity.WARNING,
    )


def _unknown(i: int, word: str, base: str, facts: EngineFacts) -> Problem:
    close = suggest(base, facts.option_strings())
    return Problem(
        i,
        word,
        None,
        f"{base} is not a flag this release takes",
        f"did you mean {close}?" if close else "see the engine's facts file",
    )


def _stray(i: int, argv: Sequence[str]) -> Problem:
    before = next((w for w in reversed(argv[:i]) if is_option(w)), None)
    what = f"after {before}, which takes no more values" if before else "before any flag"
    return Problem(i, argv[i], None, f"stray word {argv[i]!r} {what}")


def judge_env(
    facts: EngineFacts, prefixes: tuple[str, ...], names: Mapping[str, str]
) -> list[Problem]:
    """Engine variables (by the family's prefixes) the release does not read: warnings."""
    words = ("env", prefixes, *sorted(names))
    return list(_JUDGED.get((facts,), lambda: tuple(_judge_env(facts, prefixes, names)), words))


def _judge_env(
    facts: EngineFacts, prefixes: tuple[str, ...], names: Mapping[str, str]
) -> list[Problem]:
    known = set(facts.env)
    choices = tuple(sorted(known))
    out = []
    for name in sorted(names):
        if name.startswith(prefixes) and name not in known:
            close = _remembered_suggestion(name, choices)
            out.append(
                Problem(
                    -1,
                    name,
                    None,
                    f"{name} is not a variable this release reads (a patch or a fork may)",
                    f"did you mean {close}?" if close else None,
                    Severity.WARNING,
                )
            )
    return out


def _remembered_suggestion(word: str, choices: tuple[str, ...]) -> str | None:
    """`suggest`, kept between runs: an engine knows hundreds of variables, and weighing a
    name against all of them is a tenth of a second of every check that finds a few."""
    # JSON keeps the words apart whatever they hold; the code's digest, as in every store.
    named = json.dumps([code_digest(), word, choices])
    key = hashlib.sha256(named.encode()).hexdigest()
    found = Store("suggestions").remember(
        key,
        lambda: (suggest(word, choices) or "",),
        valid=lambda v: isinstance(v, tuple) and len(v) == 1 and isinstance(v[0], str),
    )
    return found[0] or None
