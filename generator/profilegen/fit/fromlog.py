"""A boot log against the prediction for the settings it shows, term by term.

The log names the settings (vLLM's non-default args, llama.cpp's context and cache types);
the profile is the one given, or the one whose weights and served name the log shows.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import UsageError
from ..families import fit_model
from ..lockfile.lock import Lock
from ..model import Engine, Profile
from ..registry import Registry, find_profile
from .logrig import cards_rig
from .logs import BootLog
from .options import FitOptions, FitResult
from .predict import fit_profile

_VLLM_ARGS = {  # vLLM arg -> FitOptions field
    "tensor_parallel_size": "tp",
    "max_model_len": "max_model_len",
    "gpu_memory_utilization": "gpu_util",
    "max_num_seqs": "max_num_seqs",
    "max_num_batched_tokens": "max_num_batched_tokens",
    "kv_cache_dtype": "kv_dtype",
    "kv_cache_memory_bytes": "kv_cache_memory",
    "enable_prefix_caching": "prefix_caching",
    "mamba_cache_mode": "mamba_cache_mode",
    "enforce_eager": "enforce_eager",
}
# FitOptions field -> evidence settings key
_SETTINGS = {
    "tp": "tp",
    "max_model_len": "max_model_len",
    "gpu_util": "gpu_memory_utilization",
    "max_num_seqs": "max_num_seqs",
    "max_num_batched_tokens": "max_num_batched_tokens",
    "kv_dtype": "kv_cache_dtype",
    "kv_cache_memory": "kv_cache_memory",
    "prefix_caching": "prefix_caching",
    "mamba_cache_mode": "mamba_cache_mode",
    "enforce_eager": "enforce_eager",
    "spec_n": "spec_n",
    "cudagraph_max_capture": "cudagraph_max_capture",
    "weights_bytes": "weights_bytes",
    "mmproj": "mmproj",
    "ubatch_size": "ubatch_size",
}
_ENVELOPE = {  # evidence settings key -> envelope field
    "gpu_memory_utilization": "gpu_memory_utilization",
    "kv_cache_dtype": "kv_cache_dtype",
    "cudagraph_max_capture": "cudagraph_max_capture",
}


@dataclass(frozen=True)
class Term:
    name: str
    predicted: float
    measured: float
    unit: str  # tokens | bytes | x

    @property
    def error(self) -> float:
        return self.predicted / self.measured - 1 if self.measured else 0.0


@dataclass(frozen=True)
class LogFit:
    profile: str
    engine: str  # the registry engine fitted (the log's release)
    profile_engine: str
    log: BootLog
    settings: dict[str, Any]  # what differs from the profile's envelope
    result: FitResult
    terms: list[Term]
    notes: list[str]


def _vllm_settings(args: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for arg, opt in _VLLM_ARGS.items():
        value = args.get(arg)
        if value is not None and not isinstance(value, (dict, list)):
            out[opt] = value
    spec = args.get("speculative_config")
    if isinstance(spec, dict) and isinstance(spec.get("num_speculative_tokens"), int):
        out["spec_n"] = spec["num_speculative_tokens"]
    comp = args.get("compilation_config")
    if isinstance(comp, dict) and isinstance(comp.get("max_cudagraph_capture_size"), int):
        out["cudagraph_max_capture"] = comp["max_cudagraph_capture_size"]
    return out


def log_settings(log: BootLog) -> dict[str, Any]:
    """FitOptions fields the log states."""
    if fit_model(log.engine) == "pool":
        return _vllm_settings(log.args)
    if fit_model(log.engine) == "layer-split":
        out: dict[str, Any] = {}
        if log.n_ctx:
            out["max_model_len"] = log.n_ctx
        if log.n_seq_max:
            out["max_num_seqs"] = log.n_seq_max
        if log.n_ubatch:
            out["ubatch_size"] = log.n_ubatch
        if log.cache_types:
            out["kv_dtype"] = log.cache_types[0]
        draft = _draft_tokens(log)
        if draft is not None:
            out["spec_n"] = draft
        if log.tensor_bytes:
            out["weights_bytes"] = log.tensor_bytes  # the file booted, whatever the registry's
        if not log.buffers:
            out["backend"] = "cpu"  # a CPU-only build: no GPU buffers, a CPU compute graph
        return out
    out = {}
    if log.context_len:
        out["max_model_len"] = log.context_len
    if log.running_requests:
        out["max_num_seqs"] = log.running_requests
    return out


# llama-server reserves n_parallel x (1 + draft tokens) outputs; a larger ratio is not a
# draft width (an embedding server reserves a whole batch).
_MAX_DRAFT = 16


def _draft_tokens(log: BootLog) -> int | None:
    """Draft tokens per step, from the target context's reserved outputs."""
    outputs, seqs = log.n_outputs_max, log.n_seq_max
    if not outputs or not seqs or outputs % seqs:
        return None
    draft = outputs // seqs - 1
    return draft if 0 <= draft <= _MAX_DRAFT else None


