"""vLLM (`vllm serve`): the OpenAI-compatible server's flags, fact by fact."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..command import Arg, EngineCommand, Json
from .common import extra_args, sampler_json, spec_extra_args

if TYPE_CHECKING:
    from ..context import Context


def build(ctx: Context) -> EngineCommand:
    return EngineCommand(
        binary=(ctx.engine.binary, *ctx.engine.binary_args, "serve"),
        args=tuple(a for a in _args(ctx) if a is not None),
        spec_args=_spec(ctx) + tuple(spec_extra_args(ctx)),
    )


def _args(ctx: Context) -> list[Arg | None]:
    p, env, f = ctx.profile, ctx.profile.envelope, ctx.fact
    serve = p.serve
    kw = {
        k: ctx.slot(f"serve.chat_template_kwargs.{k}", v)
        for k, v in serve.chat_template_kwargs.items()
    }
    sampler = sampler_json(ctx)
    return [
        f("model", "--model", ctx.model_path(ctx.weights.local_dir, subfolder=ctx.weights.subfolder)),
        f("served_names", "--served-model-name", *ctx.served_names),
        f("quantization", "--quantization", env.quantization),
        f("dtype", "--dtype", env.dtype),
        f("tp", "--tensor-parallel-size", ctx.value("envelope.tp", env.tp)),
        f("pp", "--pipeline-parallel-size", ctx.value("envelope.pp", env.pp)),
        f("max_model_len", "--max-model-len", ctx.value("envelope.max_model_len", env.max_model_len)),
        f("gpu_memory_utilization", "--gpu-memory-utilization",
          ctx.value("envelope.gpu_memory_utilization", env.gpu_memory_utilization)),
        f("max_num_seqs", "--max-num-seqs", ctx.value("envelope.max_num_seqs", env.max_num_seqs)),
        f("kv_cache_memory", "--kv-cache-memory", ctx.value("envelope.kv_cache_memory", env.kv_cache_memory)),
        f("max_num_batched_tokens", "--max-num-batched-tokens",
          ctx.value("envelope.max_num_batched_tokens", env.max_num_batched_tokens)),
        f("long_prefill_token_threshold", "--long-prefill-token-threshold",
          ctx.value("envelope.long_prefill_token_threshold", env.long_prefill_token_threshold)),
        f("kv_cache_dtype", "--kv-cache-dtype", ctx.value("envelope.kv_cache_dtype", env.kv_cache_dtype)),
        f("mamba_ssm_cache_dtype", "--mamba-ssm-cache-dtype",
          ctx.value("envelope.mamba_ssm_cache_dtype", env.mamba_ssm_cache_dtype)),
        f("attention_backend", "--attention-backend", ctx.value("envelope.attention_backend", env.attention_backend)),
        ctx.switch("prefix_caching", env.prefix_caching, "--enable-prefix-caching",
                   "--no-enable-prefix-caching"),
        ctx.switch("chunked_prefill", env.chunked_prefill, "--enable-chunked-prefill",
                   "--no-enable-chunked-prefill"),
        f("mamba_cache_mode", "--mamba-cache-mode", env.mamba_cache_mode),
        ctx.switch("async_scheduling", env.async_scheduling, "--async-scheduling",
                   "--no-async-scheduling"),
        f("compilation_config", "--compilation-config", _compilation(ctx)),
        ctx.switch("enforce_eager", env.enforce_eager or None, "--enforce-eager", None),
        ctx.switch("expert_parallel", env.expert_parallel or None, "--enable-expert-parallel", None),
        ctx.switch("trust_remote_code", bool(ctx.model.trust_remote_code or serve.trust_remote_code) or None,
                   "--trust-remote-code", None),
        ctx.switch("language_model_only", serve.language_model_only or None,
                   "--language-model-only", None),
        f("limit_mm_per_prompt", "--limit-mm-per-prompt",
          Json(env.limit_mm_per_prompt) if env.limit_mm_per_prompt is not None else None),
        f("chat_template", "--chat-template", serve.chat_template),
        f("reasoning_parser", "--reasoning-parser", serve.reasoning_parser),
        ctx.switch("auto_tool_choice", serve.auto_tool_choice or None, "--enable-auto-tool-choice", None),
        f("tool_call_parser", "--tool-call-parser", serve.tool_call_parser),
        f("chat_template_kwargs", "--default-chat-template-kwargs", Json(kw) if kw else None),
        f("sampler", "--override-generation-config", _generation(ctx, sampler)),
        *_runtime(ctx),
        *extra_args(ctx),
        f("host", "--host", "0.0.0.0"),
        f("port", "--port", ctx.engine.container_port),
    ]  # fmt: skip


def _runtime(ctx: Context) -> list[Arg | None]:
    rt, f = ctx.profile.runtime, ctx.fact
    return [
        f("mamba_backend", "--mamba-backend", rt.mamba_backend),
        ctx.switch("mamba_stochastic_rounding", rt.mamba_stochastic_rounding or None,
                   "--enable-mamba-cache-stochastic-rounding", None),
        f("mamba_philox_rounds", "--mamba-cache-philox-rounds", rt.mamba_philox_rounds),
        f("generation_config", "--generation-config", rt.generation_config),
        f("hf_overrides", "--hf-overrides", Json(rt.hf_overrides) if rt.hf_overrides else None),
        f("kv_transfer", "--kv-transfer-config", Json(rt.kv_transfer) if rt.kv_transfer else None),
    ]  # fmt: skip


def _generation(ctx: Context, sampler: dict[str, Any] | None) -> Json | None:
    config = {**(sampler or {}), **ctx.profile.serve.generation}
    return Json(config) if config else None


def _compilation(ctx: Context) -> Json | None:
    env = ctx.profile.envelope
    config: dict[str, Any] = {}
    if env.cudagraph_max_capture is not None:
        config["max_cudagraph_capture_size"] = ctx.slot(
            "envelope.cudagraph_max_capture", env.cudagraph_max_capture
        )
    if env.custom_ops:
        config["custom_ops"] = list(env.custom_ops)
    config.update(env.compilation)
    return Json(config) if config else None


def _spec(ctx: Context) -> tuple[Arg, ...]:
    drafter = ctx.drafter
    if drafter is None:
        return ()
    config: dict[str, Any] = {}
    # A plain draft model is recognised by vLLM from its config: no method key.
    if drafter.method != "draft_model":
        config["method"] = drafter.method
    if drafter.artifact is not None:
        config["model"] = ctx.model_path(
            drafter.artifact.local_dir, subfolder=drafter.artifact.subfolder
        )
    config["num_speculative_tokens"] = ctx.slot("drafter.width", 0)
    return (Arg("--speculative-config", (Json(config),), "drafter"),)
