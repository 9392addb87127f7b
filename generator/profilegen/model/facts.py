"""An engine's facts: what its real release accepts (flags, values, JSON keys, variables)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, model_validator

from .common import Id, Sha256, Strict, Text

Flag = Annotated[str, StringConstraints(pattern=r"^-{1,2}[A-Za-z0-9][A-Za-z0-9_.-]*$")]
Word = Annotated[str, StringConstraints(max_length=200, pattern=r"^[^\x00-\x1f]*$")]
# How many words follow a flag: 0, 1 or 2, or argparse's ? (0 or 1), + (1 or more), * (any).
Arity = Literal["0", "1", "2", "?", "+", "*"]


class FlagFacts(Strict):
    """One option as the release's parser takes it."""

    arity: Arity
    # The release's own converter (int, float, str, a parser function's name): words.
    type: Word | None = None
    choices: list[Word] | None = None
    # The option strings that switch it off (`--no-enable-prefix-caching`), as accepted by
    # the parser, whether or not it lists them among its option strings.
    negation: list[Flag] = Field(default_factory=list)
    # Its default as the parser reports it (what an upgrade may move).
    default: Any = None
    deprecated: bool = False
    # What the release says replaces a deprecated flag (`--load-mode`).
    replaced_by: Word | None = None
    # llama.cpp: the environment variable that sets it as well.
    env: Word | None = None


class JsonFacts(Strict):
    """The keys of a JSON-valued flag (a config dataclass) and the allowed values of some."""

    keys: list[Word] = Field(default_factory=list)
    values: dict[Word, list[Word]] = Field(default_factory=dict)
    # Any key goes (`--default-chat-template-kwargs`: the chat template decides).
    free: bool = False


class ParserFacts(Strict):
    """How the parser reads a command line beyond its option strings."""

    positionals: list[Word] = Field(default_factory=list)
    # `--max_model_len` read as `--max-model-len`.
    underscores: bool = False
    # argparse's unique-prefix abbreviations (a typo may still be accepted: never relied on).
    abbreviations: bool = False
    # What a flag given twice means: the last one wins, or the values add up.
    repeat: Literal["last-wins"] = "last-wins"


class Provenance(Strict):
    """Where the facts were read: the release, its artifact and how."""

    version: Word
    # The artifact's file name and sha256 (a wheel, or a source archive of the nearest build).
    artifact: Word
    sha256: Sha256
    # `pip download` requirement that fetched it, and what was read in it.
    requirement: Word
    method: Text
    command: Word
    # A build other than the pinned one, said so (llama.cpp: the nearest build with source).
    nearest: Text | None = None


class EngineFacts(Strict):
    """A facts file (`registry/engines/facts/<engine-id>.json`): facts, or why there are none."""

    schema_version: Literal[1] = Field(1, alias="schema")
    engine: Id
    # No public release to read facts from: the reason, said instead of passing silently.
    none: Text | None = None
    provenance: Provenance | None = None
    parser: ParserFacts = ParserFacts()
    flags: dict[Flag, FlagFacts] = Field(default_factory=dict)
    aliases: dict[Flag, Flag] = Field(default_factory=dict)
    json_flags: dict[Flag, JsonFacts] = Field(default_factory=dict, alias="json")
    env: list[Word] = Field(default_factory=list)

    model_config = {**Strict.model_config, "populate_by_name": True}

    @model_validator(mode="after")
    def _facts_or_reason(self) -> EngineFacts:
        if (self.none is None) == (self.provenance is None):
            raise ValueError("provenance: a facts file has provenance or says why none (none)")
        for alias, target in self.aliases.items():
            if target not in self.flags:
                raise ValueError(f"aliases: {alias} names {target}, which is not a flag")
        return self

    @property
    def known(self) -> bool:
        return self.none is None

    def canonical(self, word: str) -> tuple[str, bool] | None:
        """The flag a command-line option names and whether it negates it (None: unknown)."""
        name = self._spelled(word)
        if name in self.flags:
            return name, False
        if name in self.aliases:
            return self.aliases[name], False
        for flag, facts in self.flags.items():
            if name in facts.negation:
                return flag, True
        return None

    def _spelled(self, word: str) -> str:
        if self.parser.underscores and word.startswith("--"):
            return "--" + word[2:].replace("_", "-")
        return word

    def option_strings(self) -> list[str]:
        """Every string the parser takes as an option (for did-you-mean)."""
        names = set(self.flags) | set(self.aliases)
        for facts in self.flags.values():
            names |= set(facts.negation)
        return sorted(names)
