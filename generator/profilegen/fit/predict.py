"""A profile (with what-if overrides) mapped onto the fit formulas: the prediction and its result."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from ..errors import UsageError, suggest
from ..hub.lock import Lock, LockError, read_lock
from ..model import Gpu, Profile, Rig
from ..model.model import Architecture, Artifact
from ..model.profile import Envelope
from ..registry import Registry
from . import formulas as fm
from .inputs import VLLM_DEFAULT_UTIL, FitError, Target, llamacpp_inputs, vllm_inputs

MIB = 1 << 20
GIB = 1 << 30
MODELLED_ENGINES = ("vllm", "llama.cpp")
VLLM_ONLY = ("gpu_util", "kv_cache_memory", "max_num_batched_tokens")


@dataclass(frozen=True)
class FitOptions:
    """What-if overrides (None keeps the profile's value) and the report format."""

    profile: str | None = None
    rig: str | None = None
    tp: int | None = None
    gpu_util: float | None = None
    kv_dtype: str | None = None
    max_model_len: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    spec_n: int | None = None
    kv_cache_memory: int | None = None
    weights: str | None = None
    fmt: str = "text"
    calibration: bool = False

    def what_ifs(self) -> dict[str, Any]:
        skip = {"profile", "fmt", "calibration"}
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name not in skip and getattr(self, f.name) is not None
        }


@dataclass(frozen=True)
class FitResult:
    profile: str
    engine: str
    rig: str
    gpu: str
    tp: int
    gpus: int
    weights: str
    weights_bytes: int
    kv_cache_dtype: str
    gpu_memory_utilization: float | None
    spec_n: int
    max_model_len: int
    max_num_seqs: int
    kv_pool_tokens: int
    kv_pool_bytes_per_gpu: int
    kv_bytes_per_token_per_gpu: int
    kv_cache_bytes: int  # KV bytes summed over every GPU
    max_concurrency: float
    boots: bool
    fits: bool
    within_policy: bool
    # vLLM: pool minus max_model_len x max_num_seqs; llama.cpp: context the tightest GPU
    # could still add. Negative is a shortfall.
    headroom_tokens: int
    free_bytes: int  # physical slack of the tightest GPU
    budget: dict[str, int]  # the tightest GPU
    budgets: list[dict[str, int]] = field(default_factory=list)  # every GPU used
    tp_capped_from: int | None = None
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def _pick(table: dict[str, Any], name: str, what: str) -> Any:
    if name in table:
        return table[name]
    close = suggest(name, list(table))
    hint = f"did you mean {close!r}?" if close else "known: " + ", ".join(sorted(table))
    raise UsageError(f"no {what} {name!r} ({hint})")


def find_rig(registry: Registry, name: str) -> Rig:
    rig: Rig = _pick(registry.rigs, name, "rig")
    return rig


def _valid_tp(tp: int, arch: Architecture) -> bool:
    kv = arch.num_kv_heads
    return arch.num_attention_heads % tp == 0 and (kv % tp == 0 or tp % kv == 0)


def _tp(asked: int | None, env: Envelope, rig: Rig, arch: Architecture, engine: str) -> int:
    tp = asked or env.tp
    if asked is not None and asked > rig.count:
        raise UsageError(f"--tp {asked} needs {asked} GPUs; rig {rig.id} has {rig.count}")
    if asked is not None and engine == "vllm" and not _valid_tp(asked, arch):
        raise UsageError(
            f"--tp {asked} must divide the {arch.num_attention_heads} attention heads "
            f"and divide or be a multiple of the {arch.num_kv_heads} KV heads"
        )
    if tp <= rig.count:
        return tp
    return max(t for t in range(1, rig.count + 1) if engine != "vllm" or _valid_tp(t, arch))


def _check_kv_dtype(registry: Registry, profile: Profile, engine: str, dtype: str) -> None:
    known = registry.engines[profile.engine].kv_cache_dtypes
    try:
        if engine == "vllm":
            fm.vllm_dtype_bytes(dtype)
        else:
            fm.llamacpp_row_bytes(dtype, 32)
        ok = not known or dtype in known
    except ValueError:
        ok = False
    if not ok:
        close = suggest(dtype, known)
        hint = f"did you mean {close!r}?" if close else "one of " + ", ".join(known)
        raise UsageError(f"{engine} has no KV dtype {dtype!r} ({hint})")


