"""Hardware legality as data: TP and heads, KV dtypes per backend, memory and context."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Finding, Value
from ...families import family
from ...model import Profile, Rig
from ...model.common import Requirements
from ...model.kv_backends import kv_dtype_decision
from ...model.model import Architecture
from .base import CheckContext, rule


def _at(ctx: CheckContext, profile: Profile, *node: str | int) -> Value:
    return ctx.at(profile.id, *node)


def _own(ctx: CheckContext, profile: Profile, *nodes: tuple[str | int, ...]) -> Value:
    """The first of several keys set in the profile's own file; else the first.

    When two values clash and one is inherited from a base, the finding belongs in the
    file of the profile that made the combination.
    """
    own_file = ctx.registry.where("profiles", profile.id).file
    for node in nodes:
        if ctx.registry.where("profiles", profile.id, node).file == own_file:
            return ctx.at(profile.id, *node)
    return ctx.at(profile.id, *nodes[0])


@rule("hw-tp", "tensor parallelism divides the attention heads and fits the rig")
def tensor_parallel(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    for p in reg.concrete_profiles():
        rig = reg.rigs[p.rig]
        tp, pp = p.envelope.tp, p.envelope.pp or 1
        if family(reg.engines[p.engine].kind).single_process:
            # One process splits layers, not heads (llama.cpp): only the card count matters.
            if tp > rig.count:
                yield ctx.report(
                    _at(ctx, p, "envelope", "tp"), f"{tp} cards on a {rig.count}-card rig"
                )
            continue
        arch = reg.models[p.model].architecture
        reasons = _tp_reasons(tp, rig, arch, p.model)
        if reasons:
            # One value, one finding: every reason the TP is wrong, and the TPs that work.
            fits = [t for t in range(1, rig.count + 1) if not _tp_reasons(t, rig, arch, p.model)]
            yield ctx.report(
                _at(ctx, p, "envelope", "tp"),
                f"TP {tp} {_listed(reasons, 'and')}",
                hint=f"use TP {_listed([str(t) for t in fits], 'or')}",
            )
        elif tp * pp > rig.count:
            yield ctx.report(
                _at(ctx, p, "envelope", "pp"),
                f"TP {tp} x PP {pp} needs {tp * pp} GPUs, rig {rig.id} has {rig.count}",
                hint=f"TP x PP is at most {rig.count}",
            )


def _tp_reasons(tp: int, rig: Rig, arch: Architecture, model: str) -> list[str]:
    """Why a TP does not work for the model's heads on the rig (none: it does)."""
    heads, kv = arch.num_attention_heads, arch.num_kv_heads
    reasons = []
    if tp > rig.count:
        reasons.append(f"needs {tp} GPUs, rig {rig.id} has {rig.count}")
    if heads % tp:
        reasons.append(f"does not divide the {heads} attention heads of {model}")
    if kv % tp and tp % kv:
        reasons.append(f"neither divides nor is a multiple of the {kv} KV heads")
    return reasons


def _listed(items: list[str], last: str) -> str:
    """`a`, `a and b`, `a, b and c` (or `or`)."""
    return items[-1] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"


