"""`--format json` is the text result as one document, and `--offline` is HF_HUB_OFFLINE=1."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.support.base import build_base
from tests.support.cli import Invoke, invoke_in

ROOT = Path(__file__).resolve().parents[2]
P = "qwen38-27b-dual-fast"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_base(tmp_path_factory.mktemp("formats") / "root")


@pytest.fixture
def tiny(built: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(built, tmp_path / "root"))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_render_json_carries_the_compose_the_text_form_prints() -> None:
    text = invoke_in(ROOT, "render", P).out
    run = invoke_in(ROOT, "render", P, "--format", "json")
    assert run.code == 0, run.text
    (entry,) = json.loads(run.out)["files"]
    assert json.loads(run.out)["profile"] == P
    assert entry == {
        "path": "compose.yaml",
        "bytes": len(text.encode()),
        "sha256": _digest(text),
        "content": text,
    }


def test_a_bundle_in_json_lists_every_file_written_with_its_digest(tiny: Path) -> None:
    out = tiny.parent / "bundle"
    run = invoke_in(tiny, "render", "tiny-chat", "-o", str(out), "--format", "json")
    assert run.code == 0, run.text
    doc = json.loads(run.out)
    assert (doc["profile"], doc["target"], doc["output"]) == ("tiny-chat", "compose", str(out))
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert [f["path"] for f in doc["files"]] == written
    for entry in doc["files"]:
        data = (out / entry["path"]).read_bytes()
        assert (entry["bytes"], entry["sha256"]) == (len(data), hashlib.sha256(data).hexdigest())
    assert run.err == ""


def test_render_all_in_json_names_what_it_wrote(tiny: Path) -> None:
    run = invoke_in(tiny, "render", "--all", "--format", "json")
    assert run.code == 0, run.text
    doc = json.loads(run.out)
    assert (doc["wrote"], doc["removed"]) == ([], [])
    assert doc["files"] == len(list((tiny / "compose").rglob("*.*"))) + len(
        [p for p in (tiny / "docs").rglob("*") if p.is_file()]
    )


def test_gateway_json_carries_the_config_and_its_routes() -> None:
    text = invoke_in(ROOT, "gateway", P).out
    doc = json.loads(invoke_in(ROOT, "gateway", P, "--format", "json").out)
    assert doc["gateway"] == "gateway"
    assert [(r["profile"], r["api_base"]) for r in doc["routes"]] == [
        (P, "http://host.docker.internal:8113/v1")
    ]
    assert [(f["path"], f["content"]) for f in doc["files"]] == [("config.yaml", text)]


def test_changelog_json_is_the_entry_bullet_by_bullet() -> None:
    text = invoke_in(ROOT, "changelog", P).out
    doc = json.loads(invoke_in(ROOT, "changelog", P, "--format", "json").out)
    assert doc["markdown"] == text
    assert (doc["section"], doc["profile"], doc["name"]) == ("Added", P, f"vllm/{P}")
    bullets = [
        f"  - {i['label']}: {i['text']}" if i["text"] else f"  - {i['label']}:"
        for i in doc["items"]
    ]
    assert [line for line in text.splitlines() if line.startswith("  - ")] == bullets
    measured = next(i for i in doc["items"] if i["label"].startswith("Measured"))
    assert [f"    - {u}" for u in measured["under"]] == [
        line for line in text.splitlines() if line.startswith("    - ")
    ]


def test_show_yaml_and_json_are_the_same_data() -> None:
    yaml_out = invoke_in(ROOT, "show", P, "--format", "yaml").out
    assert invoke_in(ROOT, "show", P, "--format", "text").out.startswith(f"{P}: ")
    data = json.loads(invoke_in(ROOT, "show", P, "--format", "json").out)
    assert YAML(typ="safe", pure=True).load(yaml_out) == data


def test_new_json_names_the_profile_and_file_and_takes_setting_aliases(
    invoke: Invoke, repo: Path
) -> None:
    run = invoke(
        "new", "my-fp8", "--from", P, "--set", "KV_CACHE_DTYPE=fp8_e4m3", "--set", "max-num-seqs=2",
        "--format", "json",
    )  # fmt: skip
    assert run.code == 0, run.text
    doc = json.loads(run.out)
    findings = doc.pop("findings")
    assert doc == {
        "profile": "my-fp8",
        "file": "registry/profiles/my-fp8.yaml",
        "lines": 11,
        "how": f"extends {P}",
        "reasons": [],
    }
    # The warnings the text form prints on stderr, as data.
    assert [(f["file"], f["rule"], f["severity"]) for f in findings] == [
        ("registry/profiles/my-fp8.yaml", "fit-capacity", "warning")
    ]
    assert run.err == ""
    written = YAML(typ="safe", pure=True).load((repo / "registry/profiles/my-fp8.yaml").read_text())
    assert written["envelope"] == {"kv_cache_dtype": "fp8_e4m3", "max_num_seqs": 2}


def test_schema_and_lock_and_cache_report_in_json(tiny: Path) -> None:
    assert json.loads(invoke_in(tiny, "schema", "--check", "--format", "json").out) == {
        "missing": [],
        "stale": [],
    }
    assert json.loads(invoke_in(tiny, "schema", "--format", "json").out) == {"wrote": []}
    run = invoke_in(tiny, "lock", "--offline", "--format", "json")
    assert run.code == 0, run.text
    lock = json.loads((tiny / "profilegen.lock.json").read_text())
    assert json.loads(run.out) == {
        "file": "profilegen.lock.json",
        "artifacts": len(lock["artifacts"]),
        "resolved": sum(1 for e in lock["artifacts"].values() if e.get("resolved")),
        "patch_files": len(lock["patches"]),
        "offline": True,
        "patch_kept": [],  # patch files the cache lacked, kept as the lock had them
    }


def test_offline_bundles_take_patch_files_from_the_cache_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROFILEGEN_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("PROFILEGEN_OFFLINE", raising=False)
    flag = invoke_in(ROOT, "--no-cache", "render", P, "-o", str(tmp_path / "a"), "--offline")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    env = invoke_in(ROOT, "--no-cache", "render", P, "-o", str(tmp_path / "b"))
    for run in (flag, env):
        assert run.code == 1, run.text
        assert "patch file(s) are not available:" in run.err
        assert ": not in the cache (offline)" in run.err
    assert flag.err == env.err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_check_online_and_offline_contradict(monkeypatch: pytest.MonkeyPatch) -> None:
    run = invoke_in(ROOT, "check", "--online", "--offline")
    assert (run.code, run.err) == (
        2,
        "error: --online asks the Hub and --offline (or HF_HUB_OFFLINE) forbids it\n",
    )
