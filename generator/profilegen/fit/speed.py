"""The fastest a profile can physically serve on a rig: decode from memory bandwidth, prefill
from tensor throughput, so that a measured speed past either is refused as impossible.

Decode: each weight pass reads the active weights (every expert a token routes to, the output
layer; not the input embedding, of which one row is read) and the KV cache of the context,
from every card the engine uses at once, and yields at most the drafter's tokens per step
(its widest draft + 1; a diffusion model's canvas). Prefill: 2 FLOPs per active parameter per
prompt token at the cards' dense tensor peak (the 8-bit or 4-bit peak where the weights run
on those tensor cores). Each ideal is multiplied by MARGIN (docs/EVIDENCE.md says why 1.5).
Every input is a lower bound on the work (attention FLOPs, vision towers, drafter weights are
left out), so the ceiling never sits below what a card can do.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ProfilegenError
from ..families import fit_model
from ..lockfile.lock import Lock
from ..model import Gpu, Profile
from ..model.evidence import Evidence
from ..registry import Registry
from .formulas.llamacpp_weights import model_params
from .formulas.shapes import ModelShape
from .inputs import FP4_NATIVE_SM, model_shape, model_weights_bytes, weight_dtype

# How far past the ideal a measured figure may still be believed (docs/EVIDENCE.md).
MARGIN = 1.5
# Bits a weight costs at the least: where an artifact's size (or the vocabulary that splits
# it) is unknown, the weights are taken as this small (IQ1_S, the smallest GGUF quant, 1.56).
FLOOR_BITS = 1.5
# Bytes one cached K or V value costs at the least, by cache type (q4 types and below: 0.5).
_KV_VALUE_BYTES = {"auto": 2.0, "bfloat16": 2.0, "float16": 2.0, "f16": 2.0, "bf16": 2.0,
                   "f32": 4.0, "fp8": 1.0, "fp8_e4m3": 1.0, "fp8_e5m2": 1.0, "q8_0": 1.0}  # fmt: skip
_UNQUANTISED = {"f16", "bf16", "f32", "fp16"}


@dataclass(frozen=True)
class SpeedBound:
    """The ceilings, with what they rest on (each None where a card lacks the fact)."""

    cards: tuple[str, ...]  # GPU names of the cards the engine reads from
    bandwidth_gbps: float | None  # summed over those cards
    tflops: float | None  # dense tensor peak, summed, at the weights' compute precision
    precision: str  # fp16 | 8-bit | fp4: the tensor cores prefill may run on
    weights_bytes: int
    weights_known: bool  # False: the artifact's size is unknown (FLOOR_BITS per weight)
    active_params: int
    active_bytes: int  # read per weight pass
    kv_bytes: int  # read per weight pass at the measured context
    tokens_per_pass: int
    why_tokens: str  # "no drafter" | "drafter width 4 + 1" | ...

    @property
    def bytes_per_pass(self) -> int:
        return self.active_bytes + self.kv_bytes

    @property
    def ideal_decode(self) -> float | None:
        if self.bandwidth_gbps is None or self.bytes_per_pass <= 0:
            return None
        return self.bandwidth_gbps * 1e9 * self.tokens_per_pass / self.bytes_per_pass

    @property
    def decode(self) -> float | None:
        ideal = self.ideal_decode
        return None if ideal is None else ideal * MARGIN

    @property
    def ideal_prefill(self) -> float | None:
        if self.tflops is None or self.active_params <= 0:
            return None
        return self.tflops * 1e12 / (2 * self.active_params)

    @property
    def prefill(self) -> float | None:
        ideal = self.ideal_prefill
        return None if ideal is None else ideal * MARGIN

    def decode_inputs(self) -> str:
        rig = _cards(self.cards)
        weights = "" if self.weights_known else f" at {FLOOR_BITS:g} bits a weight"
        return (
            f"{rig}: {self.bandwidth_gbps:,.0f} GB/s of memory bandwidth over "
            f"{_gb(self.bytes_per_pass)} read per weight pass (active weights "
            f"{_gb(self.active_bytes)}{weights}, KV {_gb(self.kv_bytes)}), at most "
            f"{self.tokens_per_pass} token{'s' if self.tokens_per_pass > 1 else ''} a pass "
            f"({self.why_tokens}); ideal {self.ideal_decode:,.0f} tok/s x {MARGIN:g} margin"
        )

    def prefill_inputs(self) -> str:
        return (
            f"{_cards(self.cards)}: {self.tflops:,.0f} dense {self.precision} tensor TFLOPS over "
            f"2 x {self.active_params / 1e9:.2f}B active parameters a token; ideal "
            f"{self.ideal_prefill:,.0f} tok/s x {MARGIN:g} margin"
        )


def _cards(names: tuple[str, ...]) -> str:
    counts = dict.fromkeys(names, 0)
    for n in names:
        counts[n] += 1
    return " + ".join(f"{c}x {n}" for n, c in counts.items())


def _gb(value: int) -> str:
    return f"{value / 1e9:.2f} GB"


def active_params(shape: ModelShape) -> tuple[int, int]:
    """(every parameter, the parameters one token reads): the routed experts it is not sent
    to and the input embedding (one row a token) are not read; a tied output layer is."""
    embedding, body, nextn = model_params(shape)
    total = embedding + body + nextn
    active = body + (embedding if shape.tied_embeddings else 0)
    if shape.moe_experts and shape.moe_intermediate_size:
        idle = shape.moe_experts - shape.moe_experts_per_token
        layers = shape.moe_layers or shape.num_layers
        active -= layers * 3 * shape.hidden_size * shape.moe_intermediate_size * max(idle, 0)
    return total, max(active, 1)


def _kv_bytes(shape: ModelShape, kv_dtype: str | None, context: int) -> int:
    per_value = _KV_VALUE_BYTES.get(kv_dtype or "auto", 0.5)
    values = 2 * shape.num_kv_layers * shape.num_kv_heads * shape.head_dim
    return round(values * per_value * max(context, 0))


def _used_cards(registry: Registry, profile: Profile, rig_id: str, tp: int | None) -> list[Gpu]:
    """The cards the engine reads from: TP x PP of them (vLLM, SGLang), or every card of the
    rig (llama.cpp splits layers over all it sees); the fastest where the rig mixes cards."""
    rig = registry.rigs[rig_id]
    cards = [registry.gpus[g] for g in (rig.cards or [rig.gpu] * rig.count)]
    cards.sort(key=lambda g: -(g.memory_bandwidth_gbps or 0))
    if fit_model(registry.engines[profile.engine].kind) == "layer-split":
        return cards
    env = profile.envelope
    return cards[: max(1, min(len(cards), (tp or env.tp) * (env.pp or 1)))]


def _precision(registry: Registry, profile: Profile, weights: str, cards: list[Gpu]) -> str:
    """The tensor cores prefill may run the weights on: weights of 8 bits or fewer may be
    multiplied on 8-bit ones (W8A8, W4A8, llama.cpp's int8 kernels for quantised GGUF), twice
    the FP16 rate on every card here; NVFP4 weights on FP4 ones from Blackwell, four times."""
    artifact = registry.models[profile.model].artifacts[weights]
    sm = min(tuple(int(x) for x in g.sm.split(".")) for g in cards)
    dtype = weight_dtype(artifact)
    if artifact.format == "gguf":
        quantised = (artifact.quantization or "").lower() not in _UNQUANTISED
    else:
        quantised = dtype not in ("bf16", "fp16")
    if dtype == "nvfp4" and sm >= FP4_NATIVE_SM:
        return "fp4"
    return "8-bit" if quantised else "fp16"


_PRECISION_FACTOR = {"fp16": 1, "8-bit": 2, "fp4": 4}


def _tokens_per_pass(registry: Registry, profile: Profile, shape: ModelShape,
                     spec_n: int | None) -> tuple[int, str]:  # fmt: skip
    if shape.diffusion_canvas:
        return shape.diffusion_canvas, f"a diffusion canvas of {shape.diffusion_canvas}"
    if spec_n is not None:
        return spec_n + 1, f"{spec_n} speculative tokens + 1" if spec_n else "no drafting"
    if profile.drafter is None:
        return 1, "no drafter"
    widest = max(profile.drafter.width, registry.drafters[profile.drafter.id].max_width)
    return widest + 1, f"drafter {profile.drafter.id} drafts at most {widest} + 1"


def speed_bound(
    registry: Registry,
    profile: Profile,
    rig_id: str,
    *,
    weights: str | None = None,
    spec_n: int | None = None,
    tp: int | None = None,
    kv_dtype: str | None = None,
    context: int = 0,
    lock: Lock | None = None,
) -> SpeedBound | None:
    """The ceilings of `profile` on `rig_id`; None where the model's shape is unknown."""
    variant = weights or profile.weights
    arch = registry.models[profile.model].architecture
    known = arch.vocab_size is not None  # else the embedding's share of the file is unknown
    try:
        shape = model_shape(arch if known else arch.model_copy(update={"vocab_size": 1}),
                            profile.model)  # fmt: skip
    except ProfilegenError:
        return None
    total, active = active_params(shape)
    try:
        size = model_weights_bytes(registry, profile.model, variant, lock)
    except ProfilegenError:
        known = False
    if not known:
        size = round(total * FLOOR_BITS / 8)
    cards = _used_cards(registry, profile, rig_id, tp)
    bandwidths = [g.memory_bandwidth_gbps for g in cards]
    precision = _precision(registry, profile, variant, cards)
    peaks = [g.dense_fp16_tflops for g in cards]
    tokens, why = _tokens_per_pass(registry, profile, shape, spec_n)
    return SpeedBound(
        cards=tuple(g.name for g in cards),
        bandwidth_gbps=sum(b for b in bandwidths if b) if all(bandwidths) else None,
        tflops=sum(p for p in peaks if p) * _PRECISION_FACTOR[precision] if all(peaks) else None,
        precision=precision,
        weights_bytes=size,
        weights_known=known,
        active_params=active,
        active_bytes=round(size * active / total),
        kv_bytes=_kv_bytes(shape, kv_dtype or profile.envelope.kv_cache_dtype, context),
        tokens_per_pass=tokens,
        why_tokens=why,
    )


@dataclass(frozen=True)
class Impossible:
    """A measured speed past its ceiling: where in the record, and the numbers."""

    node: tuple[str | int, ...]  # inside the record: ("measured", "decode_tps_code")
    figure: str  # decode_tps_code, prefill at 94,000 tokens
    measured: float
    bound: float
    inputs: str

    def message(self) -> str:
        return (
            f"{self.figure} {self.measured:,.1f} tok/s is past the physical bound of "
            f"{self.bound:,.0f} tok/s ({self.measured / self.bound:.2f}x it) for {self.inputs}"
        )


def impossible_figures(
    registry: Registry, profile: Profile, ev: Evidence, lock: Lock | None = None,
    context: int = 0,
) -> list[Impossible]:  # fmt: skip
    """Every speed of the record past what its rig can do at its settings."""
    s = ev.settings
    bound = speed_bound(
        registry, profile, ev.rig, weights=ev.weights, spec_n=s.spec_n, tp=s.tp,
        kv_dtype=s.kv_cache_dtype, context=context, lock=lock,
    )  # fmt: skip
    if bound is None:
        return []
    out = []
    m = ev.measured
    decode = bound.decode
    if decode is not None:
        for name in ("decode_tps_narrative", "decode_tps_code"):
            value = getattr(m, name)
            if value is not None and value > decode:
                out.append(
                    Impossible(("measured", name), name, value, decode, bound.decode_inputs())
                )
    prefill = bound.prefill
    if prefill is not None:
        for i, point in enumerate(m.prefill):
            if point.tokens_per_s > prefill:
                out.append(Impossible(
                    ("measured", "prefill", i, "tokens_per_s"),
                    f"prefill at {point.context_tokens:,} tokens", point.tokens_per_s, prefill,
                    bound.prefill_inputs(),
                ))  # fmt: skip
    return out
