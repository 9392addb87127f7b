"""The words `profilegen new` writes about a profile, from the profile's own facts: the
model and its quantization, the drafter and its width, the KV dtype, TP and rig, and the
context. A profile started from a sibling never repeats the sibling's words; its best_for
placeholder says which facts set it apart.
"""

from __future__ import annotations

from ..families import family
from ..model import Profile
from ..registry import Registry

DRAFTERS = {
    "mtp": "MTP",
    "dflash": "DFlash",
    "dspark": "DSpark",
    "eagle": "EAGLE",
    "eagle3": "EAGLE-3",
    "ngram": "n-gram lookup",
    "draft_model": "draft model",
}
KV_WORDS = {"bfloat16": "bf16", "float16": "fp16", "auto": None}
TODO_BEST_FOR = "TODO: who should pick it, and over which sibling"


def context(tokens: int) -> str:
    """131072 -> 128K (a whole number of 1024s), 244320 -> 244K (thousands otherwise)."""
    return f"{tokens // 1024}K" if tokens % 1024 == 0 else f"{round(tokens / 1000)}K"


def weights(registry: Registry, p: Profile) -> str:
    model = registry.models[p.model]
    return f"{model.name} {model.artifacts[p.weights].quantization or p.weights}"


def drafter(registry: Registry, p: Profile) -> str | None:
    if p.drafter is None:
        return None
    method = registry.drafters[p.drafter.id].method
    return f"{DRAFTERS.get(method, method)} n={p.drafter.width}"


def kv(p: Profile) -> str | None:
    dtype = p.envelope.kv_cache_dtype
    return KV_WORDS.get(dtype, dtype) if dtype else None


def topology(registry: Registry, p: Profile) -> str:
    """`TP2 on 2x3090-pcie`; an engine that is one process over every card: `on 2x3090`."""
    single = family(registry.engines[p.engine].kind).single_process
    return f"on {p.rig}" if single else f"TP{p.envelope.tp} on {p.rig}"


def title(registry: Registry, p: Profile) -> str:
    """`Qwen3.8-27B INT4 AutoRound + DFlash n=5, bf16 KV, TP2 on 2x3090-pcie, 128K`."""
    head = weights(registry, p)
    drafting = drafter(registry, p)
    if drafting:
        head += f" + {drafting}"
    cache = kv(p)
    parts = [head, f"{cache} KV" if cache else None, topology(registry, p)]
    return ", ".join(x for x in parts if x) + f", {context(p.envelope.max_model_len)}"


def _drafter_change(registry: Registry, p: Profile, q: Profile) -> str | None:
    mine, theirs = drafter(registry, p), drafter(registry, q)
    if mine == theirs:
        return None
    if p.drafter and q.drafter and p.drafter.id == q.drafter.id:
        return f"{mine}, not n={q.drafter.width}"
    return f"{mine or 'no drafter'}, not {theirs or 'none'}"


def differences(registry: Registry, p: Profile, q: Profile) -> list[str]:
    """The facts of `p` that differ from `q`'s, in the order a title names them."""
    out = []
    if weights(registry, p) != weights(registry, q):
        out.append(f"{weights(registry, p)}, not {weights(registry, q)}")
    out.append(_drafter_change(registry, p, q) or "")
    if kv(p) != kv(q):
        out.append(f"{kv(p) or 'default'} KV, not {kv(q) or 'default'}")
    if topology(registry, p) != topology(registry, q):
        out.append(f"{topology(registry, p)}, not {topology(registry, q)}")
    mine, theirs = context(p.envelope.max_model_len), context(q.envelope.max_model_len)
    if mine != theirs:
        out.append(f"{mine} context, not {theirs}")
    if p.engine != q.engine:
        out.append(f"engine {p.engine}, not {q.engine}")
    return [x for x in out if x]


def best_for(registry: Registry, p: Profile, sibling: str) -> str:
    """The placeholder a contributor replaces, naming what sets the profile apart."""
    q = registry.profiles.get(sibling)
    if q is None:  # an abstract base: no sibling a user would pick instead
        return TODO_BEST_FOR
    apart = differences(registry, p, q)
    said = "; ".join(apart) if apart else "it states no fact of its own yet"
    return f"TODO: who should pick it over {sibling} ({said})"
