"""When a profile does not fit, fit says what would: the largest context at its sequences,
the most sequences at its context, or why nothing does; a display's reservation can be
given on the command line (`--reserve-mib`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .conftest import MTP, SEED, Invoke

FitJson = Callable[..., dict[str, Any]]


def test_the_reference_profile_on_one_3090_says_why_nothing_fits(invoke: Invoke) -> None:
    run = invoke("fit", SEED, "--rig", "1x3090")
    assert run.exit_code == 1
    assert (
        "would fit nothing: at 1,024 tokens with one sequence the rtx-3090 is 5,357 MiB short "
        "(weights 14.60 GiB, KV pool 8.38 GiB per GPU)"
    ) in run.output.splitlines()


def test_the_largest_context_named_fits_and_one_step_more_does_not(
    invoke: Invoke, fit_json: FitJson
) -> None:
    asked = ("--max-num-seqs", "8", "--gpu-util", "0.8")
    data = fit_json(MTP, *asked)
    assert data["fits"] is False
    found = data["would_fit"]
    assert found["why_not"] is None and found["max_num_seqs"] == 1
    context = found["max_model_len"]
    assert isinstance(context, int) and context % 1024 == 0
    text = invoke("fit", MTP, *asked).output.splitlines()
    assert f"would fit max_model_len {context:,} at 8 seq (--max-model-len {context})" in text
    assert "would fit 1 seq at max_model_len 262,144 (--max-num-seqs 1)" in text
    assert fit_json(MTP, *asked, "--max-model-len", str(context))["fits"] is True
    assert fit_json(MTP, *asked, "--max-model-len", str(context + 1024))["fits"] is False


def test_a_profile_that_fits_is_not_searched(fit_json: FitJson) -> None:
    assert fit_json(MTP)["would_fit"] is None


def test_a_refused_setting_names_the_refusal_not_a_context(fit_json: FitJson) -> None:
    data = fit_json(SEED, "--kv-dtype", "fp8_e4m3")
    assert data["would_fit"]["why_not"].startswith(
        "the container refuses these settings: FLASH_ATTN on NVIDIA GeForce RTX 3090"
    )


def test_a_display_reservation_from_the_command_line(fit_json: FitJson) -> None:
    own = fit_json(SEED)  # the rig's own: 1 GiB on card 0
    assert own["budget"]["desktop_reservation"] == 1024 * 2**20
    more = fit_json(SEED, "--reserve-mib", "2048")
    assert more["budget"]["desktop_reservation"] == 2048 * 2**20
    assert more["free_bytes"] == own["free_bytes"] - 1024 * 2**20
    assert fit_json(SEED, "--reserve-mib", "0")["budget"]["desktop_reservation"] == 0
    single = fit_json(MTP, "--rig", "1x3090", "--reserve-mib", "512")
    assert single["budget"]["desktop_reservation"] == 512 * 2**20
