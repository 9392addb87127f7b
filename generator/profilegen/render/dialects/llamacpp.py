"""llama.cpp's llama-server (and its forks): the flags, fact by fact."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..command import Arg, EngineCommand, Joined, Json, Var
from .common import SAMPLER, extra_args, spec_extra_args

if TYPE_CHECKING:
    from ..context import Context

# llama-server's --spec-type by drafter method (a plain draft model needs none).
SPEC_TYPES = {"mtp": "draft-mtp", "eagle3": "draft-eagle3", "dflash": "draft-dflash"}
SAMPLER_FLAGS = {
    "temperature": "--temp",
    "top_p": "--top-p",
    "top_k": "--top-k",
    "min_p": "--min-p",
    "presence_penalty": "--presence-penalty",
    "repetition_penalty": "--repeat-penalty",
}
# The fact llama-server's --reasoning carries (on, off or auto, from its tunable).
THINKING = "serve.chat_template_kwargs.enable_thinking"


def build(ctx: Context) -> EngineCommand:
    return EngineCommand(
        binary=(ctx.engine.binary, *ctx.engine.binary_args),
        args=tuple(a for a in _args(ctx) if a is not None),
        spec_args=_spec(ctx),
    )


def _file(ctx: Context, artifact: Any) -> str:
    return ctx.model_path(
        artifact.local_dir, artifact.files[0] if artifact.files else None, artifact.subfolder
    )


def _args(ctx: Context) -> list[Arg | None]:
    p, env, f = ctx.profile, ctx.profile.envelope, ctx.fact
    serve = p.serve
    kv = ctx.value("envelope.kv_cache_dtype", env.kv_cache_dtype)
    # Without names of its own, llama-server answers to its weights path: no --alias.
    alias = ctx.served_names[0] if ctx.profile.serve.served_names else None
    return [
        f("model", "-m", _file(ctx, ctx.weights)),
        f("mmproj", "--mmproj", _file(ctx, ctx.mmproj) if ctx.mmproj else None),
        f("served_names", "--alias", alias),
        f("max_model_len", "-c", ctx.value("envelope.context_flag", env.context_flag)),
        f("batch_size", "-b", ctx.value("envelope.batch_size", env.batch_size)),
        f("ubatch_size", "-ub", ctx.value("envelope.ubatch_size", env.ubatch_size)),
        f("gpu_layers", "-ngl", env.gpu_layers),
        f("split_mode", "-sm", ctx.value("envelope.split_mode", env.split_mode)),
        f("tensor_split", "-ts",
          ctx.value("envelope.tensor_split", ",".join(f"{x:g}" for x in env.tensor_split) or None)),
        ctx.onoff("flash_attn", "-fa", env.flash_attn),
        f("cache_type_k", "--cache-type-k", kv),
        f("cache_type_v", "--cache-type-v",
          kv if env.kv_cache_dtype_v is None else ctx.value("envelope.kv_cache_dtype_v", env.kv_cache_dtype_v)),
        f("max_num_seqs", "-np", ctx.value("envelope.max_num_seqs", env.max_num_seqs)),
        ctx.switch("jinja", serve.jinja or None, "--jinja", None),
        f("chat_template", "--chat-template-file", serve.chat_template),
        f("reasoning", "--reasoning", _reasoning(ctx)),
        f("reasoning_budget", "--reasoning-budget", serve.reasoning_budget),
        f("reasoning_parser", "--reasoning-format",
          ctx.value("serve.reasoning_parser", serve.reasoning_parser)),
        f("chat_template_kwargs", "--chat-template-kwargs", _kwargs(ctx)),
        *_sampler(ctx),
        *_runtime(ctx),
        *_draft_placement(ctx),
        *extra_args(ctx),
        f("host", "--host", "0.0.0.0"),
        f("port", "--port", ctx.engine.container_port),
    ]  # fmt: skip


def _runtime(ctx: Context) -> list[Arg | None]:
    rt, f, on = ctx.profile.runtime, ctx.fact, ctx.switch
    overrides = ",".join(f"{o.pattern}={o.device}" for o in rt.tensor_overrides)
    dry = rt.dry
    return [
        f("threads", "-t", rt.threads),
        f("tensor_overrides", "-ot", overrides or None),
        on("mmap", rt.mmap, "--mmap", "--no-mmap"),
        on("host_buffers", None if rt.host_buffers is None else not rt.host_buffers, "--no-host", None),
        on("kv_unified", rt.kv_unified, "--kv-unified", "--no-kv-unified"),
        on("prompt_cache", rt.prompt_cache, "--cache-prompt", "--no-cache-prompt"),
        f("prompt_cache_ram_mib", "--cache-ram", rt.prompt_cache_ram_mib),
        ctx.onoff("auto_fit", "--fit", rt.auto_fit),
        f("auto_fit_margin_mib", "--fit-margin", rt.auto_fit_margin_mib),
        f("main_gpu", "--main-gpu", rt.main_gpu),
        f("max_gpus", "--max-gpu", rt.max_gpus),
        on("context_shift", rt.context_shift, "--context-shift", "--no-context-shift"),
        on("parallel_tool_calls", rt.parallel_tool_calls or None, "--parallel-tool-calls", None),
        f("image_min_tokens", "--image-min-tokens", rt.image_min_tokens),
        f("image_max_tokens", "--image-max-tokens", rt.image_max_tokens),
        *(f("gguf_overrides", "--override-kv", f"{k}={v}") for k, v in rt.gguf_overrides.items()),
        _context_override(ctx),
        on("kv_hadamard_k", ("k" in rt.kv_hadamard) or None, "-khad", None),
        on("kv_hadamard_v", ("v" in rt.kv_hadamard) or None, "-vhad", None),
        on("merge_qkv", rt.merge_qkv or None, "--merge-qkv", None),
        f("recurrent_checkpoints", "--recurrent-ckpt-mode", rt.recurrent_checkpoints),
        f("moe_cache", "--moe-cache", rt.moe_cache),
        f("repeat_last_n", "--repeat-last-n", rt.repeat_last_n),
        f("dry_multiplier", "--dry-multiplier", dry.multiplier if dry else None),
        f("dry_base", "--dry-base", dry.base if dry else None),
        f("dry_allowed_length", "--dry-allowed-length", dry.allowed_length if dry else None),
    ]  # fmt: skip


def _context_override(ctx: Context) -> Arg | None:
    key = ctx.profile.runtime.context_length_key
    if key is None:
        return None
    context = ctx.value("envelope.context_flag", ctx.profile.envelope.max_model_len)
    word = Joined((f"{key}=int:", context)) if isinstance(context, Var) else f"{key}=int:{context}"
    return ctx.fact("context_length_key", "--override-kv", word)


def _draft_placement(ctx: Context) -> list[Arg | None]:
    """Where the draft model runs; passed whenever the profile drafts (ignored without one)."""
    use = ctx.profile.drafter
    if use is None:
        return []
    return [
        ctx.fact("draft_gpu_layers", "-ngld", use.gpu_layers),
        ctx.fact("draft_device", "-devd", use.device),
        ctx.fact("draft_cross_ctx", "--spec-dflash-cross-ctx", use.cross_ctx),
    ]


def _reasoning(ctx: Context) -> Any:
    if THINKING in ctx.by_field:
        return Var("pg_reasoning")  # on, off or auto: normalised by the entrypoint
    thinking = ctx.profile.serve.chat_template_kwargs.get("enable_thinking")
    return None if thinking is None else ("on" if thinking else "off")


def _kwargs(ctx: Context) -> Json | None:
    """enable_thinking travels as --reasoning; the other kwargs reach the template as JSON."""
    kw = ctx.profile.serve.chat_template_kwargs
    rest = {
        k: ctx.slot(f"serve.chat_template_kwargs.{k}", v)
        for k, v in kw.items()
        if k != "enable_thinking"
    }
    return Json(rest) if rest else None


def _sampler(ctx: Context) -> list[Arg | None]:
    sampler = ctx.profile.serve.sampler
    if sampler is None:
        return []
    return [
        ctx.fact(key, SAMPLER_FLAGS[key], ctx.value(f"serve.sampler.{key}", getattr(sampler, key)))
        for key in SAMPLER
    ]


def _spec(ctx: Context) -> tuple[Arg, ...]:
    drafter, use = ctx.drafter, ctx.profile.drafter
    if drafter is None or use is None:
        return ()
    spec_type = ctx.engine.spec_types.get(drafter.method, SPEC_TYPES.get(drafter.method))
    flag = ctx.flag("spec_type", "--spec-type")
    args = []
    if ctx.engine.spec_style == "compound" and spec_type is not None:
        # ik_llama: `--spec-type mtp:n_max=N,p_min=P`, the width inside the value.
        parts: list[str | Var] = [f"{spec_type}:n_max=", ctx.var("drafter.width")]
        if use.min_probability is not None:
            parts.append(f",p_min={use.min_probability}")
        args.append(Arg(flag, (Joined(tuple(parts)),), "drafter"))
    elif spec_type is not None:
        args.append(Arg(flag, (spec_type,), "drafter"))
    if drafter.artifact is not None:
        path = _file(ctx, drafter.artifact)
        args.append(Arg(ctx.flag("spec_draft_model", "--spec-draft-model"), (path,), "drafter"))
    if use.pass_width and ctx.engine.spec_style == "flags":
        width = ctx.flag("spec_width", "--spec-draft-n-max")
        args.append(Arg(width, (ctx.var("drafter.width"),), "drafter"))
    return tuple(args) + tuple(spec_extra_args(ctx))
