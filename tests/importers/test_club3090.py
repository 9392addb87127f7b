"""`profilegen import club3090` on small upstream-shaped trees written for these tests."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from profilegen.registry import open_registry
from tests.support.cli import Run, invoke_in

from .fixtures import LLAMA_COMPOSE, VLLM_COMPOSE, base_files, commit, write_tree

REAL = Path(__file__).resolve().parents[2]


@pytest.fixture
def upstream(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "club-3090"
    files = base_files()
    files["models/tiny-9b/llama-cpp/compose/single/gguf-q4/base.yml"] = LLAMA_COMPOSE.replace(
        "${PORT:-8202}", "${PORT:-8203}"
    )
    return repo, commit(repo, files, "catalogue")


def run(root: Path, *args: str) -> Run:
    return invoke_in(root, *args)


def _pinned_files(target: Path, upstream: Path) -> list[str]:
    """The upstream files the imported remote patches pin (by sha256)."""
    pins = {
        f.sha256
        for p in open_registry(target).patches.values()
        if p.source.kind == "remote"
        for f in p.source.files
    }
    found = [p for p in sorted(upstream.rglob("*")) if p.is_file() and ".git" not in p.parts]
    return [str(p) for p in found if hashlib.sha256(p.read_bytes()).hexdigest() in pins]


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_an_imported_catalogue_checks_clean(upstream: tuple[Path, str], target: Path) -> None:
    repo, rev = upstream
    result = run(target, "import", "club3090", str(repo), "--rev", rev)
    assert result.code == 0, result.text
    assert "wrote registry/profiles/tiny-dual-fast.yaml" in result.out
    # The lock pins a patch file only once its bytes are verified: offline, from the cache.
    assert run(target, "cache", "add", *_pinned_files(target, repo)).code == 0
    for args in (("render", "--all"), ("lock", "--offline")):
        assert run(target, *args).code == 0
    # The import cannot read an engine's release: an engine in service without its facts
    # file fails check (nothing its profiles pass would be judged) until a maintainer adds it.
    check = run(target, "check", "--quiet")
    assert [line.split(": error: ")[-1].split(" (")[0] for line in check.out.splitlines()[:-1]] == [
        f"[engine-facts-file] {e} has no facts file: what its profiles pass is not checked "
        "against its release"
        for e in ("llama.cpp-b10236", "vllm-v0.27.1")
    ], check.text
    # What `profilegen engine facts ID` writes from the release (the catalogue's own files).
    for engine in ("llama.cpp-b10236", "vllm-v0.27.1"):
        facts = f"registry/engines/facts/{engine}.json"
        (target / facts).parent.mkdir(exist_ok=True)
        shutil.copy(REAL / facts, target / facts)
    check = run(target, "check")
    assert check.code == 0, check.text
    shown = json.loads(run(target, "show", "vllm/tiny-dual-fast", "--format", "json").out)
    assert (shown["upstream_key"], shown["upstream_rev"]) == ("vllm/tiny-dual-fast", rev[:8])
    assert shown["serve"]["gateway_aliases"] == ["tiny-fast"]


def test_the_imported_profile_runs_what_the_compose_runs(
    upstream: tuple[Path, str], target: Path
) -> None:
    repo, rev = upstream
    assert run(target, "import", "club3090", str(repo), "--rev", rev).code == 0
    vllm = json.loads(run(target, "explain", "tiny-dual-fast", "--format", "json").out)
    argv = vllm["argv"]
    pairs = dict(zip(argv, argv[1:], strict=False))
    assert pairs["--model"] == "/root/.cache/huggingface/tiny-9b-int4"
    assert pairs["--mamba-backend"] == "triton"  # modelled: runtime.mamba_backend
    assert "--disable-log-stats" in argv  # not modelled: carried verbatim
    assert json.loads(pairs["--speculative-config"]) == {
        "method": "mtp",
        "num_speculative_tokens": 3,
    }
    assert json.loads(pairs["--override-generation-config"]) == {
        "temperature": 0.7,
        "top_p": 0.8,
        "top_k": 20,
    }
    assert "--disable-custom-all-reduce" in argv and "--enable-prefix-caching" in argv
    assert vllm["env"]["NCCL_P2P_DISABLE"] == "1" and vllm["patches"][-1][:3] == [
        "script",
        "tiny-fix",
        "install.sh",
    ]
    off = json.loads(
        run(target, "explain", "tiny-dual-fast", "-e", "SPEC=off", "--format", "json").out
    )
    assert "--speculative-config" not in off["argv"]
    llama = json.loads(run(target, "explain", "tiny-single-q4", "--format", "json").out)
    assert llama["exe"] == "llama-server"
    assert llama["argv"][:2] == ["-m", "/models/tiny-9b-gguf/q4/Tiny-9B-Q4_K_M.gguf"]
    assert {"--no-mmap", "--no-warmup", "--jinja", "-fa"} <= set(llama["argv"])


def test_reimporting_the_same_revision_changes_nothing(
    upstream: tuple[Path, str], target: Path
) -> None:
    repo, rev = upstream
    assert run(target, "import", "club3090", str(repo), "--rev", rev).code == 0
    before = snapshot(target)
    again = run(target, "import", "club3090", str(repo), "--rev", rev)
    assert again.code == 0 and "0 files changed" in again.out
    assert snapshot(target) == before


def test_a_corrected_architecture_fact_survives_a_reimport(
    upstream: tuple[Path, str], target: Path
) -> None:
    repo, rev = upstream
    assert run(target, "import", "club3090", str(repo), "--rev", rev).code == 0
    path = next((target / "registry/models").glob("*.yaml"))
    text = path.read_text()
    line = next(x for x in text.splitlines() if x.strip().startswith("num_kv_heads:"))
    heads = int(line.split(":")[1])
    path.write_text(text.replace(line, line.replace(str(heads), "1")))
    assert run(target, "import", "club3090", str(repo), "--rev", rev).code == 0
    assert line.replace(str(heads), "1") in path.read_text()


def test_curated_alternatives_survive_a_reimport(upstream: tuple[Path, str], target: Path) -> None:
    """Upstream does not say which profiles are never served together: a maintainer does,
    and a re-import keeps it."""
    repo, rev = upstream
    assert run(target, "import", "club3090", str(repo), "--rev", rev).code == 0
    path = target / "registry/profiles/tiny-dual-fast.yaml"
    text = path.read_text()
    port = next(line for line in text.splitlines() if line.startswith("port: "))
    path.write_text(text.replace(port, f"{port}\nalternatives: [tiny-single-q4]", 1))
    again = run(target, "import", "club3090", str(repo), "--rev", rev)
    assert again.code == 0, again.text
    assert "alternatives: [tiny-single-q4]" in path.read_text()
    shown = json.loads(run(target, "show", "tiny-dual-fast", "--format", "json").out)
    assert shown["alternatives"] == ["tiny-single-q4"]


@pytest.mark.parametrize(
    ("corrected", "kept"),
    [
        ("{value: 5.5, unit: GiB}", True),  # upstream's 5.5 read as GiB (the unit trap)
        ("{value: 5612345678, unit: B}", True),  # a measured download near the rounded figure
        ("{value: 7.5, unit: GB}", False),  # far from upstream's figure either way: upstream's
    ],
)
def test_a_corrected_artifact_size_survives_a_reimport(
    upstream: tuple[Path, str], target: Path, corrected: str, kept: bool
) -> None:
    repo, rev = upstream
    assert run(target, "import", "club3090", str(repo), "--rev", rev).code == 0
    path = target / "registry/models/tiny-9b.yaml"
    imported = "size: {value: 5.5, unit: GB}"
    assert imported in path.read_text()
    path.write_text(path.read_text().replace(imported, f"size: {corrected}", 1))
    assert run(target, "import", "club3090", str(repo), "--rev", rev).code == 0
    assert (f"size: {corrected}" in path.read_text()) is kept


def test_a_newer_revision_is_a_small_reviewable_diff(
    upstream: tuple[Path, str], target: Path
) -> None:
    repo, rev = upstream
    assert run(target, "import", "club3090", str(repo), "--rev", rev).code == 0
    newer = commit(repo, {"models/tiny-9b/vllm/compose/dual/int4/mtp.yml": VLLM_COMPOSE.replace(
        "${MAX_MODEL_LEN:-65536}", "${MAX_MODEL_LEN:-49152}")}, "shorter context")  # fmt: skip
    result = run(target, "import", "club3090", str(repo), "--rev", newer)
    changed = [line.split()[-1] for line in result.out.splitlines() if line.startswith("wrote ")]
    assert "registry/profiles/tiny-dual-fast.yaml" in changed
    assert "max_model_len: 49152" in (target / "registry/profiles/tiny-dual-fast.yaml").read_text()
    assert not any(path.startswith(("registry/models/", "registry/patches/")) for path in changed)


def test_what_is_not_modelled_and_what_disagrees_is_listed(
    upstream: tuple[Path, str], target: Path
) -> None:
    repo, rev = upstream
    result = run(target, "import", "club3090", str(repo), "--rev", rev, "--dry-run")
    assert (
        "escape: vllm/tiny-dual-fast: not modelled, kept as extra arguments: --disable-log-stats"
        in result.err
    )
    assert (
        "escape: llamacpp/tiny-single-q4: not modelled, kept as extra arguments: --no-warmup"
        in result.err
    )
    assert (
        "drift: llamacpp/tiny-single-q4: registry default_port 8202 vs compose 8203 "
        "(models/tiny-9b/llama-cpp/compose/single/gguf-q4/base.yml); imported the compose's"
    ) in result.err
    assert "would write registry/profiles/tiny-dual-fast.yaml" in result.out
    assert not (target / "registry" / "profiles").exists()  # a dry run writes nothing


def test_only_imports_the_named_keys(upstream: tuple[Path, str], target: Path) -> None:
    repo, rev = upstream
    result = run(
        target, "import", "club3090", str(repo), "--rev", rev, "--only", "llamacpp/tiny-single-q4"
    )
    assert result.code == 0, result.text
    assert sorted(p.name for p in (target / "registry/profiles").iterdir()) == [
        "tiny-single-q4.yaml"
    ]


def test_the_older_python_registry_is_read_without_running_it(tmp_path: Path, target: Path) -> None:
    repo = tmp_path / "older"
    files = base_files()
    del files["scripts/lib/profiles/registry.yaml"]
    files["scripts/lib/profiles/compose_registry.py"] = (
        "import os\nos.system('touch pwned')\n"
        "COMPOSE_REGISTRY = {\n"
        "    'llamacpp/tiny-single-q4': _entry(model='tiny-9b', weights_variant='gguf-q4',\n"
        "        engine='llama-cpp-local', drafter=None, tp=1, max_ctx=32768, max_num_seqs=1,\n"
        "        mem_util=None, default_port=8202, status='experimental',\n"
        "        compose_path='models/tiny-9b/llama-cpp/compose/single/gguf-q4/base.yml'),\n"
        "}\n"
    )
    rev = commit(repo, files, "older layout")
    result = run(target, "import", "club3090", str(repo), "--rev", rev)
    assert result.code == 0, result.text
    assert (target / "registry/profiles/tiny-single-q4.yaml").is_file()
    assert not (target / "pwned").exists() and not Path("pwned").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"models/tiny-9b/vllm/compose/dual/int4/mtp.yml": "services: [\n"},
            "error: models/tiny-9b/vllm/compose/dual/int4/mtp.yml: not valid YAML",
        ),
        (
            {"scripts/lib/profiles/registry.yaml": "entries: [1, 2]\n"},
            "error: scripts/lib/profiles/registry.yaml: no `entries:` mapping",
        ),
        (
            {"models/tiny-9b/vllm/compose/dual/int4/mtp.yml": "services:\n  a: {}\n  b: {}\n"},
            "error: models/tiny-9b/vllm/compose/dual/int4/mtp.yml: expected exactly one service under `services:`",
        ),
    ],
)
def test_a_malformed_catalogue_is_refused_and_nothing_is_written(
    tmp_path: Path, target: Path, change: dict[str, str], message: str
) -> None:
    repo = tmp_path / "broken"
    rev = commit(repo, {**base_files(), **change}, "broken")
    before = snapshot(target)
    result = run(target, "import", "club3090", str(repo), "--rev", rev)
    assert result.code == 2
    assert result.err.strip().splitlines()[0].startswith(message), result.err
    assert snapshot(target) == before


def test_bad_sources_are_usage_errors(
    upstream: tuple[Path, str], target: Path, tmp_path: Path
) -> None:
    repo, _ = upstream
    cases = [
        (["--rev", "0000000"], "error: '0000000' is not a commit of"),
        (
            ["--only", "vllm/nope"],
            "error: scripts/lib/profiles/registry.yaml at HEAD has no key vllm/nope",
        ),
    ]
    for extra, message in cases:
        result = run(target, "import", "club3090", str(repo), *extra)
        assert result.code == 2 and result.err.startswith(message), result.err
    plain = tmp_path / "plain"
    write_tree(plain, base_files())
    result = run(target, "import", "club3090", str(plain), "--rev", "HEAD")
    assert result.code == 2 and "is not a git repository: --rev needs one" in result.err
    assert (
        run(target, "import", "club3090", str(plain), "--dry-run").code == 0
    )  # a plain folder works