def _basename(path: str | None) -> str:
    return PurePosixPath(path).name.lower() if path else ""


def _names(registry: Registry, p: Profile) -> set[str]:
    model = registry.models[p.model]
    artifact = model.artifacts[p.weights]
    names = {_basename(artifact.local_dir), artifact.repo.split("/")[-1].lower()}
    names |= {_basename(f) for f in artifact.files}
    names |= {n.lower() for n in p.serve.served_names} | {model.served_name.lower()}
    return names - {""}


def _log_names(log: BootLog) -> set[str]:
    names = {_basename(log.model_file)}
    served = log.args.get("served_model_name")
    if isinstance(served, list):
        names |= {str(s).lower() for s in served}
    elif isinstance(served, str):
        names.add(served.lower())
    names.add(_basename(str(log.args.get("model") or log.args.get("model_tag") or "")))
    return names - {""}


def _spec_method(log: BootLog) -> str | None:
    spec = log.args.get("speculative_config")
    if isinstance(spec, dict):
        method = spec.get("method")
        return str(method) if method else "draft_model"
    return None


def _score(registry: Registry, p: Profile, log: BootLog, settings: dict[str, Any]) -> int:
    """How many of the log's settings the profile's envelope and drafter share."""
    env = p.envelope
    same = {
        "tp": env.tp, "max_model_len": env.max_model_len, "max_num_seqs": env.max_num_seqs,
        "gpu_util": env.gpu_memory_utilization, "kv_dtype": env.kv_cache_dtype,
    }  # fmt: skip
    score = sum(1 for k, v in same.items() if k in settings and settings[k] == v)
    if fit_model(log.engine) == "pool":
        method = registry.drafters[p.drafter.id].method if p.drafter else None
        score += 2 if _spec_method(log) == method else 0
    return score


def find_log_profile(registry: Registry, log: BootLog, asked: str | None) -> Profile:
    if asked is not None:
        return find_profile(registry, asked)
    kinds = {e.id for e in registry.engines.values() if e.kind == log.engine}
    names = _log_names(log)
    found = [
        p for p in registry.concrete_profiles()
        if p.engine in kinds and names & _names(registry, p)
    ]  # fmt: skip
    if not found:
        raise UsageError(
            f"no {log.engine} profile serves the weights or name this log shows "
            f"({', '.join(sorted(names)) or 'none shown'}); name one with --profile"
        )
    settings = log_settings(log)
    scores = {p.id: _score(registry, p, log, settings) for p in found}
    best = max(scores.values())
    top = sorted(pid for pid, score in scores.items() if score == best)
    if len(top) > 1:
        raise UsageError(
            f"the log fits {len(top)} profiles ({', '.join(top[:6])}); name one with --profile"
        )
    return registry.profiles[top[0]]


def _is_release(engine: Engine, version: str) -> bool:
    """Whether the engine entry is the release the log names (0.27.1, or a build b10236)."""
    want = version.lstrip("v")
    return engine.version == want or want in engine.id or want in (engine.tag or "")


def log_engine(registry: Registry, profile: Profile, log: BootLog) -> tuple[Engine, list[str]]:
    """The registry engine of the log's release: the profile's when the versions agree."""
    own = registry.engines[profile.engine]
    if not log.version or _is_release(own, log.version):
        return own, []
    same = sorted(
        (
            e
            for e in registry.engines.values()
            if e.kind == own.kind and _is_release(e, log.version)
        ),
        key=lambda e: e.id,
    )
    if same:
        return same[0], []
    return own, [f"no registry engine is {own.kind} {log.version}: fitted on {own.id}"]


def _terms(log: BootLog, r: FitResult) -> list[Term]:
    b = r.budget
    rows: list[tuple[str, float, float | None, str]] = [
        ("KV pool", r.kv_pool_tokens, log.kv_pool_tokens, "tokens"),
        ("max concurrency", r.max_concurrency, log.max_concurrency, "x"),
    ]
    if fit_model(log.engine) == "pool":
        rows += [
            ("available KV per GPU", r.kv_available_bytes or 0, log.kv_available_bytes, "bytes"),
            (
                "model loading per GPU",
                b["weights"] + b["drafter"],
                log.weights_loaded_bytes,
                "bytes",
            ),
            ("CUDA graph estimate", b["cuda_graphs"], log.cuda_graph_bytes, "bytes"),
        ]
    elif fit_model(log.engine) == "layer-split":
        rows += llamacpp_terms(log, r)
    return [Term(n, p, m, u) for n, p, m, u in rows if m is not None]


