"""Buffers vLLM's runner and drafter allocate outside model loading (v0.27 charges them).

The V1 runner's drafter keeps the target hidden states of each tap and, for a model that
takes media, its own inputs_embeds; the V2 runner's keeps one buffer of hidden states (the
taps are combined before it), and its DFlash drafter takes no media. The reference boot
(DFlash2 n=15 on V2, pinned pool) shows it: 41,979 MiB in use over both cards.
"""

from __future__ import annotations

import dataclasses

from profilegen.fit import formulas as fm
from profilegen.fit.engine_inputs import vllm_inputs
from profilegen.fit.options import FitOptions
from profilegen.fit.predict import retarget
from profilegen.registry import Registry

from .conftest import SEED, Invoke

ROW = 8192 * 5120 * 2  # max_num_batched_tokens x hidden x 16 bits


def _inputs(registry: Registry) -> fm.VllmInputs:
    return vllm_inputs(registry, retarget(registry, registry.profiles[SEED], FitOptions()), None)


def test_a_dflash_drafter_on_the_v2_runner_keeps_one_buffer(registry: Registry) -> None:
    inputs = _inputs(registry)
    assert inputs.engine.v2_runner and inputs.shape.multimodal
    # the runner's inputs_embeds (media) and the drafter's hidden states
    assert fm.persistent_buffers(inputs) == 2 * ROW


def test_the_same_drafter_on_the_v1_runner_keeps_one_per_tap(registry: Registry) -> None:
    inputs = _inputs(registry)
    v1 = dataclasses.replace(inputs, engine=dataclasses.replace(inputs.engine, v2_runner=False))
    # the runner's inputs_embeds, five taps and the drafter's own inputs_embeds
    assert fm.persistent_buffers(v1) == 7 * ROW


def test_the_reference_boot_in_use_within_a_tenth_of_a_percent(invoke: Invoke) -> None:
    text = invoke("fit", SEED).stdout
    assert "41,979 MiB in use measured, 41,937 predicted (-0.1%, ok)" in text
