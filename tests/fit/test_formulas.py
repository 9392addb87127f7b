"""Unit tests for profilegen.fitmath: formulas, mechanisms and the measured boots."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profilegen.fit import formulas as fm

GIB = 1 << 30
MIB = 1 << 20

# Qwen3.8-27B text_config (shared/REFERENCE.md "Model architecture facts").
QWEN38 = fm.ModelShape(
    num_layers=64,
    num_kv_layers=16,
    num_attention_heads=24,
    num_kv_heads=4,
    head_dim=256,
    hidden_size=5120,
    intermediate_size=17408,
    vocab_size=248320,
    full_attention_interval=4,
    linear_num_key_heads=16,
    linear_num_value_heads=48,
    linear_key_head_dim=128,
    linear_value_head_dim=128,
    linear_conv_kernel=4,
    mtp_layers=1,
    attn_output_gate=True,
)
RTX3090 = fm.GpuSpec(vram_bytes=25_769_803_776)  # NVML: 24,576 MiB

# The MTP head's bytes inside each artifact, from its parameter count: ~4.25 bits per
# weight for INT4 group-128 (AutoRound/NVFP4 Marlin), 1 byte for FP8.
MTP_INT4 = fm.mtp_head_params(QWEN38) * 425 // 800
MTP_FP8 = fm.mtp_head_params(QWEN38)

DFLASH2_W4A16 = fm.DrafterSpec(
    kind="dflash",
    weights_bytes=1_200_000_000,
    num_kv_layers=5,
    num_kv_heads=8,
    head_dim=128,
    sliding_window=2048,
    hidden_taps=5,
)


def point1(mtp_on: bool) -> fm.VllmInputs:
    """2x3090, Frozenlock INT4 AutoRound (18.23 GiB), fp8 KV, util 0.90, MTP n=4."""
    return fm.VllmInputs(
        shape=QWEN38,
        gpu=RTX3090,
        tp=2,
        gpu_memory_utilization=0.90,
        weights_bytes=int(18.23 * GIB),
        max_model_len=262144,
        max_num_seqs=1,
        max_num_batched_tokens=8192,
        kv_cache_dtype="fp8_e4m3",
        drafter=fm.DrafterSpec(kind="mtp", weights_bytes=MTP_INT4, embedded_in_target=True),
        num_speculative_tokens=4 if mtp_on else 0,
        weight_path="marlin4",
    )


def point2() -> fm.VllmInputs:
    """2x3090, official FP8 (Marlin on Ampere), fp8 KV, util 0.92, 2 seqs, MTP n=3."""
    return fm.VllmInputs(
        shape=QWEN38,
        gpu=RTX3090,
        tp=2,
        gpu_memory_utilization=0.92,
        weights_bytes=30_866_866_928,
        max_model_len=262144,
        max_num_seqs=2,
        kv_cache_dtype="fp8_e4m3",
        drafter=fm.DrafterSpec(kind="mtp", weights_bytes=MTP_FP8, embedded_in_target=True),
        num_speculative_tokens=3,
        weight_path="marlin-fp8",
    )


V2_ENGINE = fm.VllmEngineFacts(v2_runner=True)


def point3(desktop: int = 0) -> fm.VllmInputs:
    """2x3090 WSL2, AutoRound-fast + DFlash2 n=15, bf16 KV, pinned 9 GB, patched groups."""
    return fm.VllmInputs(
        shape=QWEN38,
        gpu=replace(RTX3090, desktop_reservation_bytes=desktop),
        tp=2,
        gpu_memory_utilization=0.85,
        weights_bytes=15_900_000_000,
        max_model_len=244320,
        max_num_seqs=1,
        max_num_batched_tokens=8192,
        kv_cache_dtype="bfloat16",
        drafter=DFLASH2_W4A16,
        num_speculative_tokens=15,
        kv_cache_memory_bytes=9_000_000_000,
        cudagraph_capture_size=16,
        cudagraph_reserve_bytes=1900 * MIB,
        mamba_ssm_cache_dtype="float16",
        weight_path="marlin4",
        prefer_padding_sliding_window_groups=True,
        engine=V2_ENGINE,
    )


def point4(cache_type: str = "q4_0", n_ctx: int = 262144) -> fm.LlamaCppInputs:
    """1x3090, UD-IQ4_XS GGUF (13.27 GiB) + F16 mmproj, FA on, draft-mtp."""
    return fm.LlamaCppInputs(
        shape=QWEN38,
        gpus=(RTX3090,),
        n_ctx=n_ctx,
        weights_bytes=int(13.27 * GIB),
        cache_type_k=cache_type,
        cache_type_v=cache_type,
        mmproj_bytes=928_000_000,
        mtp_draft=True,
    )


def within(predicted: float, measured: float, tolerance: float = 0.05) -> bool:
    return abs(predicted / measured - 1) <= tolerance


# --- the geometry of measured boots ---------------------------------------------------


def test_point1_sanity_check_16384_bytes_per_token_per_card() -> None:
    fit = fm.predict_vllm(point1(mtp_on=False))
    assert fit.kv_bytes_per_token_per_gpu == 16_384
    # The MTP layer joins the full-attention bucket: 17 layers per token.
    assert fm.predict_vllm(point1(mtp_on=True)).kv_bytes_per_token_per_gpu == 17 * 1024


def test_point1_drafter_costs_pool() -> None:
    on, off = fm.predict_vllm(point1(True)), fm.predict_vllm(point1(False))
    assert on.kv_pool_tokens < off.kv_pool_tokens
    assert off.budget.drafter == 0 < on.budget.drafter


def test_point2_concurrency_matches_logged_1_03x() -> None:
    fit = fm.predict_vllm(point2())
    assert within(fit.max_concurrency, 1.03)
    assert fit.boots  # one 262144-token request fits ...
    assert not fit.fits  # ... but not max_num_seqs=2 of them
    assert fit.headroom_tokens < 0


def test_point3_pinned_pool_fits_244320_tokens() -> None:
    fit = fm.predict_vllm(point3())
    assert fit.kv_pool_tokens >= 244_320
    assert fit.boots and fit.fits
    assert fit.budget.kv_pool <= 9_000_000_000
    # 244320 = 509 blocks of 480 tokens: the hybrid block size is what made it the ceiling.
    assert fit.block_size == 480 and 244_320 % fit.block_size == 0


def test_point3_still_fits_with_a_desktop_on_the_card() -> None:
    fit = fm.predict_vllm(point3(desktop=int(1.5 * GIB)))
    assert fit.fits and fit.budget.free > 0


def test_point3_needs_the_group_patch() -> None:
    unpatched = replace(point3(), prefer_padding_sliding_window_groups=False)
    fit = fm.predict_vllm(unpatched)
    assert fit.group_size == 5
    assert fit.kv_pool_tokens < 244_320 and not fit.fits


def test_point4_q8_0_does_not_fit_at_262144() -> None:
    assert not fm.predict_llamacpp(point4("q8_0")).fits
    assert fm.predict_llamacpp(point4("q8_0", n_ctx=131072)).fits


# --- mechanisms ---------------------------------------------------------------------------


def test_raising_util_grows_the_pool() -> None:
    low = fm.predict_vllm(replace(point1(True), gpu_memory_utilization=0.85))
    high = fm.predict_vllm(replace(point1(True), gpu_memory_utilization=0.95))
    assert high.kv_pool_tokens > low.kv_pool_tokens


@settings(max_examples=40, deadline=None)
@given(st.floats(min_value=0.75, max_value=0.94), st.floats(min_value=0.001, max_value=0.04))
def test_pool_is_monotonic_in_util(util: float, step: float) -> None:
    a = fm.predict_vllm(replace(point1(True), gpu_memory_utilization=util))
    b = fm.predict_vllm(replace(point1(True), gpu_memory_utilization=util + step))
    assert b.kv_pool_tokens >= a.kv_pool_tokens


def test_bf16_kv_gives_half_the_tokens_of_fp8() -> None:
    pinned = replace(point1(False), kv_cache_memory_bytes=8 * GIB)
    fp8 = fm.predict_vllm(pinned)
    bf16 = fm.predict_vllm(replace(pinned, kv_cache_dtype="bfloat16"))
    assert 0.45 <= bf16.kv_pool_tokens / fp8.kv_pool_tokens <= 0.55
    util_fp8 = fm.predict_vllm(point1(False))
    util_bf16 = fm.predict_vllm(replace(point1(False), kv_cache_dtype="bfloat16"))
    assert 0.45 <= util_bf16.kv_pool_tokens / util_fp8.kv_pool_tokens <= 0.55


def test_pinned_kv_memory_replaces_the_util_budget() -> None:
    a = fm.predict_vllm(point3())
    b = fm.predict_vllm(replace(point3(), gpu_memory_utilization=0.95))
    assert a.kv_pool_tokens == b.kv_pool_tokens
    assert a.budget.claimed_by_util == b.budget.claimed_by_util


def test_desktop_reservation_costs_headroom_not_pool() -> None:
    bare = fm.predict_vllm(point1(True))
    rig = fm.predict_vllm(
        replace(point1(True), gpu=replace(RTX3090, desktop_reservation_bytes=GIB))
    )
    assert rig.kv_pool_tokens == bare.kv_pool_tokens
    assert rig.budget.free == bare.budget.free - GIB


def test_overcommitted_util_does_not_fit() -> None:
    rig = replace(RTX3090, desktop_reservation_bytes=2 * GIB)
    assert not fm.predict_vllm(replace(point1(True), gpu=rig, gpu_memory_utilization=0.97)).fits


def test_larger_prefill_batch_shrinks_the_pool() -> None:
    small = fm.predict_vllm(replace(point1(True), max_num_batched_tokens=2048))
    big = fm.predict_vllm(replace(point1(True), max_num_batched_tokens=16384))
    assert big.budget.activations > small.budget.activations
    assert big.kv_pool_tokens < small.kv_pool_tokens


def test_wider_speculation_grows_fixed_state_and_shrinks_pool() -> None:
    n3 = fm.predict_vllm(replace(point1(True), num_speculative_tokens=3))
    n6 = fm.predict_vllm(replace(point1(True), num_speculative_tokens=6))
    assert n6.fixed_state_bytes_per_request > n3.fixed_state_bytes_per_request
    assert n6.kv_pool_tokens < n3.kv_pool_tokens


def test_v2_runner_graphs_land_on_top_unless_reserved() -> None:
    unreserved = replace(point3(), cudagraph_reserve_bytes=None)
    fit = fm.predict_vllm(unreserved)
    assert fit.budget.cuda_graphs == 0
    assert fit.budget.unaccounted == fm.CUDA_CONTEXT_BYTES + fm.VLLM_V2_CUDAGRAPH_UNRESERVED_BYTES
    assert fm.predict_vllm(unreserved).budget.cuda_graphs == 0
    assert fm.predict_vllm(replace(point3(), enforce_eager=True)).budget.cuda_graphs == 0


def test_budget_breakdown_is_ordered() -> None:
    keys = list(fm.predict_vllm(point1(True)).budget.as_dict())
    assert keys[:4] == ["total", "claimed_by_util", "weights", "drafter"]
    assert {"activations", "cuda_graphs", "runtime_overhead", "kv_pool"} <= set(keys)
    assert "desktop_reservation" in keys


def test_dense_model_uses_one_uniform_group() -> None:
    dense = fm.ModelShape(
        num_layers=32,
        num_kv_layers=32,
        num_attention_heads=32,
        num_kv_heads=8,
        head_dim=128,
        hidden_size=4096,
        intermediate_size=14336,
        vocab_size=128256,
    )
    fit = fm.predict_vllm(
        fm.VllmInputs(
            shape=dense,
            gpu=RTX3090,
            tp=1,
            gpu_memory_utilization=0.9,
            weights_bytes=16_060_000_000,
            max_model_len=32768,
            max_num_seqs=1,
            kv_cache_memory_bytes=4 * GIB,
        )
    )
    assert fit.block_size == 16 and fit.group_size == 1
    assert fit.kv_bytes_per_token_per_gpu == 32 * 2 * 8 * 128 * 2
    assert fit.kv_pool_tokens == 4 * GIB // (16 * 131072) * 16


def test_rejects_bad_inputs() -> None:
    with pytest.raises(ValueError):
        fm.predict_vllm(replace(point1(True), mamba_cache_mode="sometimes"))
    with pytest.raises(ValueError):
        fm.predict_vllm(replace(point1(True), tp=0))
    with pytest.raises(ValueError):
        fm.predict_vllm(replace(point1(True), weight_path="fp3"))
    with pytest.raises(ValueError):
        fm.predict_llamacpp(replace(point4(), gpus=()))


# --- formulas -----------------------------------------------------------------------------


@pytest.mark.parametrize(("heads", "tp", "per_gpu"), [(4, 1, 4), (4, 2, 2), (4, 4, 1), (4, 8, 1)])
def test_kv_heads_replicate_past_tp(heads: int, tp: int, per_gpu: int) -> None:
    assert fm.kv_heads_per_gpu(heads, tp) == per_gpu


@pytest.mark.parametrize(
    ("dtype", "width"),
    [("bfloat16", 2), ("bf16", 2), ("float16", 2), ("fp16", 2), ("fp8", 1)]
    + [("fp8_e4m3", 1), ("fp8_e5m2", 1), ("float32", 4), ("auto", 2)],
)
def test_vllm_dtype_widths(dtype: str, width: int) -> None:
    assert fm.vllm_dtype_bytes(dtype) == width


def test_auto_dtype_follows_the_model() -> None:
    assert fm.vllm_dtype_bytes("auto", model_dtype="float32") == 4
    with pytest.raises(ValueError):
        fm.vllm_dtype_bytes("fp4_mystery")


@pytest.mark.parametrize(
    ("cache_type", "row_bytes"),
    [("f32", 128), ("f16", 64), ("bf16", 64), ("q8_0", 34), ("q4_0", 18)]
    + [("q4_1", 20), ("q5_0", 22), ("q5_1", 24), ("iq4_nl", 18)],
)
def test_llamacpp_block_sizes(cache_type: str, row_bytes: int) -> None:
    assert fm.llamacpp_row_bytes(cache_type, 32) == row_bytes


def test_llamacpp_rows_must_fill_blocks() -> None:
    assert fm.llamacpp_row_bytes("q4_0", 1024) == 576
    with pytest.raises(ValueError):
        fm.llamacpp_row_bytes("q8_0", 48)
    with pytest.raises(ValueError):
        fm.llamacpp_row_bytes("q3_k", 32)


def test_attention_page_bytes_per_token() -> None:
    assert fm.attention_bytes_per_token(4, 256, 2, "fp8_e4m3") == 1024
    assert fm.attention_bytes_per_token(4, 256, 2, "bfloat16") == 2048
    assert fm.attention_bytes_per_token(4, 256, 8, "fp8") == 512  # one replicated head
    # DFlash2's 8 x 128 matches the target's 4 x 256 per token; int8 scales break the tie.
    assert fm.attention_bytes_per_token(8, 128, 1, "bf16") == 4096
    assert fm.attention_bytes_per_token(4, 256, 1, "int8_per_token_head") == 2080
    assert fm.attention_bytes_per_token(8, 128, 1, "int8_per_token_head") == 2112


def test_gdn_state_is_per_sequence_and_grows_with_speculation() -> None:
    # conv 5120 x 3 x bf16 + ssm 24 x 128 x 128 x fp32, per card at TP 2.
    assert fm.mamba_state_bytes(QWEN38, 2, 0, "auto", "auto") == 30_720 + 1_572_864
    assert fm.mamba_state_bytes(QWEN38, 2, 4, "auto", "auto") == 71_680 + 1_572_864
    assert fm.mamba_state_bytes(QWEN38, 2, 15, "auto", "float16") == 184_320 + 786_432


@pytest.mark.parametrize(
    ("spec", "kv", "ssm", "block"),
    [(0, "fp8", "auto", 1568), (4, "fp8", "auto", 1616), (3, "fp8", "auto", 1600)]
    + [(15, "bfloat16", "float16", 480), (0, "bfloat16", "auto", 784)],
)
def test_hybrid_block_size(spec: int, kv: str, ssm: str, block: int) -> None:
    state = fm.mamba_state_bytes(QWEN38, 2, spec, "auto", ssm)
    attn = fm.attention_bytes_per_token(4, 256, 2, kv)
    assert fm.hybrid_block_size(attn, state, "align") == block
    assert block * attn >= state  # one page holds one recurrent state


def test_hybrid_block_size_modes() -> None:
    assert fm.hybrid_block_size(1024, 0, "align") == 16
    assert fm.hybrid_block_size(1024, 1_603_584, "all") % 64 == 0


def test_page_size_and_pool_structure_of_point1() -> None:
    fit = fm.predict_vllm(point1(mtp_on=False))
    assert fit.block_size * 1024 == 1_605_632  # the unified page, mamba state padded up
    assert fit.group_size == 16
    # 168 attention blocks for 262144 tokens + 3 GDN groups x 2 aligned state blocks.
    assert fit.blocks_per_request == 168 + 3 * 2


@pytest.mark.parametrize(
    ("buckets", "patched", "size"),
    [
        ([(16, False), (48, False)], False, 16),
        ([(17, False), (48, False)], False, 17),
        ([(12, True), (13, False)], False, 13),
        ([(16, False), (48, False), (5, True)], False, 5),
        ([(16, False), (48, False), (5, True)], True, 8),
    ],
)
def test_kv_group_size(buckets: list[tuple[int, bool]], patched: bool, size: int) -> None:
    assert fm.kv_group_size(buckets, patched) == size


def test_weights_split_over_tp() -> None:
    assert fm.weights_per_gpu(18 * GIB, 2) == 9 * GIB
    assert fm.weights_per_gpu(10 * GIB, 4, replicated_bytes=2 * GIB) == 4 * GIB
    b = fm.predict_vllm(point2()).budget
    assert b.weights > 30_866_866_928 // 2 - MTP_FP8  # Marlin FP8 costs more than disk


def test_mtp_head_params() -> None:
    # q (gated) 5120x12288 + k,v 5120x2048 + o 6144x5120 + MLP 3x5120x17408 + fc 10240x5120
    assert fm.mtp_head_params(QWEN38) == 424_673_280


def test_gdn_prefill_scratch_matches_the_96_mib_allocation() -> None:
    scratch = fm.gdn_prefill_scratch_bytes(QWEN38, 2, 8192)
    assert scratch == 96 * MIB + 2 * 48 * MIB


def test_activation_peak_scales_with_batch_and_tp() -> None:
    a = fm.activation_peak_bytes(QWEN38, 2, 4096)
    assert fm.activation_peak_bytes(QWEN38, 2, 8192) == 2 * a
    assert fm.activation_peak_bytes(QWEN38, 1, 8192) > fm.activation_peak_bytes(QWEN38, 2, 8192)


def test_kv_layer_indices() -> None:
    assert QWEN38.kv_layer_indices() == tuple(range(3, 64, 4))
    dense = replace(QWEN38, full_attention_interval=None, num_kv_layers=64)
    assert dense.kv_layer_indices() == tuple(range(64))


def test_llamacpp_layer_split() -> None:
    devices = fm.llamacpp_layer_devices(64, 2, None)
    assert devices.count(0) == 33 and devices.count(1) == 31
    assert fm.llamacpp_layer_devices(64, 1, None, n_gpu_layers=40)[:25] == [-1] * 25
    with pytest.raises(ValueError):
        fm.llamacpp_layer_devices(64, 2, (1.0,))


def test_llamacpp_dual_layer_split_halves_the_kv() -> None:
    dual = replace(point4("q8_0"), gpus=(RTX3090, RTX3090), weights_bytes=31_500_000_000)
    fit = fm.predict_llamacpp(dual)
    # The MTP draft context's KV layer (f16) follows the output layer onto the last GPU.
    draft = 4096 * 262144
    assert fit.kv_cache_bytes_per_gpu[0] == fit.kv_cache_bytes_per_gpu[1] - draft
    assert sum(fit.kv_cache_bytes_per_gpu) == fit.kv_cache_bytes == (16 * 2176 + 4096) * 262144
    assert fit.budgets[0].mmproj > 0 == fit.budgets[1].mmproj


def test_llamacpp_recurrent_state_per_sequence() -> None:
    one = fm.predict_llamacpp(point4())
    two = fm.predict_llamacpp(replace(point4(), n_parallel=2))
    assert one.recurrent_state_bytes == 48 * (3 * 10240 + 48 * 128 * 128) * 4
    assert two.recurrent_state_bytes == 2 * one.recurrent_state_bytes
    assert two.kv_cache_bytes == one.kv_cache_bytes  # n_ctx is shared between the slots


def test_llamacpp_headroom_and_budget() -> None:
    fit = fm.predict_llamacpp(point4())
    assert fit.headroom_bytes == fit.budgets[0].free > 0
    assert fit.headroom_tokens > 0
    assert list(fit.budgets[0].as_dict())[0] == "total"


# --- llama.cpp: the mechanisms the H200 shape boots show (bench/gpu/logs/) ------------------


def test_llamacpp_keeps_the_input_embedding_on_the_host() -> None:
    # Qwen 3.6 27B, Q4_K_M with the output at Q6_K: 14,977.32 MiB of tensors, of which the
    # host's CPU_Mapped buffer held the embedding (682.03 MiB) and CUDA0 the rest.
    placed = fm.place_weights(QWEN38, round(14_977.32 * MIB), mtp_draft=True)
    assert within(placed.host, 682.03 * MIB, 0.03) and placed.skipped == 0
    assert within(placed.gpu, 14_295.29 * MIB, 0.002)
    # Without draft-mtp the loader skips the nextn layer (Tess: 14,067.38 MiB on CUDA0).
    assert within(
        fm.place_weights(QWEN38, round(14_977.32 * MIB), False).gpu, 14_067.38 * MIB, 0.002
    )
    # A tied output layer gets its own copy on the GPU: the GPU holds the whole file.
    tied = replace(QWEN38, tied_embeddings=True, mtp_layers=0)
    assert fm.place_weights(tied, 10 * GIB, False).gpu == 10 * GIB


def test_llamacpp_recurrent_state_per_draft_token() -> None:
    one = fm.predict_llamacpp(replace(point4(), spec_n=2))
    # 48 GDN layers x (conv + state) x (1 + 2 draft tokens): the 448.88 MiB logged.
    assert one.recurrent_state_bytes == 48 * (3 * 10240 + 48 * 128 * 128) * 4 * 3
    assert round(one.recurrent_state_bytes / MIB, 2) == 448.88


def test_llamacpp_compute_converts_a_quantized_cache_on_cuda() -> None:
    shape = replace(QWEN38, mtp_layers=0)
    base = replace(point4(), shape=shape, mtp_draft=False, mmproj_bytes=0)
    q4, f16 = (
        fm.predict_llamacpp(base),
        fm.predict_llamacpp(replace(base, cache_type_k="f16", cache_type_v="f16")),
    )
    # One layer's K and V in f16 over the context: 262,144 x 1,024 x 2 B x 2.
    conversion = 262_144 * 1_024 * 2 * 2
    assert q4.budgets[0].compute_buffer - f16.budgets[0].compute_buffer == conversion
    cpu = fm.predict_llamacpp(replace(base, backend="cpu"))
    assert cpu.budgets[0].compute_buffer == f16.budgets[0].compute_buffer


def test_llamacpp_attention_on_the_host_for_types_cuda_lacks() -> None:
    mixed = replace(point4(), cache_type_k="q5_0", cache_type_v="q4_1", mtp_draft=False)
    assert fm.host_attention(mixed) and not fm.host_attention(point4())
    assert not fm.host_attention(replace(mixed, backend="cpu"))
    # No mask or conversion on the GPU: 3.5 feed-forward widths of f32 per token.
    compute = fm.predict_llamacpp(mixed).budgets[0].compute_buffer
    assert compute == int(512 * 3.5 * 17408) * 4 + 248320 * 4
