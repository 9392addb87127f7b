"""`profilegen new ID --model M --rig R`: a model's first profile, its envelope proposed by fit.

The engine is the one the catalogue runs most of that kind (GGUF weights: llama.cpp, others:
vLLM); TP uses every card the heads allow; the KV dtype is the most compact one the engine
knows and the GPU's default attention backend takes; the context is the largest that `fit`
says fits. The title and best_for are TODO placeholders that `check` refuses until filled.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..errors import ProfilegenError, UsageError, suggest
from ..families import family, fit_model, kinds
from ..fit.inputs import FitError, weights_estimate
from ..fit.predict import FitOptions, FitResult, fit_profile, read_lock_or_none
from ..fit.rigs import find_registry_rig
from ..model import Profile
from ..model.engine import Engine
from ..model.kv_backends import kv_dtype_decision
from ..model.model import Model
from ..registry import Registry
from .words import TODO_BEST_FOR

CONTEXT_STEP = 1024
SMALLEST_CONTEXT = 4096
VLLM_UTIL = 0.9
PORT_NEAR = 8000
TODO_TITLE = "TODO: one line saying what this profile is for"


@dataclass(frozen=True)
class Proposal:
    """The profile's data and why each envelope value was chosen."""

    data: dict[str, Any]
    reasons: list[str]
    fit: FitResult | None


def _pick(table: dict[str, Any], name: str, what: str) -> Any:
    if name in table:
        return table[name]
    close = suggest(name, sorted(table))
    hint = f"did you mean {close!r}?" if close else f"see registry/{what}s/"
    raise UsageError(f"no {what} {name!r} ({hint})")


def _weights(model: Model, asked: str | None, engine: Engine | None) -> str:
    mains = {k: a for k, a in model.artifacts.items() if a.kind == "main"}
    if asked is not None:
        _pick(mains, asked, f"weights variant of {model.id}")
        return asked
    if engine is not None:
        gguf = family(engine.kind).weights_format == "gguf"
        mains = {k: a for k, a in mains.items() if (a.format == "gguf") == gguf}
    if len(mains) == 1:
        return next(iter(mains))
    if not mains:
        raise UsageError(f"{model.id} has no main weights this engine can load")
    raise UsageError(
        f"{model.id} has {len(mains)} weights variants; pick one with --weights: "
        + ", ".join(mains)
    )


def default_engine(registry: Registry, kind: str) -> Engine:
    """The engine of this kind that the most profiles run (ties: the lowest id)."""
    engines = [e for e in registry.engines.values() if e.kind == kind]
    if not engines:
        raise UsageError(f"the registry has no {kind} engine; pass --engine")
    runs = Counter(p.engine for p in registry.concrete_profiles())
    return min(engines, key=lambda e: (-runs[e.id], e.id))


def _tp(registry: Registry, model: Model, engine: Engine, rig_count: int) -> int:
    arch = model.architecture
    if family(engine.kind).single_process:
        return rig_count
    heads, kv = arch.num_attention_heads, arch.num_kv_heads
    return max(
        t for t in range(1, rig_count + 1) if heads % t == 0 and (kv % t == 0 or t % kv == 0)
    )


def _kv_choice(registry: Registry, engine: Engine, rig_gpu: str) -> tuple[str | None, str]:
    """The most compact KV dtype the container takes on the rig's GPU with the backend the
    engine picks (model/kv_backends.py judges, as for fit, check and the entrypoint)."""
    gpu = registry.gpus[rig_gpu]
    kin = family(engine.kind)
    for choice in kin.first_kv_dtypes:
        if choice is None:
            break
        decision = kv_dtype_decision(engine, gpu, choice, None)
        if not decision.ok:
            continue
        why = f"the most compact KV dtype {engine.id} and {gpu.name} take"
        first = next(iter(gpu.kv_dtypes_by_backend), None)
        if decision.backend is not None and first is not None and decision.backend != first:
            why += (
                f"; {engine.kind} serves it with {decision.backend} ({first}, tried first "
                f"on {gpu.name}, does not take {choice})"
            )
        return choice, why
    return None, f"{engine.kind}'s default (the model's dtype)"


def _base(
    registry: Registry, model: Model, weights: str, engine: Engine, rig_id: str
) -> dict[str, Any]:
    rig = registry.rigs[rig_id]
    env: dict[str, Any] = {"tp": _tp(registry, model, engine, rig.count)}
    env["max_model_len"] = min(model.architecture.max_position_embeddings, SMALLEST_CONTEXT)
    env["max_num_seqs"] = 1
    serve: dict[str, Any] = {}
    kin = family(engine.kind)
    if kin.fit == "pool":
        cap = rig.policy.max_gpu_memory_utilization
        env["gpu_memory_utilization"] = min(VLLM_UTIL, cap) if cap else VLLM_UTIL
    env.update(kin.first_envelope)
    serve.update(kin.first_serve)
    if kin.default_served == "weights-path":  # it would answer to a file path: name it
        serve["served_names"] = [model.served_name]
    if model.sampling is not None:
        serve["sampler"] = model.sampling.model_dump(exclude_none=True)
    data: dict[str, Any] = {
        "title": TODO_TITLE,
        "status": "incubating",
        "model": model.id,
        "weights": weights,
        "engine": engine.id,
        "rig": rig_id,
        "port": PORT_NEAR,
        "envelope": env,
    }
    projector = next((k for k, a in model.artifacts.items() if a.kind == "mmproj"), None)
    if kin.weights_format == "gguf" and projector is not None:
        data["mmproj"] = projector
    if serve:
        data["serve"] = serve
    data["best_for"] = TODO_BEST_FOR
    return data


