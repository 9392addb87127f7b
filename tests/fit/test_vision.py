"""A vision tower in vLLM's start-up (fit/formulas/vision.py): the dummy batch the profile run
encodes, the one-hot transient it peaks at, and the tower every rank holds whole.

The numbers are Gemma 4 31B's on an RTX 3090 (CUDA total 25,436,356,608 bytes), whose three
measured boots (two on v0.22.0, one on a nightly before vLLM batched the encoder) the
calibration judges within 1%.
"""

from __future__ import annotations

import dataclasses

import pytest

from profilegen.fit import formulas as fm
from profilegen.fit.formulas.vision import encoder_peak_bytes, profile_batch, replicated_bytes
from profilegen.fit.options import FitOptions
from profilegen.fit.predict import fit_profile
from profilegen.registry import Registry

from .conftest import Invoke, with_architecture

TOTAL_3090 = 25_436_356_608
FREE_AFTER_WEIGHTS = 15_000_000_000  # free / 2 is above total / 10: the tenth decides
GEMMA = fm.TOWERS["gemma4"]
TOWER_BYTES = 1_100_000_000


def _profile(batching: str, lookup: str = "one-hot", **limits: int) -> fm.VisionProfile:
    return fm.VisionProfile(GEMMA, batching, lookup, TOWER_BYTES, tuple(sorted(limits.items())))


def test_video_has_the_most_tokens_per_item_so_one_video_is_profiled() -> None:
    batch = profile_batch(_profile("chunked"), 4096, 4, 131072)
    assert batch is not None
    # 32 frames of 70 soft tokens (+8 around each) = 2,496 tokens; 4,096 // 2,496 = 1 video.
    assert (batch.modality, batch.items, batch.units, batch.patches) == ("video", 1, 32, 630)


def test_without_video_the_encoder_budget_holds_fourteen_images() -> None:
    batch = profile_batch(_profile("chunked", video=0), 4096, 4, 131072)
    assert batch is not None
    assert (batch.modality, batch.items, batch.units, batch.patches) == ("image", 14, 14, 2520)


def test_no_media_no_batch() -> None:
    assert profile_batch(_profile("chunked", image=0, video=0), 4096, 4, 131072) is None


def test_a_chunk_is_sized_from_a_tenth_of_the_card() -> None:
    batch = profile_batch(_profile("chunked"), 4096, 4, 131072)
    assert batch is not None
    # 2,543,635,660 // (630 x 4 x 10,240 x 8) = 12 frames; 12 x 630 x 2 x 10,240 x 10 bytes.
    peak = encoder_peak_bytes(_profile("chunked"), batch, FREE_AFTER_WEIGHTS, TOTAL_3090)
    assert peak == 12 * 630 * 2 * 10240 * 10 == 1_548_288_000


def test_half_the_free_memory_caps_the_chunk_on_a_full_card() -> None:
    batch = profile_batch(_profile("chunked"), 4096, 4, 131072)
    assert batch is not None
    free = 1_000_000_000  # 500 MB // 206,438,400 bytes a frame = 2 frames
    assert encoder_peak_bytes(_profile("chunked"), batch, free, TOTAL_3090) == 2 * 129_024_000


@pytest.mark.parametrize(
    ("batching", "lookup", "peak"),
    [("per-item", "one-hot", 129_024_000), ("chunked", "lookup", 0), ("none", "one-hot", 0)],
)
def test_one_frame_per_call_or_an_embedding_lookup_peak_low(
    batching: str, lookup: str, peak: int
) -> None:
    v = _profile(batching, lookup)
    batch = profile_batch(v, 4096, 4, 131072)
    assert batch is not None
    assert encoder_peak_bytes(v, batch, FREE_AFTER_WEIGHTS, TOTAL_3090) == peak


def test_every_rank_holds_the_unsharded_tower() -> None:
    assert replicated_bytes(_profile("chunked"), 1) == 0
    assert replicated_bytes(_profile("chunked"), 2) == TOWER_BYTES
    sharded = dataclasses.replace(
        _profile("chunked"), tower=dataclasses.replace(GEMMA, sharded=True)
    )
    assert replicated_bytes(sharded, 4) == 0


def _budget(registry: Registry, profile: str, **opts: object) -> dict[str, int]:
    result = fit_profile(registry, registry.profiles[profile], FitOptions(**opts))  # type: ignore[arg-type]
    return result.budgets[0]


def test_a_boot_before_the_batching_merged_encoded_one_frame_at_a_time(registry: Registry) -> None:
    # gemma-int8-mtp runs vllm-v0.22.0, whose gemma4 batching reached main on 2026-05-20.
    after = _budget(registry, "gemma-int8-mtp", booted_on="2026-05-31")
    before = _budget(registry, "gemma-int8-mtp", booted_on="2026-05-10")
    assert after["activations"] == 1_548_288_000
    assert before["activations"] == _budget(registry, "gemma-int8-mtp", max_num_batched_tokens=4096,
                                            booted_on="2026-05-10")["activations"]  # fmt: skip
    assert before["activations"] < 400_000_000  # the language model's own peak
    assert after["weights"] == before["weights"]


def test_the_tower_weighs_on_both_cards_of_a_tp2_boot(registry: Registry) -> None:
    bare = with_architecture(registry, "gemma-4-31b", vision_tower_params=None)
    with_tower = _budget(registry, "gemma-bf16-mtp")["weights"]
    without = _budget(bare, "gemma-bf16-mtp")["weights"]
    assert with_tower - without == TOWER_BYTES // 2


def test_fit_says_what_the_tower_costs(invoke: Invoke) -> None:
    lines = invoke("fit", "gemma-bf16-mtp").stdout.splitlines()
    assert (
        "note: the vision tower's 1.02 GiB is held whole on each of the 2 GPUs (vLLM does not "
        "shard it); the rest of the weights are split over TP"
    ) in lines
    assert (
        "note: before sizing the pool vLLM encodes 1 video (32 frames of 630 patches, 12 a "
        "call, one-hot position lookup): a 1.44 GiB peak, above the language model's 0.33 GiB"
    ) in lines
    # v0.21.0 encodes one frame a call: its peak stays under the language model's.
    tp1 = invoke("fit", "gemma-mtp-tp1").stdout
    assert (
        "(32 frames of 630 patches, 1 a call, one-hot position lookup): a 0.12 GiB peak, below"
        in tp1
    )
