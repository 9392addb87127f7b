"""The fit model beyond Qwen hybrids: sliding windows, Mamba-2, MoE, releases, SGLang.

Each geometry test pins a figure an engine logged, reproduced from config.json facts alone.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from profilegen.fit import formulas as fm

GIB = 1 << 30
MIB = 1 << 20
RTX3090 = fm.GpuSpec(vram_bytes=24 * GIB)
RTX5090 = fm.GpuSpec(vram_bytes=32 * GIB)

# Gemma 4 31B text_config: 50 sliding layers (16 KV heads of 256, window 1024) and 10
# global ones (4 KV heads of 512).
GEMMA4_31B = fm.ModelShape(
    num_layers=60,
    num_kv_layers=10,
    num_attention_heads=32,
    num_kv_heads=4,
    head_dim=512,
    hidden_size=5376,
    intermediate_size=21504,
    vocab_size=262144,
    sliding_layers=50,
    sliding_window=1024,
    sliding_kv_heads=16,
    sliding_head_dim=256,
    multimodal=True,
)
# Nemotron-3-Puzzle-75B-A9B: 8 attention, 40 Mamba-2 (128 heads x 64, state 96, 8 groups)
# and 40 LatentMoE blocks.
NEMOTRON = fm.ModelShape(
    num_layers=88,
    num_kv_layers=8,
    num_attention_heads=32,
    num_kv_heads=2,
    head_dim=128,
    hidden_size=4096,
    intermediate_size=21504,
    vocab_size=131072,
    mamba2_layers=40,
    mamba2_heads=128,
    mamba2_head_dim=64,
    mamba2_state=96,
    mamba2_groups=8,
    mamba2_conv_kernel=4,
    moe_experts=512,
    moe_experts_per_token=8,
    moe_intermediate_size=2688,
    moe_shared_intermediate_size=5376,
    moe_layers=40,
)


def _pinned(shape: fm.ModelShape, gpu: fm.GpuSpec, pool: int, **kw: object) -> fm.VllmInputs:
    base = fm.VllmInputs(
        shape=shape,
        gpu=gpu,
        tp=2,
        gpu_memory_utilization=0.9,
        weights_bytes=18 * 10**9,
        max_model_len=262144,
        max_num_seqs=2,
        kv_cache_dtype="int8_per_token_head",
        kv_cache_memory_bytes=pool,
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def test_gemma4_sliding_and_global_pages_reproduce_the_logged_pool() -> None:
    # Logged on 2x3090: "Available KV cache memory: 10.82 GiB", "GPU KV cache size:
    # 466,892 tokens". Global layers get 32-token blocks padded to the sliding page.
    inputs = _pinned(GEMMA4_31B, RTX3090, 17449 * 10 * 66_560, max_num_batched_tokens=4096)
    layout = fm.pool_layout(inputs)
    assert (layout.page_bytes, layout.group_size) == (66_560, 10)
    assert layout.blocks_per_request == 8192 + 5 * (-(-(1023 + 4096) // 16) + 1)
    assert fm.predict_vllm(inputs).kv_pool_tokens == 466_892


def test_sliding_window_costs_fixed_pages_not_tokens() -> None:
    short = fm.pool_layout(_pinned(GEMMA4_31B, RTX3090, GIB, max_model_len=65536))
    long = fm.pool_layout(_pinned(GEMMA4_31B, RTX3090, GIB))
    assert short.fixed_bytes_per_request == long.fixed_bytes_per_request
    assert long.blocks_per_request - short.blocks_per_request == (262144 - 65536) // 32


def test_nemotron_mamba2_pool_reproduces_337042_tokens() -> None:
    # The 820 MB pin on 2x RTX 5090 (v0.25.1, prefix caching off): 63 blocks of 6,080 tokens.
    inputs = _pinned(NEMOTRON, RTX5090, 820_000_000, max_num_seqs=4, mamba_cache_mode="none")
    state = fm.mamba_state_bytes(NEMOTRON, 2, 0, "auto", "auto")
    assert state == 4864 * 3 * 2 + 64 * 64 * 96 * 4  # conv bf16 + SSM float32, per card
    fit = fm.predict_vllm(inputs)
    assert (fit.block_size, fit.num_blocks, fit.blocks_per_request) == (6080, 63, 49)
    assert fit.kv_pool_tokens == 337_042


def test_moe_activations_use_the_routed_width() -> None:
    dense_width = fm.ffn_width(replace(NEMOTRON, moe_experts=0))
    assert dense_width == 21504
    assert fm.ffn_width(NEMOTRON) == max(8 * 2688 + 5376, 21504)
    share = fm.routed_expert_share(NEMOTRON)
    assert 0.9 < share < 1.0  # 512 experts outweigh everything else
    # fused_moe keeps every routed copy of a token: (8, 2 x 2688/2), (8, 2688/2), (8, 4096).
    per_token = 2 * 4096 + 8 * (3 * 1344 + 4096) + 3 * 2688
    assert fm.activation_peak_bytes(NEMOTRON, 2, 1024) == 1024 * per_token * 2


def _int4(engine: fm.VllmEngineFacts, **kw: object) -> fm.VllmInputs:
    shape = replace(NEMOTRON, mamba2_layers=0, moe_experts=0, num_kv_layers=48, num_layers=48)
    base = fm.VllmInputs(
        shape=shape,
        gpu=RTX3090,
        tp=2,
        gpu_memory_utilization=0.9,
        weights_bytes=18 * GIB,
        max_model_len=32768,
        max_num_seqs=1,
        weight_path="marlin4",
        engine=engine,
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def test_free_memory_accounting_charges_slack_and_buffers() -> None:
    old = fm.predict_vllm(_int4(fm.VllmEngineFacts(non_kv_accounting="torch-reserved")))
    new = fm.predict_vllm(_int4(fm.VllmEngineFacts(non_kv_accounting="free-memory")))
    slack = fm.DEFAULT_CONSTANTS.vllm_free_memory_slack_marlin4
    assert old.budget.profiler_extra == 0
    assert new.budget.profiler_extra == slack  # no drafter, no media: no buffers
    assert new.kv_available_bytes == old.kv_available_bytes - slack
    # The slack is charged, not held: what the smaller pool leaves stays free (resident
    # memory fell by as much as the pool from v0.25.1 to v0.27.1).
    assert new.budget.free == old.budget.free + slack


def test_capture_sizes_follow_vllm_rules() -> None:
    base = _int4(fm.VllmEngineFacts())
    assert fm.capture_sizes(replace(base, max_num_seqs=2)) == [1, 2, 4]
    mtp = fm.DrafterSpec(kind="mtp", weights_bytes=0, embedded_in_target=True)
    spec3 = replace(base, drafter=mtp, num_speculative_tokens=3)
    assert fm.capture_sizes(replace(spec3, max_num_seqs=2)) == [4, 8, 16]
    assert len(fm.capture_sizes(replace(spec3, max_num_seqs=16))) == 17
    assert fm.capture_sizes(replace(base, max_num_seqs=512))[-1] == 512


def test_sglang_static_fraction_splits_weights_state_and_kv() -> None:
    qwen = fm.ModelShape(
        num_layers=64, num_kv_layers=16, num_attention_heads=24, num_kv_heads=4,
        head_dim=256, hidden_size=5120, intermediate_size=17408, vocab_size=248320,
        linear_num_key_heads=16, linear_num_value_heads=48, linear_key_head_dim=128,
        linear_value_head_dim=128, linear_conv_kernel=4,
    )  # fmt: skip
    inputs = fm.SglangInputs(
        shape=qwen,
        gpu=RTX3090,
        tp=2,
        mem_fraction_static=0.85,
        weights_bytes=18 * 10**9,
        context_length=32768,
        max_running_requests=4,
        kv_cache_dtype="fp8_e5m2",
        speculative_draft_tokens=4,
        mamba_cache_size=8,
    )
    fit = fm.predict_sglang(inputs)
    assert fm.sglang_cell_bytes(inputs) == 2 * 2 * 256 * 16  # K and V of 16 layers, 2 heads
    per_state = 48 * (5120 * 3 * 2 + 24 * 128 * 128 * 4)
    assert fit.mamba_pool_bytes_per_gpu == per_state * (8 + 4 * 4)
    rest = fit.static_bytes_per_gpu - fit.weights_per_gpu - fit.mamba_pool_bytes_per_gpu
    assert fit.kv_pool_tokens == rest // 16384
    higher = fm.predict_sglang(replace(inputs, mem_fraction_static=0.9))
    assert higher.kv_pool_tokens > fit.kv_pool_tokens


def test_llamacpp_swa_layers_keep_the_window_only() -> None:
    inputs = fm.LlamaCppInputs(
        shape=GEMMA4_31B, gpus=(RTX3090,), n_ctx=262144, weights_bytes=16 * 10**9,
        cache_type_k="q8_0", cache_type_v="q8_0",
    )  # fmt: skip
    cells = fm.llamacpp_swa_cells(inputs, 262144)
    assert cells == 1024 + 512  # the window for one sequence plus one ubatch
    full = replace(inputs, swa_full=True)
    assert fm.predict_llamacpp(full).kv_cache_bytes > fm.predict_llamacpp(inputs).kv_cache_bytes


@pytest.mark.parametrize("name", fm.CONSTANT_NAMES)
def test_constants_are_named_and_replaceable(name: str) -> None:
    changed = fm.DEFAULT_CONSTANTS.with_value(name, 123)
    assert changed.value(name) == 123 != fm.DEFAULT_CONSTANTS.value(name)
