"""A profile (with what-if overrides) mapped onto the fit formulas: the prediction and its result."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..errors import UsageError, suggest
from ..families import family, fit_model, kinds
from ..lockfile.lock import Lock, LockError, read_lock
from ..model import Engine, Gpu, Profile, Rig
from ..model.common import Size
from ..model.kv_backends import kv_dtype_decision
from ..model.model import Architecture, Artifact
from ..model.profile import Envelope
from ..registry import Registry
from ..units import GIB, MIB
from . import formulas as fm
from .inputs import VLLM_DEFAULT_UTIL, FitError, Target
from .options import FitOptions, FitResult
from .results import predict
from .rigs import find_rig, rig_gpus
from .whatfits import would_fit

# What-if options that only one memory model reads: the pool's sizing (vLLM), and what the
# layer split has no use for (SGLang reads --gpu-util as its static memory fraction).
POOL_ONLY = (
    "kv_cache_memory",
    "max_num_batched_tokens",
    "mamba_cache_mode",
    "cudagraph_max_capture",
)
NOT_LAYER_SPLIT = ("gpu_util", "prefix_caching", "enforce_eager")
# Options only the layer-split fit (llama.cpp) takes: a boot log's file, backend and batch.
LAYER_SPLIT_ONLY = ("weights_bytes", "backend", "mmproj", "ubatch_size")

__all__ = [
    "GIB",
    "MIB",
    "FitOptions",
    "FitResult",
    "find_rig",
    "fit_profile",
    "predict",
    "read_lock_or_none",
    "retarget",
    "what_would_fit",
]


def _pick(table: dict[str, Any], name: str, what: str) -> Any:
    if name in table:
        return table[name]
    close = suggest(name, list(table))
    hint = f"did you mean {close!r}?" if close else "known: " + ", ".join(sorted(table))
    raise UsageError(f"no {what} {name!r} ({hint})")


def _valid_tp(tp: int, arch: Architecture) -> bool:
    kv = arch.num_kv_heads
    return arch.num_attention_heads % tp == 0 and (kv % tp == 0 or tp % kv == 0)


def _tp(asked: int | None, env: Envelope, rig: Rig, arch: Architecture, engine: str) -> int:
    tp = asked or env.tp
    if asked is not None and asked > rig.count:
        raise UsageError(f"--tp {asked} needs {asked} GPUs; rig {rig.id} has {rig.count}")
    one_process = family(engine).single_process
    if asked is not None and not one_process and not _valid_tp(asked, arch):
        raise UsageError(
            f"--tp {asked} must divide the {arch.num_attention_heads} attention heads "
            f"and divide or be a multiple of the {arch.num_kv_heads} KV heads"
        )
    if tp <= rig.count:
        return tp
    return max(t for t in range(1, rig.count + 1) if one_process or _valid_tp(t, arch))


def _check_kv_dtype(engine: Engine, dtype: str) -> None:
    known = engine.kv_cache_dtypes
    try:
        if fit_model(engine.kind) == "layer-split":
            fm.llamacpp_row_bytes(dtype, 32)
        else:
            fm.vllm_dtype_bytes(dtype)
        ok = not known or dtype in known
    except ValueError:
        ok = False
    if not ok:
        close = suggest(dtype, known)
        hint = f"did you mean {close!r}?" if close else "one of " + ", ".join(known)
        raise UsageError(f"{engine.kind} has no KV dtype {dtype!r} ({hint})")


def _check_weights(registry: Registry, profile: Profile, engine: str, variant: str) -> None:
    model = registry.models[profile.model]
    mains = {k: a for k, a in model.artifacts.items() if a.kind == "main"}
    artifact: Artifact = _pick(mains, variant, f"weights variant of {model.id}")
    if (artifact.format == "gguf") != (family(engine).weights_format == "gguf"):
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
    kin = family(engine)
    if kin.single_process and env.tensor_split and len(env.tensor_split) != cards:
        notes.append(
            f"tensor_split of {len(env.tensor_split)} cards dropped: the fit splits {cards} evenly"
        )
        return env.model_copy(update={"tensor_split": []})
    if env.kv_cache_dtype is None:
        default = kin.default_kv_dtype
        notes.append(f"KV-cache dtype unset: {engine}'s default ({default})")
        env = env.model_copy(update={"kv_cache_dtype": default})
    if kin.fit == "pool" and env.gpu_memory_utilization is None:
        notes.append(f"gpu_memory_utilization unset: vLLM's default {VLLM_DEFAULT_UTIL}")
        env = env.model_copy(update={"gpu_memory_utilization": VLLM_DEFAULT_UTIL})
    if kin.fit == "pool" and env.kv_cache_memory:
        notes.append(
            f"kv_cache_memory pins the KV pool at {env.kv_cache_memory:,} bytes per "
            "GPU: utilization does not size it"
        )
    return env


def _engine_entry(registry: Registry, profile: Profile, asked: str | None) -> Engine:
    if asked is None:
        return registry.engines[profile.engine]
    engine: Engine = _pick(registry.engines, asked, "engine")
    own = registry.engines[profile.engine]
    if engine.kind != own.kind:
        raise UsageError(
            f"engine {asked} is {engine.kind}; {profile.id} runs {own.kind} "
            f"({own.id}): fit compares releases of the same engine"
        )
    return engine


def _check_offload(profile: Profile, engine: str) -> None:
    offload = profile.envelope.offload
    if offload is not None and offload not in family(engine).offload_modes:
        modelled = [f"{family(k).label}'s {m}" for k in kinds() for m in family(k).offload_modes]
        raise FitError(
            f"{profile.id} keeps weights off the GPUs ({offload}); fit models that for "
            f"{' and '.join(modelled)} only"
        )


def _apply(profile: Profile, opts: FitOptions, tp: int) -> Envelope:
    updates = {
        "tp": tp,
        "kv_cache_dtype": opts.kv_dtype,
        "gpu_memory_utilization": opts.gpu_util,
        "max_model_len": opts.max_model_len,
        "max_num_seqs": opts.max_num_seqs,
        "max_num_batched_tokens": opts.max_num_batched_tokens,
        "kv_cache_memory": opts.kv_cache_memory,
        "prefix_caching": opts.prefix_caching,
        "mamba_cache_mode": opts.mamba_cache_mode,
        "cudagraph_max_capture": opts.cudagraph_max_capture,
        "enforce_eager": opts.enforce_eager,
        "ubatch_size": opts.ubatch_size,
    }
    return profile.envelope.model_copy(update={k: v for k, v in updates.items() if v is not None})


def _validate(registry: Registry, profile: Profile, opts: FitOptions, entry: Engine) -> None:
    engine = entry.kind
    model = fit_model(engine)
    if model is None:
        fitted = ", ".join(family(k).label for k in kinds() if fit_model(k))
        raise UsageError(f"fit models {fitted}; {profile.id} runs {family(engine).label}")
    _check_offload(profile, engine)
    given = [n for n in POOL_ONLY if getattr(opts, n) is not None]
    if model != "pool" and given:
        raise UsageError(f"--{given[0].replace('_', '-')} applies to {_labels('pool')} only")
    given = [n for n in NOT_LAYER_SPLIT if getattr(opts, n) is not None]
    if model == "layer-split" and given:
        others = [family(k).label for k in kinds() if fit_model(k) not in (None, "layer-split")]
        raise UsageError(
            f"--{given[0].replace('_', '-')} applies to {' and '.join(others)} profiles only"
        )
    given = [n for n in LAYER_SPLIT_ONLY if getattr(opts, n) is not None]
    if model != "layer-split" and given:
        raise UsageError(f"{given[0]} applies to {_labels('layer-split')} only")
    if opts.weights:
        _check_weights(registry, profile, engine, opts.weights)
    if opts.kv_dtype:
        _check_kv_dtype(entry, opts.kv_dtype)


def _labels(model: str) -> str:
    """The families a memory model fits, as a reader names them: `vLLM profiles`."""
    return " and ".join(family(k).label for k in kinds() if fit_model(k) == model) + " profiles"


def _policy(env: Envelope, rig: Rig) -> str | None:
    """Why the rig's guard refuses the utilization (None: within its policy)."""
    util, cap = env.gpu_memory_utilization, rig.policy.max_gpu_memory_utilization
    if util is None or cap is None or util <= cap:
        return None
    why = f" ({rig.policy.reason})" if rig.policy.reason else ""
    return f"gpu_memory_utilization {util} exceeds rig {rig.id}'s cap of {cap}{why}"


