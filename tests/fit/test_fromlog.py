"""`profilegen fit log`: boot logs in the engines' own line formats, read back.

The logs under logs/ are written for these tests in the exact formats vLLM (0.27 and the
0.28 one-line KV report) and SGLang print; the llama.cpp log is a real boot of this build at a
catalogue model's shape (bench/gpu/logs/, an evidence record's source).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from profilegen.fit.logs import GIB, LogError, parse_log
from profilegen.registry import open_registry
from tests.support.cli import invoke_in

from .conftest import GGUF as GGUF_PROFILE
from .conftest import MTP, Invoke

LOGS = Path(__file__).parent / "logs"
VLLM = LOGS / "vllm-0.27.1-dual-fast.log"
LLAMA = Path(__file__).resolve().parents[2] / "bench/gpu/logs/qwen38-27b-single-iq4xs.log"
SGLANG = LOGS / "sglang-eagle3.log"


def test_vllm_log_facts() -> None:
    log = parse_log(VLLM.read_text())
    assert (log.engine, log.version) == ("vllm", "0.27.1")
    assert log.kv_pool_tokens == 499_666
    assert (log.concurrency_len, log.max_concurrency) == (262_144, 1.91)
    assert log.kv_available_bytes == round(9.05 * GIB)  # the tightest worker
    assert log.weights_loaded_bytes == round(9.14 * GIB)
    assert log.cuda_graph_bytes == round(0.05 * GIB)
    # The args line holds an object repr: the literal keys are still read one by one.
    assert log.args["speculative_config"] == {"method": "mtp", "num_speculative_tokens": 4}
    assert log.args["served_model_name"] == ["qwen3.8-27b"]
    assert log.args["gpu_memory_utilization"] == 0.9
    assert "compilation_config" not in log.args


def test_vllm_028_reports_pool_and_concurrency_on_one_line() -> None:
    log = parse_log((LOGS / "vllm-0.28-one-line.log").read_text())
    assert (log.kv_pool_tokens, log.max_concurrency, log.concurrency_len) == (315_039, 2.4, 131_072)
    assert log.args["tensor_parallel_size"] == 2  # colour codes around the prefix are dropped


def test_llamacpp_log_facts() -> None:
    log = parse_log(LLAMA.read_text())
    assert (log.engine, log.version) == ("llama.cpp", "b10235")  # "build 10235 (unknown)"
    assert log.model_file == "/tmp/shapes-kskj00qc/qwen38-27b-single-iq4xs.gguf"
    assert (log.n_ctx, log.n_seq_max, log.cache_types) == (262_144, 1, ("q4_0", "q4_0"))
    assert log.n_outputs_max == 3  # one slot, two draft tokens
    mib = 1 << 20
    assert log.tensor_bytes == round(13.87 * GIB)  # "file size = 13.87 GiB"
    assert log.gpu_buffers["KV"] == [4608 * mib, 1024 * mib]  # target and draft contexts
    assert log.buffers["model"] == round(13556.94 * mib)  # CPU_Mapped stays on the host
    assert log.host_buffers["model"] == round(644.14 * mib)
    # Each context's compute buffer once (the draft context reserves twice); CUDA_Host is
    # host memory.
    assert log.gpu_buffers["compute"] == [round(1360.28 * mib), round(324.02 * mib)]
    assert log.buffers["RS"] == round(448.88 * mib)


def test_llamacpp_log_of_a_cpu_build() -> None:
    text = (
        "0.00.010 I cmn  common_param: common_params_print_info: build 10235 (unknown) with GNU\n"
        "0.00.298 I print_info: file size   = 33.50 MiB (16.00 BPW) \n"
        "0.00.385 I load_tensors:   CPU_Mapped model buffer size =    33.50 MiB\n"
        "0.00.386 I llama_context: constructing llama_context\n"
        "0.00.386 I llama_context: n_ctx         = 131072\n"
        "0.00.401 I llama_kv_cache:        CPU KV buffer size =    68.00 MiB\n"
        "0.00.562 I sched_reserve:        CPU compute buffer size =   530.08 MiB\n"
    )
    log = parse_log(text)
    mib = 1 << 20
    assert log.buffers == {} and log.tensor_bytes == round(33.5 * mib)
    assert log.host_buffers == {
        "model": round(33.5 * mib),
        "KV": 68 * mib,
        "compute": round(530.08 * mib),
    }


def test_sglang_log_facts() -> None:
    log = parse_log(SGLANG.read_text())
    assert (log.engine, log.kv_pool_tokens) == ("sglang", 600_075)
    assert (log.context_len, log.running_requests) == (32_768, 4)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("hello\n", "no vLLM, llama.cpp or SGLang start-up line found"),
        ("INFO vLLM API server version 0.27.1\n", "ends before the KV cache was sized"),
        (
            "llama_context: n_ctx = 4096\n",
            r"has no 'buffer size' lines \(did the model load\? recent builds print them at "
            r"verbosity 4: -lv 4, or LLAMA_ARG_LOG_VERBOSITY=4\)",
        ),
    ],
)
def test_incomplete_logs_are_refused(text: str, message: str) -> None:
    with pytest.raises(LogError, match=message):
        parse_log(text)


def test_from_log_compares_every_term(invoke: Invoke) -> None:
    result = invoke("fit", "log", str(VLLM))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "log: vllm 0.27.1 -> profile qwen38-27b-dual-fast on vllm-v0.27.1" in out
    assert "KV pool                            499,666         499,666   +0.0%" in out
    for term in ("available KV per GPU", "model loading per GPU", "CUDA graph estimate"):
        assert term in out
    data = json.loads(invoke("fit", "log", str(VLLM), "--format", "json").stdout)
    assert data["profile"] == MTP and data["settings"] == {}
    assert {t["name"] for t in data["terms"]} >= {"KV pool", "available KV per GPU"}


def test_from_log_on_another_release(invoke: Invoke) -> None:
    out = invoke("fit", "log", str(VLLM), "--engine", "vllm-v0.25.1").stdout
    assert "on vllm-v0.25.1" in out and "accounting: torch-reserved" in out
    assert "KV pool                            566,288         499,666  +13.3%" in out


def test_from_log_llamacpp_and_sglang(invoke: Invoke) -> None:
    asked = ("fit", "log", str(LLAMA), "--profile", GGUF_PROFILE, "--rig", "1xh200")
    out = invoke(*asked).stdout
    assert "profile qwen38-27b-single-iq4xs on llama.cpp-b10236, rig 1xh200" in out
    assert "KV buffers                        5.50 GiB        5.50 GiB   +0.0%" in out
    assert "model buffers (GPU)              13.22 GiB       13.24 GiB   -0.1%" in out
    assert "compute buffers                   1.64 GiB        1.64 GiB   -0.5%" in out
    data = json.loads(invoke(*asked, "--format", "json").stdout)
    # What the log states beside the envelope: the file booted (random weights, its shape).
    assert data["settings"] == {"weights_bytes": round(13.87 * GIB)}
    refused = invoke("fit", "log", str(SGLANG))
    assert refused.exit_code == 2
    assert "no sglang profile serves the weights or name this log shows" in refused.output
    named = invoke("fit", "log", str(SGLANG), "--profile", "qwen36-27b-dual-eagle3")
    assert named.exit_code == 0 and "KV pool" in named.stdout


def test_from_log_bad_files_exit_2(invoke: Invoke, tmp_path: Path) -> None:
    missing = invoke("fit", "log", str(tmp_path / "nope.log"))
    assert missing.exit_code == 2 and "cannot read the log (No such file" in missing.output
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    blocked = invoke("fit", "log", str(fifo))
    assert blocked.exit_code == 2 and "is a FIFO, not a log file" in blocked.output
    junk = invoke("fit", "log", str(LOGS / "not-a-log.log"))
    assert junk.exit_code == 2 and "Traceback" not in junk.output
    both = invoke("fit", MTP, "--from-log", str(VLLM), "--profile", "qwen38-27b-dual-max")
    assert both.exit_code == 2 and "name the profile once" in both.output
    extra = invoke("fit", "log", str(VLLM), MTP)
    assert extra.exit_code == 2 and "Got unexpected extra argument" in extra.output


def test_record_adds_the_boot_as_evidence(repo: Path) -> None:
    run = invoke_in(repo, "fit", "log", str(VLLM), "--record")
    assert run.code == 0, run.text
    assert "recorded the boot as evidence in registry/profiles/qwen38-27b-dual-fast.yaml" in run.err
    text = (repo / "registry/profiles/qwen38-27b-dual-fast.yaml").read_text()
    assert text.startswith("# yaml-language-server")  # the file keeps its comments
    registry = open_registry(repo)
    ev = registry.profiles[MTP].evidence[-1]
    assert ev.key and ev.key.startswith("qwen38-27b-dual-fast-") and ev.engine is None
    assert re.fullmatch(
        r"boot log vllm-0\.27\.1-dual-fast\.log \(profilegen fit log, sha256 [0-9a-f]{16}\)",
        ev.source,
    )
    assert (ev.measured.kv_pool_tokens, ev.measured.max_concurrency) == (499_666, 1.91)
    assert ev.measured.kv_available_bytes == round(9.05 * GIB)
    before = (repo / "registry/profiles/qwen38-27b-dual-fast.yaml").read_text()
    again = invoke_in(repo, "fit", "log", str(VLLM), "--record")
    assert again.code == 0
    assert f"this log is already recorded as {ev.key} in registry/profiles/" in again.err
    assert (repo / "registry/profiles/qwen38-27b-dual-fast.yaml").read_text() == before


def test_record_needs_a_registry_rig(repo: Path) -> None:
    run = invoke_in(repo, "fit", "log", str(VLLM), "--record", "--rig", "2x3090")
    assert run.code == 2
    assert "--record needs a registry rig; '2x3090' is not one" in run.err


def test_a_boot_recorded_again_replaces_its_record(repo: Path) -> None:
    from profilegen.authoring.evidence import record_evidence

    path = repo / "registry/profiles/qwen38-27b-dual-fast.yaml"
    record = {
        "key": "dual-fast-shape",
        "date": "2026-12-01",
        "rig": "2x3090-pcie",
        "source": "bench/gpu/logs/dual-fast.log",
        "summary": "random weights at the profile's shape",
        "measured": {"kv_buffer_bytes": 1000, "boots": True},
        "synthetic": True,
    }
    record_evidence(open_registry(repo), MTP, record, replace=True)
    first = path.read_text()
    record_evidence(open_registry(repo), MTP, record, replace=True)
    assert path.read_text() == first  # the same boot again: the file is left alone
    record_evidence(open_registry(repo), MTP, {**record, "key": "a-later-boot"})
    changed = {**record, "measured": {"kv_buffer_bytes": 2000, "boots": True}}
    record_evidence(open_registry(repo), MTP, changed, replace=True)
    keys = [e.key for e in open_registry(repo).profiles[MTP].evidence]
    assert keys[-2:] == ["dual-fast-shape", "a-later-boot"]  # replaced where it stood
    mine = next(e for e in open_registry(repo).profiles[MTP].evidence if e.key == "dual-fast-shape")
    assert mine.measured.kv_buffer_bytes == 2000


def test_the_earlier_spellings_still_work_with_a_note(invoke: Invoke) -> None:
    for old, new in (
        (("--from-log", str(VLLM)), ("log", str(VLLM))),
        (("--calibration", "--format", "json"), ("calibration", "--format", "json")),
        ((MTP, "--from-log", str(VLLM)), ("log", str(VLLM), "--profile", MTP)),
    ):
        before, now = invoke("fit", *old), invoke("fit", *new)
        assert (before.exit_code, before.stdout) == (now.exit_code, now.stdout)
        spelt = "--from-log FILE" if "--from-log" in old else "--calibration"
        instead = "log FILE" if "--from-log" in old else "calibration"
        assert before.stderr == (
            f"note: `fit {spelt}` is deprecated and goes in a later release: "
            f"use `profilegen fit {instead}`\n"
        )
        assert now.stderr == ""
