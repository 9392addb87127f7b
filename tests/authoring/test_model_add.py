"""`profilegen model add` against the fake Hub: five architecture families, a GGUF header read
by ranged requests, provenance, the lock entry, and clear refusals that write nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from profilegen.hub import gguf as gguf_header
from profilegen.lockfile.lock import LOCK_NAME
from profilegen.model.model import Model
from tests.support import checkpoints as ck
from tests.support.cli import Invoke
from tests.support.fakehub import FakeFile, FakeHub

pytestmark = pytest.mark.usefixtures("isolated_hub_env")


def added(run_out: str) -> Model:
    data = YAML(typ="safe", pure=True).load(run_out)
    return Model.model_validate(data)


def origin(model: Model, fact: str) -> tuple[str, str | None]:
    """(file, key) a fact was read from."""
    found = model.provenance.facts[fact]
    assert not isinstance(found, str), fact
    return model.provenance.sources[found.source].file, found.key


def snapshot(repo: Path) -> dict[str, bytes]:
    paths = [repo / LOCK_NAME, *sorted((repo / "registry" / "models").iterdir())]
    return {str(p): p.read_bytes() for p in paths}


ARCHITECTURES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "dense": (
        ck.DENSE,
        {"num_layers": 32, "full_attention_layers": 32, "num_kv_heads": 8, "head_dim": 128},
    ),
    "qwen-hybrid": (
        ck.QWEN_HYBRID,
        {
            "num_layers": 16,
            "full_attention_layers": 4,
            "head_dim": 256,
            "mtp_layers": 1,
            "attn_output_gate": True,
            "vision": True,
            "linear_attention": {
                "num_key_heads": 16,
                "num_value_heads": 32,
                "key_head_dim": 128,
                "value_head_dim": 128,
                "conv_kernel": 4,
                "state_dtype": "float32",
            },
        },
    ),
    "gemma-swa": (
        ck.GEMMA_SWA,
        {
            "num_layers": 12,
            "full_attention_layers": 2,
            "sliding_window_layers": 10,
            "sliding_window": 1024,
            "num_kv_heads": 2,
            "head_dim": 512,
            "vision": True,
        },
    ),
    "moe": (
        ck.MOE,
        {
            "num_layers": 48,
            "full_attention_layers": 48,
            "moe": {
                "num_experts": 128,
                "experts_per_token": 8,
                "moe_intermediate_size": 768,
                "shared_experts": 0,
            },
        },
    ),
    "mamba-hybrid": (
        ck.MAMBA_HYBRID,
        {
            "num_layers": 24,
            "full_attention_layers": 4,
            "mamba": {
                "layers": 12,
                "num_heads": 64,
                "head_dim": 64,
                "state_size": 128,
                "n_groups": 8,
                "conv_kernel": 4,
                "state_dtype": "float32",
            },
            "moe": {
                "num_experts": 128,
                "experts_per_token": 6,
                "moe_intermediate_size": 1856,
                "shared_experts": 1,
            },
        },
    ),
}


@pytest.mark.parametrize("family", sorted(ARCHITECTURES))
def test_architecture_facts_come_from_config_json(
    hub: FakeHub, invoke: Invoke, family: str
) -> None:
    config, expected = ARCHITECTURES[family]
    repo = hub.add_repo(
        f"lab/{family}-7B", ck.config_files(config), lfs={"model-00001-of-00002.safetensors"}
    )
    run = invoke("model", "add", f"lab/{family}-7B", "--dry-run")
    assert run.code == 0, run.text
    model = added(run.out)
    arch = model.architecture.model_dump(exclude_none=True)
    assert {k: arch[k] for k in expected} == expected
    # Pinned to the commit main pointed at, never to `main`.
    (variant,) = model.artifacts
    assert model.artifacts[variant].revision == repo.head
    assert all(s.revision == repo.head for s in model.provenance.sources.values())
    assert origin(model, "architecture.num_layers")[0] == "config.json"
    assert model.sampling is not None and model.sampling.top_k == 20
    assert origin(model, "sampling.top_k") == ("generation_config.json", "top_k")


def test_each_family_names_the_key_its_layer_kinds_come_from(hub: FakeHub, invoke: Invoke) -> None:
    keys = {
        "qwen-hybrid": ("text_config.layer_types", "text_config.num_global_key_value_heads"),
        "gemma-swa": ("text_config.layer_types", "text_config.num_global_key_value_heads"),
        "mamba-hybrid": ("hybrid_override_pattern", "num_key_value_heads"),
    }
    for family, (layers, kv) in keys.items():
        hub.add_repo(f"lab/{family}", ck.config_files(ARCHITECTURES[family][0]))
        model = added(invoke("model", "add", f"lab/{family}", "--dry-run").out)
        assert origin(model, "architecture.full_attention_layers") == ("config.json", layers)
        if family == "gemma-swa":
            assert origin(model, "architecture.num_kv_heads") == ("config.json", kv)
            assert origin(model, "architecture.head_dim") == (
                "config.json",
                "text_config.global_head_dim",
            )
    mamba = added(invoke("model", "add", "lab/mamba-hybrid", "--dry-run").out)
    weights = mamba.artifacts["nvfp4"]
    assert (weights.format, weights.quantization) == ("nvfp4", "NVFP4")
    assert mamba.trust_remote_code is not None and "auto_map" in mamba.trust_remote_code


def test_model_add_writes_the_model_and_a_resolved_lock_entry(
    repo: Path, hub: FakeHub, invoke: Invoke
) -> None:
    files = ck.config_files(ck.MOE)
    fake = hub.add_repo(
        "lab/Qwen3-30B-A3B-W4A16",
        files,
        lfs={"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"},
    )
    run = invoke("model", "add", "lab/Qwen3-30B-A3B-W4A16")
    assert run.code == 0, run.text
    path = repo / "registry" / "models" / "qwen3-30b-a3b-w4a16.yaml"
    assert run.out.splitlines()[:2] == [
        "wrote registry/models/qwen3-30b-a3b-w4a16.yaml (20 facts with their source)",
        f"locked qwen3-30b-a3b-w4a16/ct-int4 in {LOCK_NAME} (resolved: 5 files with sha256)",
    ]
    text = path.read_text()
    assert text.startswith("# yaml-language-server: $schema=../../schema/model.schema.json\n")
    model = Model.model_validate(YAML(typ="safe", pure=True).load(text))
    weights = model.artifacts["ct-int4"]
    assert (weights.format, weights.weight_dtype, weights.quantization) == (
        "compressed-tensors",
        "int4",
        "W4A16 compressed-tensors",
    )
    assert origin(model, "artifacts.ct-int4.format") == (
        "config.json",
        "quantization_config.quant_method",
    )
    entry = json.loads((repo / LOCK_NAME).read_text())["artifacts"]["qwen3-30b-a3b-w4a16/ct-int4"]
    assert entry["resolved"] and entry["commit"] == fake.head
    assert {f["path"]: f["size"] for f in entry["files"]} == {p: len(b) for p, b in files.items()}
    shown = invoke("show", "qwen3-30b-a3b-w4a16", "--format", "json")
    facts = json.loads(shown.out)["provenance"]
    assert facts["architecture.moe.num_experts"] == {
        "value": 128,
        "read_from": f"lab/Qwen3-30B-A3B-W4A16/config.json@{fake.head[:12]}",
        "key": "num_experts",
    }


def test_gguf_facts_come_from_the_header_read_by_ranged_requests(
    hub: FakeHub, invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gguf_header, "FIRST_READ", 8192)  # the header needs several reads
    blob = ck.write_gguf(tmp_path / "m.gguf", tokens=3000)
    fake = hub.add_repo(
        "quant/Tiny-Llama-8B-Instruct-GGUF",
        {
            "Tiny-Llama-8B-Instruct-Q4_K_M.gguf": FakeFile(blob, lfs=True),
            "Tiny-Llama-8B-Instruct-Q8_0.gguf": FakeFile(blob[:100] + b"\0", lfs=True),
            "mmproj-F16.gguf": FakeFile(b"projector", lfs=True),
        },
    )
    run = invoke(
        "model", "add", "quant/Tiny-Llama-8B-Instruct-GGUF", "--gguf", "Q4_K_M", "--dry-run"
    )
    assert run.code == 0, run.text
    model = added(run.out)
    assert model.id == "tiny-llama-8b-instruct" and model.name == "Tiny Llama 8B Instruct"
    weights = model.artifacts["quant-q4km"]
    assert (weights.format, weights.quantization, weights.files) == (
        "gguf",
        "Q4_K_M",
        ["Tiny-Llama-8B-Instruct-Q4_K_M.gguf"],
    )
    assert weights.local_dir == "tiny-llama-8b-instruct-gguf/quant-q4km"
    assert model.artifacts["quant-mmproj"].kind == "mmproj"
    arch = model.architecture
    assert (arch.num_layers, arch.num_kv_heads, arch.head_dim, arch.vocab_size) == (
        32,
        8,
        128,
        128256,
    )
    assert origin(model, "architecture.num_layers") == (
        "Tiny-Llama-8B-Instruct-Q4_K_M.gguf",
        "llama.block_count",
    )
    assert origin(model, "architecture.vision") == ("mmproj-F16.gguf", None)
    assert model.sampling is not None and model.sampling.top_k == 40
    # Only ranged GETs of the header: never the tensor data.
    reads = hub.requests("resolve_get", repo=fake.repo_id)
    assert len(reads) >= 2 and all(r.range and r.status == 206 for r in reads)
    assert sum(r.sent for r in reads) < len(blob) // 4
    assert run.err.startswith(
        f"read quant/Tiny-Llama-8B-Instruct-GGUF@{fake.head[:12]}: "
        "Tiny-Llama-8B-Instruct-Q4_K_M.gguf (header, "
    )


def test_a_split_gguf_lists_every_shard(hub: FakeHub, invoke: Invoke, tmp_path: Path) -> None:
    first = ck.write_gguf(tmp_path / "a.gguf", tokens=50, tensor_bytes=4096)
    hub.add_repo(
        "quant/Big-GGUF",
        {
            "Q8_0/Big-Q8_0-00001-of-00002.gguf": first,
            "Q8_0/Big-Q8_0-00002-of-00002.gguf": b"\0" * 64,
        },
    )
    model = added(invoke("model", "add", "quant/Big-GGUF", "--dry-run").out)
    assert model.artifacts["quant-q4km"].files == [
        "Q8_0/Big-Q8_0-00001-of-00002.gguf",
        "Q8_0/Big-Q8_0-00002-of-00002.gguf",
    ]


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"README.md": b"hi"}, "has no config.json (and no GGUF file)"),
        ({"config.json": b"{not json"}, "config.json is not valid JSON (Expecting property name"),
        ({"config.json": b"[1, 2]"}, "config.json is not a JSON object"),
        (
            {"config.json": json.dumps({**ck.DENSE, "num_hidden_layers": None}).encode()},
            "config.json has no num_hidden_layers (nor n_layer, num_layers): cannot tell num layers",
        ),
        (
            {"config.json": json.dumps({**ck.DENSE, "num_key_value_heads": 5}).encode()},
            "error: [schema] architecture.num_kv_heads: num_attention_heads must be a multiple "
            "of num_kv_heads",
        ),
        (
            {
                "config.json": json.dumps(
                    {**ck.DENSE, "quantization_config": {"quant_method": "bitsandbytes"}}
                ).encode()
            },
            "config.json: quantization method 'bitsandbytes' is not one profilegen serves",
        ),
        ({"x.gguf": b"GGML" + b"\0" * 60}, "x.gguf: not a GGUF file (no GGUF magic)"),
        ({"x.gguf": b"GGUF\x03\0\0\0" + b"\xff" * 16}, "x.gguf: tensor count"),
    ],
    ids=[
        "no-config",
        "not-json",
        "not-object",
        "no-layers",
        "bad-heads",
        "bad-quant",
        "not-gguf",
        "huge-count",
    ],
)
def test_a_bad_checkpoint_is_a_clear_error_and_nothing_is_written(
    repo: Path, hub: FakeHub, invoke: Invoke, files: dict[str, bytes], message: str
) -> None:
    hub.add_repo("lab/Broken-7B", files)
    before = snapshot(repo)
    run = invoke("model", "add", "lab/Broken-7B")
    # A checkpoint that cannot be read is bad input (2); one read into a model that fails
    # the check is a finding (1).
    assert run.code == (1 if "[schema]" in message else 2), run.text
    assert message in run.err
    assert "Traceback" not in run.text
    assert snapshot(repo) == before


def test_unknown_repo_or_revision_is_a_usage_error(
    repo: Path, hub: FakeHub, invoke: Invoke
) -> None:
    hub.add_repo("lab/Real-7B", ck.config_files(ck.DENSE))
    before = snapshot(repo)
    run = invoke("model", "add", "lab/Missing-7B")
    assert (run.code, run.err.strip()) == (
        2,
        "error: lab/Missing-7B (lab/Missing-7B): repository not found (or private and the "
        "token cannot read it)",
    )
    run = invoke("model", "add", "lab/Real-7B", "--revision", "nope")
    assert run.code == 2 and "revision 'nope' not found" in run.err
    run = invoke("model", "add", "not a repo")
    assert (run.code, run.err.strip()) == (
        2,
        "error: 'not a repo' is not a Hub repository id (owner/name)",
    )
    assert snapshot(repo) == before


def test_an_existing_model_is_refused(hub: FakeHub, invoke: Invoke) -> None:
    hub.add_repo("lab/Real-7B", ck.config_files(ck.DENSE))
    run = invoke("model", "add", "lab/Real-7B", "--id", "qwen3.6-27b")
    assert run.code == 2
    assert "model 'qwen3.6-27b' already exists (registry/models/qwen3.6-27b.yaml)" in run.err


def test_offline_from_a_local_folder_pins_the_recorded_commit(
    repo: Path, invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CONTRIBUTING's offline example: the checkpoint's small files copied into a folder."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    commit = "0123456789abcdef0123456789abcdef01234567"
    folder = tmp_path / "hub" / "models--lab--Dense-7B" / "snapshots" / commit
    folder.mkdir(parents=True)
    for name in ("config.json", "generation_config.json"):
        (folder / name).write_bytes(ck.config_files(ck.DENSE)[name])
    run = invoke("model", "add", "lab/Dense-7B", "--from-dir", str(folder))
    assert run.code == 0, run.text
    assert (
        f"locked dense-7b/bf16 in {LOCK_NAME} (declared facts only: a maintainer runs " in run.out
    )
    model = Model.model_validate(
        YAML(typ="safe", pure=True).load((repo / "registry/models/dense-7b.yaml").read_text())
    )
    assert model.artifacts["bf16"].revision == commit
    assert model.provenance.sources["config"].revision == commit
    # No weights in the folder: their size is the parameter count config.json implies at
    # bf16's 2 bytes, and the file says it is an estimate (never the folder's few bytes).
    embedding, rest = ck.parameters(ck.DENSE)
    assert (embedding + rest) * 2 == 16_059_990_016
    size = model.artifacts["bf16"].size
    assert size is not None and (size.value, size.unit) == (16.06, "GB")
    how = "8.03B parameters implied by config.json x 2 bytes (torch_dtype bfloat16)"
    found = model.provenance.facts["artifacts.bf16.size"]
    assert not isinstance(found, str) and (found.source, found.estimate) == ("config", how)
    shown = json.loads(invoke("show", "dense-7b", "--format", "json").out)
    assert shown["provenance"]["artifacts.bf16.size"] == {
        "value": {"value": 16.06, "unit": "GB"},
        "read_from": f"lab/Dense-7B/config.json@{commit[:12]}",
        "estimate": how,
    }
    # Without the Hub and without a recorded commit, the revision must be given.
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "config.json").write_bytes(json.dumps(ck.DENSE).encode())
    run = invoke("model", "add", "lab/Bare-7B", "--from-dir", str(bare))
    assert run.code == 2
    assert "cannot tell which commit these files are; pass --revision" in run.err
    run = invoke("model", "add", "lab/Bare-7B", "--from-dir", str(bare), "--revision", "main")
    assert run.code == 2 and "pinned by its 40-hex commit, not a branch or tag" in run.err
    # Offline (HF_HUB_OFFLINE, as --offline), the Hugging Face cache is read, never the Hub.
    run = invoke("model", "add", "lab/Bare-7B")
    assert run.code == 2, run.text
    assert run.err.startswith("error: lab/Bare-7B: the Hugging Face cache (")
    assert run.err.endswith(
        "has no copy at main; offline, `model add` reads only that cache (or --from-dir DIR)\n"
    )


def test_offline_reads_the_hugging_face_cache_and_never_the_hub(
    repo: Path, invoke: Invoke, tmp_path: Path
) -> None:
    # The cache as huggingface_hub lays it out: a ref naming the commit, and its snapshot.
    commit = "89abcdef0123456789abcdef0123456789abcdef"
    cached = tmp_path / "hf-home" / "hub" / "models--lab--Dense-7B"
    (cached / "refs").mkdir(parents=True)
    (cached / "refs" / "main").write_text(commit)
    snapshot_dir = cached / "snapshots" / commit
    snapshot_dir.mkdir(parents=True)
    for name, content in ck.config_files(ck.DENSE).items():  # the configs; no weights
        if not name.endswith(".json"):
            continue
        (snapshot_dir / name).write_bytes(content)
    # No HF_ENDPOINT is served here: any request to the Hub would fail.
    run = invoke("model", "add", "lab/Dense-7B", "--offline", "--format", "json")
    assert run.code == 0, run.text
    data = json.loads(run.out)
    assert (data["model"], data["file"], data["dry_run"]) == (
        "dense-7b",
        "registry/models/dense-7b.yaml",
        False,
    )
    assert data["read"] == {
        "from": str(snapshot_dir),
        "files": ["config.json", "generation_config.json"],
    }
    assert data["locked"] == {"dense-7b/bf16": {"resolved": False, "files": 0}}
    model = Model.model_validate(
        YAML(typ="safe", pure=True).load((repo / "registry/models/dense-7b.yaml").read_text())
    )
    assert model.artifacts["bf16"].revision == commit
    missing = invoke("model", "add", "lab/Other-7B", "--offline")
    assert missing.code == 2
    assert "has no copy at main; offline, `model add` reads only that cache" in missing.err


@pytest.mark.parametrize(
    ("arch", "shown"),
    [
        ("llama\n::error ::check passed", "llama\\x0a::error ::check passed"),
        ("llama\u202e", "llama\\u202e"),
        ("x" * 65, "x" * 65),
        ("", None),
    ],
)
def test_a_gguf_architecture_that_is_no_name_is_refused_and_shown_escaped(
    repo: Path,
    invoke: Invoke,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    arch: str,
    shown: str | None,
) -> None:
    """`general.architecture` becomes metadata keys, the family and lines of output: a newline
    in it could forge a `::error` or a "check passed" line."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = tmp_path / "gguf"
    folder.mkdir()
    ck.write_gguf(folder / "Evil-Q4_K_M.gguf", arch=arch, tokens=50, tensor_bytes=4096)
    run = invoke(
        "model",
        "add",
        "lab/Evil-GGUF",
        "--from-dir",
        str(folder),
        "--gguf",
        "Q4_K_M",
        "--revision",
        "0123456789abcdef0123456789abcdef01234567",
    )
    assert run.code == 2, run.text
    if shown is None:
        assert "Evil-Q4_K_M.gguf has no general.architecture" in run.err
    else:
        assert run.err.strip().endswith(
            f"Evil-Q4_K_M.gguf: general.architecture '{shown}' is not an architecture name "
            "(one word of letters, digits, '_', '.' and '-', at most 64 characters)"
        )
    assert "\n::error" not in run.out + run.err
    assert not (repo / "registry/models/evil.yaml").exists()


def test_a_config_model_type_that_is_no_name_is_refused(
    repo: Path, invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = tmp_path / "cfg"
    folder.mkdir()
    config = json.loads(ck.config_files(ck.DENSE)["config.json"])
    config["model_type"] = "qwen3\ncheck passed: 0 errors"
    (folder / "config.json").write_text(json.dumps(config))
    run = invoke(
        "model",
        "add",
        "lab/Dense-7B",
        "--from-dir",
        str(folder),
        "--revision",
        "0123456789abcdef0123456789abcdef01234567",
    )
    assert run.code == 2, run.text
    assert "config.json: model_type 'qwen3\\x0acheck passed: 0 errors' is not an architecture" in (
        run.err
    )
