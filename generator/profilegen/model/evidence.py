"""Evidence: what was measured on a profile, where, on which machine, by whom, from which source."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints

from .common import Fraction, Id, PositiveInt, Sha256, Strict, Text, Word


def _calendar_date(value: str) -> str:
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value} is not a calendar date (YYYY-MM-DD)") from None
    return value


IsoDate = Annotated[
    str,
    StringConstraints(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"),
    AfterValidator(_calendar_date),
]


class PrefillPoint(Strict):
    context_tokens: PositiveInt
    tokens_per_s: Annotated[float, Field(gt=0)]


class QualityScore(Strict):
    suite: Text
    setting: Text
    pass_at_1: Annotated[int, Field(ge=0)]
    pass_at_3: Annotated[int, Field(ge=0)] | None = None
    total: PositiveInt


class Measured(Strict):
    decode_tps_narrative: Annotated[float, Field(gt=0)] | None = None
    decode_tps_code: Annotated[float, Field(gt=0)] | None = None
    ttft_ms: list[Annotated[float, Field(gt=0)]] = Field(default_factory=list)
    prefill: list[PrefillPoint] = Field(default_factory=list)
    # GPU memory in use, summed over the cards (nvidia-smi), at the moment the source says.
    peak_vram_mib: PositiveInt | None = None
    # What the engine logs at start-up: vLLM "GPU KV cache size: N tokens", SGLang
    # "KV Cache is allocated. #tokens: N".
    kv_pool_tokens: PositiveInt | None = None
    # vLLM "Maximum concurrency for L tokens per request: Xx".
    max_concurrency: Annotated[float, Field(gt=0)] | None = None
    # vLLM "Available KV cache memory: X GiB" (per GPU, the tightest worker), in bytes.
    kv_available_bytes: PositiveInt | None = None
    # vLLM "Model loading took X GiB" (per GPU: weights and drafter, torch-allocated).
    weights_loaded_bytes: PositiveInt | None = None
    # vLLM "Estimated CUDA graph memory: X GiB total" (per GPU).
    cuda_graph_bytes: PositiveInt | None = None
    # llama.cpp: the KV buffer it allocates, in bytes (summed over the cards).
    kv_buffer_bytes: PositiveInt | None = None
    # llama.cpp: model, recurrent-state and compute buffers on the GPUs, summed over the cards.
    model_buffer_bytes: PositiveInt | None = None
    rs_buffer_bytes: PositiveInt | None = None
    compute_buffer_bytes: PositiveInt | None = None
    max_context_filled: PositiveInt | None = None
    verify_full: Annotated[str, StringConstraints(pattern=r"^[0-9]+/[0-9]+$")] | None = None
    verify_stress: Annotated[str, StringConstraints(pattern=r"^[0-9]+/[0-9]+$")] | None = None
    soak: Literal["pass", "fail"] | None = None
    acceptance_length: list[Annotated[float, Field(gt=0)]] = Field(default_factory=list)
    quality: list[QualityScore] = Field(default_factory=list)
    boots: bool | None = None
    oom: bool | None = None


class EvidenceSettings(Strict):
    """What differed from the profile's envelope when this was measured."""

    gpu_memory_utilization: Fraction | None = None
    kv_cache_dtype: Word | None = None
    max_model_len: PositiveInt | None = None
    max_num_seqs: PositiveInt | None = None
    max_num_batched_tokens: PositiveInt | None = None
    spec_n: Annotated[int, Field(ge=0)] | None = None
    kv_cache_memory: PositiveInt | None = None
    tp: PositiveInt | None = None
    prefix_caching: bool | None = None
    mamba_cache_mode: Word | None = None
    cudagraph_max_capture: PositiveInt | None = None
    enforce_eager: bool | None = None
    # The weights' tensor bytes where the boot loaded another file than the profile's (a file
    # of the same model's shape with random weights).
    weights_bytes: PositiveInt | None = None
    # false: the boot loaded no vision projector (the profile has one).
    mmproj: bool | None = None
    ubatch_size: PositiveInt | None = None


class Hardware(Strict):
    """The machine as whoever measured it stated it (or as NVML reported it): what moves the
    figures beyond the registry rig (power caps, lanes, an NVLink bridge, the host)."""

    cards: PositiveInt | None = None
    # The cards as named ("RTX 3090", "RTX 5090 + RTX 3090 Ti").
    gpu: Text | None = None
    # How they talk: "PCIe 4.0 x8/x8", "NVLink", "patched P2P".
    link: Text | None = None
    nvlink: bool | None = None
    # Per card in card order, or one figure for every card.
    power_cap_w: list[Annotated[float, Field(gt=0)]] = Field(default_factory=list)
    # CPU, operating system, virtualisation, enclosure.
    host: Text | None = None
    driver: Text | None = None


class Origin(Strict):
    """The line of a source file a record was read from (an imported table row)."""

    file: Text
    rev: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{8,40}$")] | None = None
    line: PositiveInt


class Evidence(Strict):
    # A name for the record that fit's calibration refers to (unique in the registry).
    key: Id | None = None
    date: IsoDate
    rig: Id
    # boot: figures the engine logged at start-up, which fit's calibration judges; bench: a
    # bench run against a serving engine (its memory figures are not a boot's); verify: the
    # functional checks of a serving engine (`verify --serving`: verify_full, soak).
    method: Literal["boot", "bench", "verify"] = "boot"
    # Who measured it, as the source names them ("@handle").
    contributor: Text | None = None
    hardware: Hardware | None = None
    # The engine the boot ran on, where it is not the profile's (an older or newer release).
    engine: Id | None = None
    # The weights variant it loaded, where it is not the profile's.
    weights: Id | None = None
    source: Text
    origin: Origin | None = None
    # sha256 of the engine command the measured server ran (`profilegen explain`'s argv),
    # so a record names the server it measured.
    engine_command: Sha256 | None = None
    summary: Text | None = None
    settings: EvidenceSettings = EvidenceSettings()
    measured: Measured
    # The source rounds its figures (622K, ~278K): calibration judges it at a wider tolerance.
    rounded: bool = False
    # Fit calibration compares against this record unless it is marked out.
    calibration: bool = True
    # A boot of random weights at the model's shape (bench/gpu): evidence for fit's memory
    # model only, never shown as the profile's own measurement (headers, benchmark pages).
    synthetic: bool = False
    # Fit constants fitted to this record (`profilegen fit calibration` lists them): it is
    # reported as `fitted`, never as a prediction.
    fitted: list[Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,63}$")]] = Field(
        default_factory=list
    )


def has_decode(ev: Evidence) -> bool:
    return ev.measured.decode_tps_narrative is not None or ev.measured.decode_tps_code is not None


def newest(
    records: list[Evidence], wanted: Callable[[Evidence], bool] | None = None
) -> Evidence | None:
    """The newest record (by date, later in the list on a tie) that passes `wanted`; a
    synthetic boot is never one (it measured random weights, not the profile's server)."""
    ranked = [
        (ev.date, i, ev)
        for i, ev in enumerate(records)
        if not ev.synthetic and (wanted is None or wanted(ev))
    ]
    return max(ranked, key=lambda t: (t[0], t[1]))[2] if ranked else None


def headline(records: list[Evidence], rig: str) -> Evidence | None:
    """The record a summary leads with: the newest speed measured on the profile's own rig,
    else the newest speed on any rig, else the newest record."""
    return (
        newest(records, lambda ev: has_decode(ev) and ev.rig == rig)
        or newest(records, has_decode)
        or newest(records)
    )
