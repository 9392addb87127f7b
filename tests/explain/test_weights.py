"""The entrypoint refuses to boot when the weights are not where the engine will look (a
container started before `profilegen fetch`), naming the folder and the command; explain's box
lays out stand-in weights, so that every other answer stays as it was."""

from __future__ import annotations

import pytest

from profilegen.explain.core import Explanation, Scenario, _service, explanation_of, prepare
from profilegen.explain.interpolate import interpolate_all
from profilegen.explain.layout import compose_layout, weights_paths
from profilegen.explain.sandbox import Job, run_jobs
from profilegen.registry import Registry
from profilegen.render import render_profile
from tests.support.repo import shared_registry

VLLM = "qwen36-27b-minimal"
LLAMA = "qwen38-27b-single-iq4xs"  # a GGUF and a projector
DRAFTING = "qwen38-27b-dual-dflash15-fast"  # vLLM with a drafter of its own
LLAMA_DRAFTING = "tess-dual-mtp"
SGLANG = "qwen36-27b-dual-eagle3"
HF = "/root/.cache/huggingface"


@pytest.fixture(scope="module")
def registry() -> Registry:
    return shared_registry()


def fetch(profile: str, mount: str) -> str:
    return (
        f"download them with `profilegen fetch {profile} --model-dir DIR`, DIR being the host "
        f"folder mounted at {mount} (MODEL_DIR)"
    )


def boot_without(
    registry: Registry, profile_id: str, leave_out: str, **env: str
) -> tuple[Explanation, list[str]]:
    """The profile's container with the weights whose path contains `leave_out` missing."""
    profile = registry.profiles[profile_id]
    rendered = render_profile(registry, profile)
    scenario = Scenario(env=tuple(sorted(env.items())))
    item = prepare(registry, profile, scenario, rendered)
    paths = weights_paths([rendered.script])
    missing = [path for path in paths if leave_out in path]
    service = interpolate_all(_service(rendered), dict(scenario.env))
    layout = compose_layout(rendered, service, missing)
    ((run,),) = run_jobs([Job(layout, item.job.launches, item.job.engines)])
    return explanation_of(item, run), paths


@pytest.mark.parametrize(
    ("profile", "leave_out", "message"),
    [
        (
            VLLM,
            "qwen3.6-27b-autoround-int4",
            f"the model's weights are missing: {HF}/qwen3.6-27b-autoround-int4 holds no "
            f"config.json; {fetch(VLLM, HF)}; refusing to boot",
        ),
        (
            LLAMA,
            "Qwen3.8-27B-UD-IQ4_XS.gguf",
            "the model's weights are missing: Qwen3.8-27B-UD-IQ4_XS.gguf is not in "
            f"/models/qwen3.8-27b-gguf/unsloth-iq4xs; {fetch(LLAMA, '/models')}; refusing to boot",
        ),
        (
            LLAMA,
            "mmproj-F16.gguf",
            "the projector's weights are missing: mmproj-F16.gguf is not in "
            f"/models/qwen3.8-27b-gguf; {fetch(LLAMA, '/models')}; refusing to boot",
        ),
        (
            SGLANG,
            "qwen3.6-27b-autoround-int4",
            "the model's weights are missing: /models/qwen3.6-27b-autoround-int4 holds no "
            f"config.json; {fetch(SGLANG, '/models')}; refusing to boot",
        ),
    ],
    ids=["vllm", "llama", "projector", "sglang"],
)
def test_missing_weights_refuse_the_boot(
    registry: Registry, profile: str, leave_out: str, message: str
) -> None:
    e, _ = boot_without(registry, profile, leave_out)
    assert (e.launched, e.exit_code, e.message) == (False, 1, message)


@pytest.mark.parametrize(
    ("profile", "leave_out", "message"),
    [
        (
            DRAFTING,
            "qwen3.8-27b-dflash2-w4a16",
            f"the drafter's weights are missing: {HF}/qwen3.8-27b-dflash2-w4a16 holds no "
            f"config.json; {fetch(DRAFTING, HF)}, or SPEC=off to serve without drafting; "
            "refusing to boot",
        ),
        (
            LLAMA_DRAFTING,
            "mtp-Tess",
            "the drafter's weights are missing: mtp-Tess-4-27B-Q4_K_M.gguf is not in "
            f"/models/tess-4-27b-gguf/migtissera-q4km; {fetch(LLAMA_DRAFTING, '/models')}, or "
            "SPEC=off to serve without drafting; refusing to boot",
        ),
    ],
    ids=["vllm", "llama"],
)
def test_a_missing_drafter_refuses_only_while_drafting(
    registry: Registry, profile: str, leave_out: str, message: str
) -> None:
    e, _ = boot_without(registry, profile, leave_out)
    assert (e.launched, e.exit_code, e.message) == (False, 1, message)
    off, _ = boot_without(registry, profile, leave_out, SPEC="off")
    assert off.launched, off.message


def test_the_box_lays_out_every_path_the_guard_names(registry: Registry) -> None:
    # Nothing left out: the container starts, and the stand-ins are where the command looks.
    e, paths = boot_without(registry, DRAFTING, "no such path")
    assert e.launched, e.message
    assert paths == [
        f"{HF}/qwen3.8-27b-autoround-fast/config.json",
        f"{HF}/qwen3.8-27b-dflash2-w4a16/config.json",
    ]
    assert e.argv[e.argv.index("--model") + 1] == f"{HF}/qwen3.8-27b-autoround-fast"


def test_a_host_model_folder_gets_the_stand_ins_too(registry: Registry) -> None:
    # MODEL_DIR names a host folder: the box shows an empty stand-in of it, weights included.
    e, _ = boot_without(registry, VLLM, "no such path", MODEL_DIR="/srv/models")
    assert e.launched, e.message