@rule(
    "hw-kv-dtype", "the KV dtype is accepted by the engine and by the attention backend on the GPU"
)
def kv_dtype(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    for p in reg.concrete_profiles():
        env = p.envelope
        engine = reg.engines[p.engine]
        gpu = reg.gpus[reg.rigs[p.rig].gpu]
        # One judge (model/kv_backends.py): fit, new, explain and the entrypoint ask it too.
        decision = kv_dtype_decision(engine, gpu, env.kv_cache_dtype, env.attention_backend)
        if decision.ok:
            continue
        if env.kv_cache_dtype is not None and env.kv_cache_dtype not in engine.kv_cache_dtypes:
            yield ctx.report(
                _at(ctx, p, "envelope", "kv_cache_dtype"),
                f"{engine.kind} does not know KV dtype {env.kv_cache_dtype!r}",
                hint="one of " + ", ".join(engine.kv_cache_dtypes),
            )
            continue
        named = ("envelope", "attention_backend") if env.attention_backend else ()
        yield ctx.report(
            _own(ctx, p, ("envelope", "kv_cache_dtype"), *([named] if named else [])),
            f"{p.id}: {decision.reason}",
            hint="use a KV dtype it takes, or name an attention backend that takes this one",
        )


def _requirement_problems(req: Requirements, p: Profile, engine_kind: str) -> list[tuple[str, str]]:
    env = p.envelope
    out = []
    if req.engines and engine_kind not in req.engines:
        out.append(("engine", f"engine {engine_kind} (needs {', '.join(req.engines)})"))
    if req.kv_cache_dtypes and (env.kv_cache_dtype or "auto") not in req.kv_cache_dtypes:
        out.append(
            (
                "envelope.kv_cache_dtype",
                f"KV dtype {env.kv_cache_dtype} (needs {', '.join(req.kv_cache_dtypes)})",
            )
        )
    # Unset: the engine picks a backend that takes the KV dtype (see the hw-kv-dtype rule).
    backend = env.attention_backend
    if req.attention_backends and backend is not None and backend not in req.attention_backends:
        out.append(
            (
                "envelope.attention_backend",
                f"attention backend {env.attention_backend} (needs {', '.join(req.attention_backends)})",
            )
        )
    # Unset: vLLM's default, which schedules asynchronously.
    asynchronous = env.async_scheduling is not False
    if req.async_scheduling is not None and asynchronous != req.async_scheduling:
        want = "on" if req.async_scheduling else "off"
        out.append(
            (
                "envelope.async_scheduling",
                f"async scheduling {'on' if asynchronous else 'off'} (needs {want})",
            )
        )
    return out


@rule("requirements", "drafter and patch requirements (engine, KV dtype, backend, scheduler) hold")
def requirements(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    for p in reg.concrete_profiles():
        kind = reg.engines[p.engine].kind
        owners: list[tuple[str, Requirements, tuple[str | int, ...]]] = []
        if p.drafter is not None:
            drafter = reg.drafters[p.drafter.id]
            owners.append((f"drafter {drafter.id}", drafter.requires, ("drafter", "id")))
            if drafter.models and p.model not in drafter.models:
                yield ctx.report(
                    _at(ctx, p, "drafter", "id"),
                    f"drafter {drafter.id} is not made for model {p.model}",
                    hint="it drafts for " + ", ".join(drafter.models),
                )
            if (
                drafter.builtin
                and reg.models[p.model].architecture.mtp_layers == 0
                and drafter.method == "mtp"
            ):
                yield ctx.report(
                    _at(ctx, p, "drafter", "id"),
                    f"{p.model} has no built-in MTP head",
                )
        for i, patch_id in enumerate(p.patches):
            owners.append((f"patch {patch_id}", reg.patches[patch_id].requires, ("patches", i)))
        for owner, req, node in owners:
            for field, problem in _requirement_problems(req, p, kind):
                where = _at(ctx, p, *field.split(".")) if "." in field else _at(ctx, p, *node)
                reason = f" ({req.reason})" if req.reason else ""
                yield ctx.report(where, f"{owner} cannot run with {problem}{reason}")


@rule(
    "hw-memory",
    "utilization within the rig policy; weights fit the cards; context within the model",
)
def memory(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    for p in reg.concrete_profiles():
        rig = reg.rigs[p.rig]
        gpu = reg.gpus[rig.gpu]
        env = p.envelope
        arch = reg.models[p.model].architecture
        cap = rig.policy.max_gpu_memory_utilization
        util = env.gpu_memory_utilization
        if cap is not None and util is not None and util > cap:
            yield ctx.report(
                _at(ctx, p, "envelope", "gpu_memory_utilization"),
                f"utilization {util} exceeds rig {rig.id}'s policy of {cap}",
                hint=rig.policy.reason,
            )
        if env.max_model_len > arch.max_position_embeddings:
            yield ctx.report(
                _at(ctx, p, "envelope", "max_model_len"),
                f"max_model_len {env.max_model_len} exceeds {p.model}'s maximum of {arch.max_position_embeddings}",
            )
        weights = reg.models[p.model].artifacts[p.weights].size_bytes
        cards = min(env.tp, rig.count)
        budget = gpu.vram.bytes * (util or 1.0) * cards
        if env.offload is not None and env.host_ram is not None:
            budget += env.host_ram.bytes
        if weights is not None and weights > budget and (env.offload is None or env.host_ram):
            yield ctx.report(
                _at(ctx, p, "weights"),
                f"weights of {weights / 2**30:.1f} GiB do not fit {cards} x {gpu.name} at utilization {util or 1.0}",
                hint="use more cards (TP) or a smaller quantization",
            )