def _check_weights(registry: Registry, profile: Profile, engine: str, variant: str) -> None:
    model = registry.models[profile.model]
    mains = {k: a for k, a in model.artifacts.items() if a.kind == "main"}
    artifact: Artifact = _pick(mains, variant, f"weights variant of {model.id}")
    if (artifact.format == "gguf") != (engine == "llama.cpp"):
        raise UsageError(f"weights {variant} ({artifact.format}) cannot be served by {engine}")


def _spec_n(registry: Registry, profile: Profile, asked: int | None) -> int:
    if profile.drafter is None:
        if asked:
            raise UsageError(f"--spec-n {asked}: {profile.id} has no drafter")
        return 0
    drafter = registry.drafters[profile.drafter.id]
    if asked is not None and asked > drafter.max_width:
        raise UsageError(f"--spec-n {asked} exceeds {drafter.id}'s maximum of {drafter.max_width}")
    return profile.drafter.width if asked is None else asked


def _engine_defaults(engine: str, env: Envelope, notes: list[str]) -> Envelope:
    """What the engine does with what the envelope leaves open or no longer matches."""
    cards = 1 if env.split_mode == "none" else env.tp
    if engine == "llama.cpp" and env.tensor_split and len(env.tensor_split) != cards:
        notes.append(
            f"tensor_split of {len(env.tensor_split)} cards dropped: the fit splits {cards} evenly"
        )
        return env.model_copy(update={"tensor_split": []})
    if env.kv_cache_dtype is None:
        default = "auto" if engine == "vllm" else "f16"
        notes.append(f"KV-cache dtype unset: {engine}'s default ({default})")
        env = env.model_copy(update={"kv_cache_dtype": default})
    if engine == "vllm" and env.gpu_memory_utilization is None:
        notes.append(f"gpu_memory_utilization unset: vLLM's default {VLLM_DEFAULT_UTIL}")
        env = env.model_copy(update={"gpu_memory_utilization": VLLM_DEFAULT_UTIL})
    if engine == "vllm" and env.kv_cache_memory:
        notes.append(
            f"kv_cache_memory pins the KV pool at {env.kv_cache_memory:,} bytes per "
            "GPU: utilization does not size it"
        )
    return env


def retarget(
    registry: Registry, profile: Profile, opts: FitOptions, rig: Rig | None = None
) -> Target:
    """Validates the overrides and applies them: the profile as it will be fitted."""
    engine = registry.engines[profile.engine].kind
    if engine not in MODELLED_ENGINES:
        raise UsageError(f"fit models vLLM and llama.cpp; {profile.id} runs {engine}")
    if profile.envelope.offload is not None:
        raise FitError(
            f"{profile.id} keeps weights off the GPUs ({profile.envelope.offload}); "
            "fit does not model offload"
        )
    given = [n for n in VLLM_ONLY if getattr(opts, n) is not None]
    if engine != "vllm" and given:
        raise UsageError(f"--{given[0].replace('_', '-')} applies to vLLM profiles only")
    rig = rig or find_rig(registry, opts.rig or profile.rig)
    arch = registry.models[profile.model].architecture
    if opts.weights:
        _check_weights(registry, profile, engine, opts.weights)
    if opts.kv_dtype:
        _check_kv_dtype(registry, profile, engine, opts.kv_dtype)
    tp = _tp(opts.tp, profile.envelope, rig, arch, engine)
    updates = {
        "tp": tp,
        "kv_cache_dtype": opts.kv_dtype,
        "gpu_memory_utilization": opts.gpu_util,
        "max_model_len": opts.max_model_len,
        "max_num_seqs": opts.max_num_seqs,
        "max_num_batched_tokens": opts.max_num_batched_tokens,
        "kv_cache_memory": opts.kv_cache_memory,
    }
    env = profile.envelope.model_copy(update={k: v for k, v in updates.items() if v is not None})
    notes: list[str] = []
    capped = None if opts.tp or tp == profile.envelope.tp else profile.envelope.tp
    if capped:
        notes.append(f"TP {capped} capped to {tp}: rig {rig.id} has {rig.count} GPU(s)")
    env = _engine_defaults(engine, env, notes)
    if env.max_model_len > arch.max_position_embeddings:
        notes.append(
            f"max_model_len {env.max_model_len:,} exceeds the model's "
            f"{arch.max_position_embeddings:,}; vLLM refuses it without an override"
        )
    util, cap = env.gpu_memory_utilization, rig.policy.max_gpu_memory_utilization
    within = not (util is not None and cap is not None and util > cap)
    if not within:
        notes.append(
            f"util {util} exceeds rig {rig.id}'s policy of {cap}"
            + (f" ({rig.policy.reason})" if rig.policy.reason else "")
        )
    gpu: Gpu = registry.gpus[rig.gpu]
    spec_n = _spec_n(registry, profile, opts.spec_n)
    weights = opts.weights or profile.weights
    return Target(profile, rig, gpu, engine, env, weights, spec_n, capped, within, tuple(notes))