def _refusals(entry: Engine, env: Envelope, gpus: tuple[Gpu, ...], rig: Rig) -> list[str]:
    """What the container's guards refuse at these settings (model/kv_backends.py judges
    the KV dtype on every card; the rig's utilization cap is the other guard)."""
    out: list[str] = []
    for gpu in {g.id: g for g in gpus}.values():
        decision = kv_dtype_decision(entry, gpu, env.kv_cache_dtype, env.attention_backend)
        if not decision.ok:
            out.append(decision.reason)
    over = _policy(env, rig)
    return [*out, over] if over else out


def _reserved(rig: Rig, mib: int | None) -> Rig:
    """The rig with a display's reservation on its first card given on the command line."""
    if mib is None:
        return rig
    if mib == 0:
        return rig.model_copy(update={"desktop_gpu": None, "desktop_reserve": None})
    size = Size(value=mib, unit="MiB")
    return rig.model_copy(update={"desktop_gpu": 0, "desktop_reserve": size})


def retarget(
    registry: Registry, profile: Profile, opts: FitOptions, rig: Rig | None = None
) -> Target:
    """Validates the overrides and applies them: the profile as it will be fitted."""
    entry = _engine_entry(registry, profile, opts.engine)
    engine = entry.kind
    _validate(registry, profile, opts, entry)
    rig = _reserved(rig or find_rig(registry, opts.rig or profile.rig), opts.reserve_mib)
    arch = registry.models[profile.model].architecture
    tp = _tp(opts.tp, profile.envelope, rig, arch, engine)
    notes: list[str] = []
    if entry.id != profile.engine:
        notes.append(f"engine {entry.id} instead of the profile's {profile.engine}")
    capped = None if opts.tp or tp == profile.envelope.tp else profile.envelope.tp
    if capped:
        notes.append(f"TP {capped} capped to {tp}: rig {rig.id} has {rig.count} GPU(s)")
    env = _engine_defaults(engine, _apply(profile, opts, tp), notes)
    if env.max_model_len > arch.max_position_embeddings:
        notes.append(
            f"max_model_len {env.max_model_len:,} exceeds the model's "
            f"{arch.max_position_embeddings:,}; vLLM refuses it without an override"
        )
    within = _policy(env, rig) is None
    gpus = tuple(rig_gpus(registry, rig))
    gpu: Gpu = registry.gpus[rig.gpu]
    refused = _refusals(entry, env, gpus or (gpu,), rig)
    spec_n = _spec_n(registry, profile, opts.spec_n)
    weights = opts.weights or profile.weights
    return Target(
        profile, rig, gpu, engine, env, weights, spec_n, capped, within, tuple(notes),
        engine_entry=entry, gpus=gpus, constants=opts.constants,
        weights_bytes=opts.weights_bytes, backend=opts.backend or "cuda",
        mmproj=opts.mmproj is not False, refused=tuple(refused), booted_on=opts.booted_on,
    )  # fmt: skip


def read_lock_or_none(registry: Registry) -> Lock | None:
    try:
        return read_lock(registry.root)
    except LockError:
        return None  # sizes fall back to the declared ones; `check` reports the lock


def what_would_fit(
    registry: Registry,
    profile: Profile,
    opts: FitOptions,
    result: FitResult,
    lock: Lock | None = None,
) -> FitResult:
    """`result` with what would fit when it does not (fit/whatfits.py)."""
    if result.fits:
        return result
    found = would_fit(lambda o: fit_profile(registry, profile, o, lock=lock), opts, result)
    return dataclasses.replace(result, would_fit=found.as_dict())


def fit_profile(
    registry: Registry,
    profile: Profile,
    opts: FitOptions,
    rig: Rig | None = None,
    lock: Lock | None = None,
) -> FitResult:
    return predict(registry, retarget(registry, profile, opts, rig), lock)
