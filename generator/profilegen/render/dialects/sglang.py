"""SGLang (`python3 -m sglang.launch_server`): the flags, fact by fact."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..command import Arg, EngineCommand, Json, Var
from .common import extra_args, sampler_json

if TYPE_CHECKING:
    from ..context import Context

ALGORITHMS = {"eagle3": "EAGLE3", "eagle": "EAGLE", "mtp": "NEXTN", "dflash": "DFLASH"}


def build(ctx: Context) -> EngineCommand:
    return EngineCommand(
        binary=(ctx.engine.binary, *ctx.engine.binary_args),
        args=tuple(a for a in _args(ctx) if a is not None),
        spec_args=_spec(ctx),
    )


def _args(ctx: Context) -> list[Arg | None]:
    p, env, f = ctx.profile, ctx.profile.envelope, ctx.fact
    serve = p.serve
    sampler = sampler_json(ctx)
    return [
        f("model", "--model-path", ctx.model_path(ctx.weights.local_dir, subfolder=ctx.weights.subfolder)),
        f("served_names", "--served-model-name", *ctx.served_names),
        f("tp", "--tp-size", ctx.value("envelope.tp", env.tp)),
        f("dtype", "--dtype", env.dtype),
        f("quantization", "--quantization", ctx.value("envelope.quantization", env.quantization)),
        f("kv_cache_dtype", "--kv-cache-dtype", ctx.value("envelope.kv_cache_dtype", env.kv_cache_dtype)),
        f("max_model_len", "--context-length", ctx.value("envelope.max_model_len", env.max_model_len)),
        f("gpu_memory_utilization", "--mem-fraction-static",
          ctx.value("envelope.gpu_memory_utilization", env.gpu_memory_utilization)),
        f("max_num_seqs", "--max-running-requests", ctx.value("envelope.max_num_seqs", env.max_num_seqs)),
        f("attention_backend", "--attention-backend", env.attention_backend),
        f("max_num_batched_tokens", "--chunked-prefill-size", env.max_num_batched_tokens),
        ctx.switch("trust_remote_code", bool(ctx.model.trust_remote_code or serve.trust_remote_code) or None,
                   "--trust-remote-code", None),
        f("reasoning_parser", "--reasoning-parser", serve.reasoning_parser),
        f("tool_call_parser", "--tool-call-parser", serve.tool_call_parser),
        f("sampler", "--preferred-sampling-params", Json(sampler) if sampler else None),
        *extra_args(ctx),
        f("host", "--host", "0.0.0.0"),
        f("port", "--port", ctx.engine.container_port),
    ]  # fmt: skip


def _spec(ctx: Context) -> tuple[Arg, ...]:
    drafter = ctx.drafter
    if drafter is None:
        return ()
    args = [Arg("--speculative-algorithm", (ALGORITHMS[drafter.method],), "drafter")]
    if drafter.artifact is not None:
        a = drafter.artifact
        path = ctx.model_path(a.local_dir, subfolder=a.subfolder)
        args.append(Arg("--speculative-draft-model-path", (path,), "drafter"))
        if a.quantization is None:
            # An unquantized drafter must not inherit the target's --quantization.
            args.append(Arg("--speculative-draft-model-quantization", ("unquant",), "drafter"))
    if drafter.method in ("eagle3", "eagle", "mtp"):
        # Chain drafting (top-k 1): SPEC_N steps propose SPEC_N tokens, verified with the root.
        args += [
            Arg("--speculative-num-steps", (ctx.var("drafter.width"),), "drafter"),
            Arg("--speculative-eagle-topk", (1,), "drafter"),
            Arg("--speculative-num-draft-tokens", (Var("pg_draft_tokens"),), "drafter"),
        ]
    return tuple(args)
