"""Shared building blocks of the registry models: strict base, ids, sizes, free text."""

from __future__ import annotations

import re
from enum import Enum
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from ..families import kinds
from ..units import UNIT_BYTES

ID_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,79}$"
ENV_NAME_PATTERN = r"^[A-Z_][A-Z0-9_]{0,63}$"
# Free text may hold anything a person types, but no control characters other than
# tab and newline: YAML cannot carry most of them and terminals misrender them.
TEXT_PATTERN = r"^[^\x00-\x08\x0b-\x1f\x7f]*$"

# A negative number (`--seed -1`) is an option's value, not an option.
_NEGATIVE_NUMBER = re.compile(r"-[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def is_option(word: str) -> bool:
    """Whether a word of an engine's command line names an option (`-c`, `--ctx-size`)."""
    return word.startswith("-") and len(word) > 1 and not _NEGATIVE_NUMBER.fullmatch(word)


Id = Annotated[str, StringConstraints(pattern=ID_PATTERN)]
EnvName = Annotated[str, StringConstraints(pattern=ENV_NAME_PATTERN)]
Text = Annotated[str, StringConstraints(pattern=TEXT_PATTERN, max_length=4000)]


def _no_secret_reference(name: str) -> str:
    # LiteLLM reads a config string that starts with `os.environ/` as the value of that
    # variable: a served name that the gateway publishes would publish a secret.
    if "os.environ" in name.lower():
        raise ValueError(
            f"{name!r} names an environment variable the way LiteLLM reads one "
            "(os.environ/...): the gateway would publish its value"
        )
    return name


# What an engine answers to (and the gateway routes by): it reaches clients as is.
ServedName = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$"),
    AfterValidator(_no_secret_reference),
]
Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
GitCommit = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{40}$")]
PositiveInt = Annotated[int, Field(gt=0)]
NonNegativeInt = Annotated[int, Field(ge=0)]
Fraction = Annotated[float, Field(gt=0, le=1)]
# An engine word: a dtype, a backend, a mode.
Word = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.+:-]{1,64}$")]


class Strict(BaseModel):
    """Every registry model: unknown keys are errors, values are not coerced."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        strict=True,
        regex_engine="python-re",
        defer_build=True,
        allow_inf_nan=False,
    )


# Defaults land inside `${VAR:-default}`: only characters Compose reads literally there.
COMPOSE_LITERAL = r"^[A-Za-z0-9_.:/@+,~=-]*$"
ComposeLiteral = Annotated[str, StringConstraints(pattern=COMPOSE_LITERAL)]


class EnvFrom(Strict):
    """A value the host may set: the first of `host` that is set and not empty, else `default`.

    Rendered as nested Compose defaults: `{host: [HF_HUB_OFFLINE, OFFLINE], default: "0"}` is
    `${HF_HUB_OFFLINE:-${OFFLINE:-0}}`.
    """

    host: list[EnvName] = Field(min_length=1, max_length=4)
    default: ComposeLiteral = ""


# A container variable: a literal value, the host's value passed through (null), or EnvFrom.
EnvSpec = Text | EnvFrom | None


class SizeUnit(str, Enum):
    B = "B"
    KB = "KB"
    MB = "MB"
    GB = "GB"
    TB = "TB"
    KiB = "KiB"
    MiB = "MiB"
    GiB = "GiB"
    TiB = "TiB"


class Size(Strict):
    """A size with an explicit unit: catalogues mix GB (1e9) and GiB (2**30)."""

    value: Annotated[float, Field(gt=0)]
    unit: Literal["B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB"]

    @property
    def bytes(self) -> int:
        return round(self.value * UNIT_BYTES[self.unit])

    def __str__(self) -> str:
        return f"{self.value:g} {self.unit}"


KvDtype = Literal["auto", "bfloat16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2"]
GgufCacheType = Literal["f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"]
Status = Literal["incubating", "experimental", "caveats", "production", "retired"]
STATUS_LADDER: tuple[str, ...] = ("incubating", "experimental", "caveats", "production")


def _engine_kind(value: str) -> str:
    if value not in kinds():
        raise ValueError(f"{value!r} is not an engine family (known: {', '.join(kinds())})")
    return value


# An engine family's kind (families/): vllm, llama.cpp, sglang, or one registered beside them.
EngineKind = Annotated[
    str, AfterValidator(_engine_kind), Field(json_schema_extra={"enum": list(kinds())})
]


class Requirements(Strict):
    """What must hold in a profile that uses a drafter or a patch (empty = anything)."""

    kv_cache_dtypes: list[str] = Field(default_factory=list)
    attention_backends: list[str] = Field(default_factory=list)
    engines: list[EngineKind] = Field(default_factory=list)
    # e.g. the DFlash2 lookup path needs vLLM's synchronous scheduler.
    async_scheduling: bool | None = None
    reason: str | None = None