def _result(t: Target, weights_bytes: int, **values: Any) -> FitResult:
    env = t.envelope
    return FitResult(
        profile=t.profile.id,
        engine=t.engine,
        rig=t.rig.id,
        gpu=t.gpu.id,
        tp=env.tp,
        weights=t.weights,
        weights_bytes=weights_bytes,
        kv_cache_dtype=env.kv_cache_dtype or "auto",
        gpu_memory_utilization=env.gpu_memory_utilization,
        spec_n=t.spec_n,
        max_model_len=env.max_model_len,
        max_num_seqs=env.max_num_seqs,
        within_policy=t.within_policy,
        tp_capped_from=t.tp_capped_from,
        notes=list(t.notes),
        **values,
    )


def predict(registry: Registry, t: Target, lock: Lock | None = None) -> FitResult:
    try:
        return (
            _predict_vllm(registry, t, lock)
            if t.engine == "vllm"
            else _predict_llamacpp(registry, t, lock)
        )
    except ValueError as exc:  # fitmath rejects a dtype or shape the registry holds
        raise FitError(f"{t.profile.id}: {exc}") from exc


def _predict_vllm(registry: Registry, t: Target, lock: Lock | None) -> FitResult:
    inputs = vllm_inputs(registry, t, lock)
    fit = fm.predict_vllm(inputs)
    budget = fit.budget.as_dict()
    return _result(
        t,
        inputs.weights_bytes,
        gpus=inputs.tp,
        kv_pool_tokens=fit.kv_pool_tokens,
        kv_pool_bytes_per_gpu=fit.kv_pool_bytes_per_gpu,
        kv_bytes_per_token_per_gpu=fit.kv_bytes_per_token_per_gpu,
        kv_cache_bytes=fit.kv_pool_bytes_per_gpu * inputs.tp,
        max_concurrency=round(fit.max_concurrency, 3),
        boots=fit.boots,
        fits=fit.fits,
        headroom_tokens=fit.headroom_tokens,
        free_bytes=fit.budget.free,
        budget=budget,
        budgets=[budget],
    )


def _predict_llamacpp(registry: Registry, t: Target, lock: Lock | None) -> FitResult:
    inputs = llamacpp_inputs(registry, t, lock)
    fit = fm.predict_llamacpp(inputs)
    cells = math.ceil(inputs.n_ctx / fm.LLAMACPP_CTX_PADDING) * fm.LLAMACPP_CTX_PADDING
    dev = min(range(len(fit.budgets)), key=lambda i: fit.budgets[i].free)
    per_token = fit.kv_cache_bytes_per_gpu[dev] // cells
    headroom = fit.headroom_tokens
    if not fit.fits and per_token:
        headroom = -math.ceil(-fit.headroom_bytes / per_token)
    return _result(
        t,
        inputs.weights_bytes,
        gpus=len(inputs.gpus),
        kv_pool_tokens=cells,
        kv_pool_bytes_per_gpu=fit.kv_cache_bytes_per_gpu[dev],
        kv_bytes_per_token_per_gpu=per_token,
        kv_cache_bytes=fit.kv_cache_bytes,
        max_concurrency=round(cells / inputs.n_ctx, 3),
        boots=fit.fits,
        fits=fit.fits,
        headroom_tokens=headroom,
        free_bytes=fit.headroom_bytes,
        budget=fit.budgets[dev].as_dict(),
        budgets=[b.as_dict() for b in fit.budgets],
    )


def read_lock_or_none(registry: Registry) -> Lock | None:
    try:
        return read_lock(registry.root)
    except LockError:
        return None  # sizes fall back to the declared ones; `check` reports the lock


def fit_profile(
    registry: Registry,
    profile: Profile,
    opts: FitOptions,
    rig: Rig | None = None,
    lock: Lock | None = None,
) -> FitResult:
    return predict(registry, retarget(registry, profile, opts, rig), lock)