def _fit(registry: Registry, data: dict[str, Any], ident: str, context: int) -> FitResult:
    profile = Profile.model_validate({"id": ident, **data})
    return fit_profile(
        registry, profile, FitOptions(max_model_len=context), lock=read_lock_or_none(registry)
    )


def largest_context(registry: Registry, data: dict[str, Any], ident: str) -> tuple[int, FitResult]:
    """The largest context (a multiple of 1024, at most the model's) that fit says fits."""
    model = registry.models[data["model"]]
    top = model.architecture.max_position_embeddings

    def fits(n: int) -> FitResult | None:
        result = _fit(registry, data, ident, n)
        return result if result.fits and result.within_policy else None

    best = fits(top)
    if best is not None:
        return top, best
    lo, hi = 0, top // CONTEXT_STEP  # lo fits (0: nothing yet), hi does not
    found: FitResult | None = None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        result = fits(mid * CONTEXT_STEP)
        if result is not None:
            lo, found = mid, result
        else:
            hi = mid
    if found is None or lo * CONTEXT_STEP < SMALLEST_CONTEXT:
        smallest = _fit(registry, data, ident, min(SMALLEST_CONTEXT, top))
        if smallest.refused:  # no context helps: the container refuses the settings
            raise ProfilegenError(
                f"{data['model']} on rig {data['rig']} with {data['engine']}: the container "
                f"refuses these settings: {'; '.join(smallest.refused)}"
            )
        raise ProfilegenError(
            f"{data['model']} ({data['weights']}) does not fit rig {data['rig']} with "
            f"{data['engine']} even at {min(SMALLEST_CONTEXT, top):,} tokens: "
            f"{smallest.free_bytes / 2**30:+.2f} GiB on the tightest GPU "
            f"(see `profilegen fit` once the profile exists, or try a larger rig)"
        )
    return lo * CONTEXT_STEP, found


@dataclass(frozen=True)
class FirstOptions:
    model: str
    rig: str
    engine: str | None = None
    weights: str | None = None


Assign = Callable[[dict[str, Any], list[str], Any], None]


def propose(
    registry: Registry,
    ident: str,
    opts: FirstOptions,
    sets: list[tuple[list[str], Any]],
    assign: Assign,
) -> Proposal:
    """The profile's data; `sets` (dotted keys) are applied first and never second-guessed."""
    model: Model = _pick(registry.models, opts.model, "model")
    # 2x3090 names the registry's plain rig of those cards, as it does in every command.
    opts = replace(opts, rig=find_registry_rig(registry, opts.rig).id)
    engine = _pick(registry.engines, opts.engine, "engine") if opts.engine else None
    variant = _weights(model, opts.weights, engine)
    if engine is None:
        fmt = "gguf" if model.artifacts[variant].format == "gguf" else "safetensors"
        kind = next(k for k in kinds() if family(k).weights_format == fmt)
        engine = default_engine(registry, kind)
    data = _base(registry, model, variant, engine, opts.rig)
    given = {".".join(parts) for parts, _value in sets}
    for parts, value in sets:
        assign(data, parts, value)
    reasons = (
        [] if opts.engine else [f"engine {engine.id}: the {engine.kind} engine most profiles run"]
    )
    if "envelope.tp" not in given:
        reasons.append(f"tp {data['envelope']['tp']}: every card of {opts.rig} the heads allow")
    if "envelope.kv_cache_dtype" not in given:
        kv, why = _kv_choice(registry, engine, registry.rigs[opts.rig].gpu)
        if kv is not None:
            data["envelope"]["kv_cache_dtype"] = kv
        reasons.append(f"kv_cache_dtype {kv or 'unset'}: {why}")
    if "envelope.max_model_len" in given:
        return Proposal(data, reasons, None)
    if fit_model(engine.kind) not in ("pool", "layer-split"):
        reasons.append(
            f"max_model_len {data['envelope']['max_model_len']:,}: fit does not model {engine.kind}"
        )
        return Proposal(data, reasons, None)
    try:
        context, result = largest_context(registry, data, ident)
    except FitError as exc:
        raise ProfilegenError(f"fit cannot size {model.id}: {exc}") from exc
    data["envelope"]["max_model_len"] = context
    reasons.append(
        f"max_model_len {context:,}: the largest context that fits {opts.rig} "
        f"(KV pool {result.kv_pool_tokens:,} tokens, {result.free_bytes / 2**30:.2f} GiB left on the tightest GPU)"
    )
    estimated = weights_estimate(registry, model.id, variant, read_lock_or_none(registry))
    reasons += [f"  {estimated}"] if estimated else []
    return Proposal(data, reasons, result)
