"""Onboarding a new model end to end: `model add`, `new --model --rig`, one edit, render, check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.support import checkpoints as ck
from tests.support.cli import Invoke
from tests.support.fakehub import FakeFile, FakeHub

pytestmark = pytest.mark.usefixtures("isolated_hub_env")

GGUF_REPO = "quant/Tiny-Llama-8B-Instruct-GGUF"
MODEL = "tiny-llama-8b-instruct"
NEW = "tiny-llama-single"
PROFILE = f"registry/profiles/{NEW}.yaml"


def load(path: Path) -> dict[str, object]:
    data: dict[str, object] = YAML(typ="safe", pure=True).load(path.read_text())
    return data


def test_a_new_gguf_model_reaches_a_green_check_in_five_steps(
    repo: Path, hub: FakeHub, invoke: Invoke, tmp_path: Path
) -> None:
    blob = ck.write_gguf(tmp_path / "m.gguf", tokens=500, tensor_bytes=4096)
    # A checkpoint-sized file: the size the Hub reports is what fit and the lock see.
    hub.add_repo(
        GGUF_REPO,
        {
            "Tiny-Llama-8B-Instruct-Q4_K_M.gguf": FakeFile(
                blob, lfs=True, reported_size=4_920_739_232
            )
        },
    )

    # 1. The model, from its GGUF header.
    added = invoke("model", "add", GGUF_REPO)
    assert added.code == 0, added.text

    # 2. Its first profile, sized by fit for one 3090.
    made = invoke("new", NEW, "--model", MODEL, "--rig", "1x3090")
    assert made.code == 0, made.text
    assert made.out.splitlines()[:5] == [
        f"wrote {PROFILE} (28 lines, {MODEL} on 1x3090)",
        "  engine llama.cpp-b10236: the llama.cpp engine most profiles run",
        "  tp 1: every card of 1x3090 the heads allow",
        "  kv_cache_dtype q8_0: the most compact KV dtype llama.cpp-b10236 and NVIDIA GeForce "
        "RTX 3090 take",
        "  max_model_len 131,072: the largest context that fits 1x3090 (KV pool 131,072 tokens, "
        "10.20 GiB left on the tightest GPU)",
    ]
    profile = load(repo / PROFILE)
    assert profile["status"] == "incubating"
    assert profile["envelope"] == {
        "tp": 1,
        "max_model_len": 131072,
        "max_num_seqs": 1,
        "gpu_layers": 999,
        "flash_attn": True,
        "kv_cache_dtype": "q8_0",
    }
    # The model's own sampling defaults, complete: nothing for the contributor to look up.
    assert profile["serve"] == {
        "served_names": [MODEL],
        "jinja": True,
        "sampler": {"temperature": 0.6, "top_k": 40},
    }

    # Until the TODO fields say what the profile is, check fails on exactly them.
    assert invoke("render", "--all").code == 0
    todo = invoke("check", "--quiet")
    assert todo.code == 1
    assert todo.out.splitlines() == [
        f"{PROFILE}:10: error: [placeholder] title is still a TODO placeholder "
        "(say what the profile is before it is merged)",
        f"{PROFILE}:28: error: [placeholder] best_for is still a TODO placeholder "
        "(say what the profile is before it is merged)",
        todo.out.splitlines()[-1],
    ]

    # 3. The one hand edit. The TODO title already says the profile's facts, in its own words.
    path = repo / PROFILE
    text = path.read_text()
    todo_title = "title: 'TODO: Tiny Llama 8B Instruct Q4_K_M, q8_0 KV, on 1x3090, 128K'"
    assert text.splitlines()[9] == todo_title
    text = text.replace(
        todo_title, "title: Tiny Llama 8B Q4_K_M on one 3090, full 128K context"
    ).replace(
        "best_for: 'TODO: who should pick it, and over which sibling'",
        "best_for: a small general model with the whole context on one card",
    )
    path.write_text(text)

    # 4. and 5. Generated files, then the check CI runs.
    assert invoke("render", "--all").code == 0
    green = invoke("check", "--quiet")
    assert green.code == 0, green.out
    assert green.out.startswith("check passed: 0 errors")


@pytest.fixture
def dense(repo: Path, hub: FakeHub, invoke: Invoke) -> str:
    """A dense 8B safetensors model, 16 GB of bf16 weights as the Hub reports them."""
    files: dict[str, bytes | FakeFile] = dict(ck.config_files(ck.DENSE))
    files["model-00001-of-00002.safetensors"] = FakeFile(
        b"\1", lfs=True, reported_size=9_976_576_152
    )
    files["model-00002-of-00002.safetensors"] = FakeFile(
        b"\2", lfs=True, reported_size=6_084_023_136
    )
    hub.add_repo("lab/Dense-8B", files)
    run = invoke("model", "add", "lab/Dense-8B")
    assert run.code == 0, run.text
    return "dense-8b"


def test_a_vllm_first_profile_takes_the_kv_dtype_the_backend_vllm_picks_takes(
    repo: Path, dense: str, invoke: Invoke
) -> None:
    # No backend named: vLLM tries FLASH_ATTN first, which takes no fp8 on sm 8.6, and
    # serves fp8 with FLASHINFER; check and fit judge it the same way (model/kv_backends.py).
    run = invoke("new", NEW, "--model", dense, "--rig", "1x3090")
    assert run.code == 0, run.text
    assert (
        "  kv_cache_dtype fp8_e4m3: the most compact KV dtype vllm-v0.27.1 and NVIDIA GeForce "
        "RTX 3090 take; vllm serves it with FLASHINFER (FLASH_ATTN, tried first on NVIDIA "
        "GeForce RTX 3090, does not take fp8_e4m3)"
    ) in run.out.splitlines()
    envelope = load(repo / PROFILE)["envelope"]
    assert isinstance(envelope, dict)
    assert envelope["kv_cache_dtype"] == "fp8_e4m3"
    assert "hw-kv-dtype" not in invoke("check").text  # check agrees
    context = envelope["max_model_len"]
    assert context % 1024 == 0 and 4096 <= context < 131072
    # The largest that fits: one step more does not.
    assert invoke("fit", NEW).code == 0
    assert invoke("fit", NEW, "--max-model-len", str(context + 1024)).code == 1
    # The same profile on a pair of 3090s: the same judge, the same choice.
    run = invoke(
        "new",
        f"{NEW}-2",
        "--model",
        dense,
        "--rig",
        "2x3090",  # the registry's plain rig of two 3090s, as in `fit` and `list`
        "--set",
        "envelope.max_num_seqs=4",
    )
    assert run.code == 0, run.text
    second = load(repo / f"registry/profiles/{NEW}-2.yaml")
    assert second["rig"] == "2x3090-pcie"
    assert second["envelope"]["tp"] == 2 and second["envelope"]["max_num_seqs"] == 4  # type: ignore[index]


def test_a_kv_dtype_the_named_backend_refuses_is_said_so(
    repo: Path, dense: str, invoke: Invoke
) -> None:
    run = invoke(
        "new", NEW, "--model", dense, "--rig", "1x3090",
        "--set", "envelope.attention_backend=FLASH_ATTN",
        "--set", "envelope.kv_cache_dtype=fp8_e4m3",
    )  # fmt: skip
    assert run.code == 1
    assert run.err.startswith(
        "error: dense-8b on rig 1x3090 with vllm-v0.27.1: the container refuses these "
        "settings: FLASH_ATTN on NVIDIA GeForce RTX 3090 (sm 8.6) does not take fp8_e4m3 KV"
    ), run.err
    assert not (repo / PROFILE).exists()


def test_a_model_that_cannot_fit_the_rig_is_refused(
    repo: Path, hub: FakeHub, invoke: Invoke
) -> None:
    files: dict[str, bytes | FakeFile] = dict(ck.config_files(ck.DENSE))
    files["model-00001-of-00002.safetensors"] = FakeFile(
        b"\1", lfs=True, reported_size=70_000_000_000
    )
    hub.add_repo("lab/Huge-70B", files)
    assert invoke("model", "add", "lab/Huge-70B").code == 0
    run = invoke("new", NEW, "--model", "huge-70b", "--rig", "1x3090")
    assert run.code == 1
    assert run.err.startswith(
        "error: huge-70b (bf16) does not fit rig 1x3090 with vllm-v0.27.1 even at 4,096 tokens"
    )
    assert not (repo / PROFILE).exists()


def test_first_profile_usage_errors(repo: Path, dense: str, invoke: Invoke) -> None:
    cases = {
        ("--model", dense): "error: --model needs --rig: the rig the profile is sized for",
        ("--model", dense, "--from", "x", "--rig", "1x3090"): (
            "error: give either --from SIBLING or --model MODEL --rig RIG"
        ),
        (
            "--model",
            "dense-8c",
            "--rig",
            "1x3090",
        ): "error: no model 'dense-8c' (did you mean 'dense-8b'?)",
        ("--model", dense, "--rig", "1x3091"): "error: no rig '1x3091' (did you mean '1x3090'?)",
        ("--model", dense, "--rig", "1x3090", "--engine", "llama.cpp-b10236"): (
            f"error: {dense} has no main weights this engine can load"
        ),
    }
    for args, message in cases.items():
        run = invoke("new", NEW, *args)
        assert (run.code, run.err.strip()) == (2, message), args
    assert not (repo / PROFILE).exists()
    shown = json.loads(invoke("show", dense, "--format", "json").out)
    assert shown["unattributed"] == [] and shown["profiles"] == []