def llamacpp_terms(log: BootLog, r: FitResult) -> list[tuple[str, float, float | None, str]]:
    """Model, KV, RS and compute buffers, and their total: on the GPUs, or in host memory
    for a CPU-only boot (where the whole model and every buffer is the host's)."""
    gpu = bool(log.buffers)
    measured = log.buffers if gpu else log.host_buffers
    model = sum(x["weights"] for x in r.budgets) + (0 if gpu else r.host_weights_bytes)
    where = "GPU" if gpu else "host"
    rows: list[tuple[str, float, float | None, str]] = [
        (f"model buffers ({where})", model, measured.get("model"), "bytes"),
        ("KV buffers", r.kv_cache_bytes, measured.get("KV"), "bytes"),
        ("RS buffers", sum(x["recurrent_state"] for x in r.budgets), measured.get("RS"), "bytes"),
        (
            "compute buffers",
            sum(x["compute_buffer"] for x in r.budgets),
            measured.get("compute"),
            "bytes",
        ),
    ]
    shown = [(p, m) for _, p, m, _ in rows if m is not None]
    if len(shown) > 1:
        rows.append(
            ("buffers in all", sum(p for p, _ in shown), sum(m for _, m in shown if m), "bytes")
        )
    return rows


def _differences(profile: Profile, opts: dict[str, Any], spec_n: int) -> dict[str, Any]:
    env = profile.envelope.model_dump()
    env["spec_n"] = spec_n
    out = {}
    for opt, value in opts.items():
        key = _SETTINGS.get(opt)
        if key is None:
            continue
        field = _ENVELOPE.get(key, key)
        if env.get(field) != value:
            out[key] = value
    return out


def fit_log(registry: Registry, log: BootLog, opts: FitOptions, lock: Lock | None) -> LogFit:
    profile = find_log_profile(registry, log, opts.profile)
    engine, notes = log_engine(registry, profile, log)
    settings = log_settings(log)
    asked = dict(settings)
    seen = cards_rig(registry, log, profile)  # a boot is fitted on the cards it ran on
    if seen is not None:
        asked["rig"] = seen
    asked.update(opts.what_ifs())  # the command line wins over what the log shows
    asked["engine"] = opts.engine or engine.id
    result = fit_profile(registry, profile, FitOptions(**asked), lock=lock)
    spec_n = profile.drafter.width if profile.drafter else 0
    return LogFit(
        profile=profile.id,
        engine=asked["engine"],
        profile_engine=profile.engine,
        log=log,
        settings=_differences(profile, {**settings, **opts.what_ifs()}, spec_n),
        result=result,
        terms=_terms(log, result),
        notes=notes + result.notes,
    )


def evidence_record(
    fit: LogFit,
    source: Path,
    rig: str,
    today: datetime.date | None = None,
    digest: str | None = None,
) -> dict[str, Any]:
    """The evidence entry `--record` adds to the profile; `digest` (of the log's text) lets a
    second recording of the same log find the first."""
    day = (today or datetime.datetime.now(datetime.timezone.utc).date()).isoformat()
    log = fit.log
    measured: dict[str, Any] = {}
    for key in (
        "kv_pool_tokens",
        "max_concurrency",
        "kv_available_bytes",
        "weights_loaded_bytes",
        "cuda_graph_bytes",
    ):
        value = getattr(log, key)
        if value is not None:
            measured[key] = value
    if fit_model(log.engine) == "layer-split":
        for kind, key in (
            ("KV", "kv_buffer_bytes"),
            ("model", "model_buffer_bytes"),
            ("RS", "rs_buffer_bytes"),
            ("compute", "compute_buffer_bytes"),
        ):
            if log.buffers.get(kind):
                measured[key] = log.buffers[kind]
    measured["boots"] = True
    stem = re.sub(r"[^a-z0-9]+", "-", source.stem.lower()).strip("-")[:40] or "log"
    record: dict[str, Any] = {
        "key": f"{fit.profile[:40]}-{day}-{stem}".strip("-")[:80],
        "date": day,
        "rig": rig,
    }
    if fit.engine != fit.profile_engine:
        record["engine"] = fit.engine
    named = f"boot log {source.name} (profilegen fit log"
    record["source"] = f"{named}, sha256 {digest})" if digest else f"{named})"
    if log.version:
        record["summary"] = f"{log.engine} {log.version}"
    if fit.settings:
        record["settings"] = fit.settings
    record["measured"] = measured
    return record
