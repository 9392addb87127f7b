"""The result cache is never stale, survives corruption and concurrent writers, and can be off."""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from profilegen.cache import Inputs, Store
from profilegen.cache import store as store_module
from profilegen.cache.fingerprint import code_files_digest
from profilegen.cache.store import FORMAT
from profilegen.registry.cached import load_registry_cached
from profilegen.registry.loader import load_registry
from tests.support.cli import Invoke, invoke_in
from tests.support.cliproc import run_cli_process

BASE = Path(__file__).resolve().parents[1] / "registry" / "base"  # a two-profile registry
TINY = "tiny-chat"
PROFILE = "qwen38-27b-dual-fast"
FILE = f"registry/profiles/{PROFILE}.yaml"
TITLE = 'title: "Qwen3.8-27B INT4 AutoRound + MTP n=4, TP2"'


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache of this test's own, so what it finds there was written by this test."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("PROFILEGEN_CACHE", str(folder))
    monkeypatch.delenv("PROFILEGEN_NO_CACHE", raising=False)
    return folder


@pytest.fixture
def tiny(tmp_path: Path, cache: Path) -> Path:
    """A small registry, consistent (schemas, lock, generated tree): `check` is quick on it."""
    root = tmp_path / "tiny"
    shutil.copytree(BASE, root)
    for args in (("schema",), ("lock", "--offline"), ("render", "--all")):
        assert invoke_in(root, *args).code == 0
    return root


def _edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def _entries(cache: Path, kind: str) -> list[Path]:
    folder = cache / "results" / kind
    return sorted(folder.iterdir()) if folder.is_dir() else []


def test_render_is_cached_and_one_changed_byte_changes_it(
    repo: Path, invoke: Invoke, cache: Path
) -> None:
    first = invoke("render", PROFILE)
    assert first.code == 0 and len(_entries(cache, "render")) == 1
    assert invoke("render", PROFILE).out == first.out  # served from the cache
    _edit(repo, FILE, TITLE, TITLE[:-1] + 'X"')
    changed = invoke("render", PROFILE)
    assert changed.out != first.out and "TP2X" in changed.out
    assert len(_entries(cache, "render")) == 2


def test_a_registry_template_override_changes_the_render(
    repo: Path, invoke: Invoke, cache: Path
) -> None:
    before = invoke("render", PROFILE).out
    override = repo / "templates" / "compose" / "header.txt.j2"
    override.parent.mkdir(parents=True, exist_ok=True)
    override.write_text("{{ p.id }}: overridden header\n", encoding="utf-8")
    after = invoke("render", PROFILE).out
    assert after != before and after.startswith(f"# {PROFILE}: overridden header\n")


def test_check_sees_a_changed_schema_and_a_changed_generated_file(tiny: Path) -> None:
    assert invoke_in(tiny, "check", "-q").code == 0
    assert len(_entries(tiny.parent / "cache", "check")) == 1
    schema = "schema/profile.schema.json"
    _edit(tiny, schema, '"title": "profilegen registry file: profile"', '"title": "x"')
    stale = invoke_in(tiny, "check", "-q")
    assert stale.code == 1 and "schema/profile.schema.json is stale" in stale.out
    assert invoke_in(tiny, "schema").code == 0 and invoke_in(tiny, "check", "-q").code == 0
    compose = tiny / "compose" / TINY / "compose.yaml"
    compose.write_bytes(compose.read_bytes() + b"# edited\n")
    edited = invoke_in(tiny, "check", "-q")
    assert edited.code == 1 and "differs from a fresh render" in edited.out


def test_corrupt_and_foreign_entries_are_ignored_and_rewritten(tiny: Path, cache: Path) -> None:
    good = invoke_in(tiny, "check", "--format", "json").out
    for kind in ("check", "registry", "profile", "documents"):
        assert _entries(cache, kind), kind
        for entry in _entries(cache, kind):
            entry.write_bytes(FORMAT + entry.name.encode() + b"\n" + b"\x80not a pickle")
    assert invoke_in(tiny, "check", "--format", "json").out == good
    for entry in _entries(cache, "check"):
        entry.write_bytes(b"someone else's file\n")
    assert invoke_in(tiny, "check", "--format", "json").out == good
    (entry,) = _entries(cache, "check")
    assert entry.read_bytes().startswith(FORMAT)  # rewritten


def test_a_cache_folder_others_may_write_is_not_trusted(repo: Path, cache: Path) -> None:
    inputs = Inputs(repo, ("registry",), ("test",))
    store = Store("test")
    store.put_object(inputs.key(), {"answer": 42})
    assert store.get_object(inputs.key()) == {"answer": 42}
    store.folder.chmod(0o777)
    assert store.get_object(inputs.key()) is None


def test_no_cache_writes_and_reads_nothing(
    tiny: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.rmtree(cache / "results")
    assert invoke_in(tiny, "--no-cache", "render", TINY).code == 0
    assert invoke_in(tiny, "--no-cache", "check", "-q").code == 0
    assert not (cache / "results").exists()
    monkeypatch.setenv("PROFILEGEN_NO_CACHE", "1")
    assert invoke_in(tiny, "render", TINY).code == 0 and invoke_in(tiny, "check", "-q").code == 0
    assert not (cache / "results").exists()


def test_a_symlink_in_the_registry_turns_caching_off(repo: Path, cache: Path) -> None:
    (repo / "registry" / "notes.yaml").symlink_to(repo / FILE)
    assert Inputs(repo, ("registry",)).key() is None
    assert invoke_in(repo, "render", PROFILE).code == 0
    assert not (cache / "results" / "render").exists()


def test_concurrent_runs_leave_whole_entries(repo: Path, cache: Path) -> None:
    """Processes racing on one key each write a whole entry; a reader then gets the answer."""
    env = {**os.environ, "PROFILEGEN_CACHE": str(cache)}
    expected = invoke_in(repo, "--no-cache", "render", PROFILE).out

    def one(_: int) -> str:
        done = run_cli_process(["--root", str(repo), "render", PROFILE], env=env)
        assert done.code == 0, done.err
        return done.out

    with ThreadPoolExecutor(4) as pool:  # four at once: each finds no entry and writes one
        outputs = list(pool.map(one, range(4)))
    outputs.append(invoke_in(repo, "render", PROFILE).out)  # served from what they left
    assert set(outputs) == {expected}
    (entry,) = _entries(cache, "render")
    assert entry.read_bytes().endswith(expected.encode())
    assert not [p for p in entry.parent.iterdir() if p.name.endswith(".tmp")]


def test_code_digest_sees_edits_but_not_bytecode_appearing(tmp_path: Path) -> None:
    """A first import writes __pycache__ into a package folder (changing the folder's time):
    the code is the same, so is the digest; an edited module changes it."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    module = package / "sub" / "mod.py"
    module.write_text("x = 1\n", encoding="utf-8")
    os.utime(package / "sub", ns=(1, 1))
    before = code_files_digest((package,))
    (package / "sub" / "__pycache__").mkdir()
    (package / "sub" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")
    assert (package / "sub").stat().st_mtime_ns != 1
    assert code_files_digest((package,)) == before
    module.write_text("x = 22\n", encoding="utf-8")  # another size: file times can be coarse
    assert code_files_digest((package,)) != before


def test_a_copy_of_the_registry_elsewhere_loads_from_the_cache(repo: Path, cache: Path) -> None:
    """Another checkout (or worktree) of the same bytes reuses the loaded registry, which is
    then what loading it there makes: its root, its documents' paths, its findings."""
    _edit(repo, FILE, TITLE, TITLE + "\nunknown_key: 1")  # a finding to carry over
    elsewhere = repo.parent / "elsewhere"
    shutil.copytree(repo, elsewhere)
    load_registry_cached(repo)
    moved, moved_findings = load_registry_cached(elsewhere)
    assert len(_entries(cache, "registry")) == 1  # one entry served both
    fresh, fresh_findings = load_registry(elsewhere)
    assert moved == fresh and moved.root == elsewhere
    assert moved_findings.findings == fresh_findings.findings
    assert [f.location.file for f in moved_findings.findings] == [FILE]


def test_registries_share_one_stored_copy_of_the_facts_and_read_back_whole(
    repo: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stored registry leaves its engines' facts to an entry of their own, which registries
    that differ elsewhere share; read back, it is the registry the loader makes, and without
    its facts entry it is loaded again rather than handed out without facts."""
    load_registry_cached(repo)
    path = repo / FILE
    path.write_text(path.read_text(encoding="utf-8") + "\n# another text\n", encoding="utf-8")
    load_registry_cached(repo)
    assert (len(_entries(cache, "registry")), len(_entries(cache, "facts"))) == (2, 1)
    fresh = load_registry(repo)[0]
    monkeypatch.setattr(store_module, "_KEPT", {})  # a new process: only the files
    assert load_registry_cached(repo)[0] == fresh and fresh.facts
    for entry in _entries(cache, "facts"):
        entry.unlink()
    monkeypatch.setattr(store_module, "_KEPT", {})
    assert load_registry_cached(repo)[0] == fresh


def test_an_empty_folder_added_to_the_registry_is_not_served_from_the_cache(tiny: Path) -> None:
    assert invoke_in(tiny, "check", "-q").code == 0
    (tiny / "registry" / "profiles" / "old.yaml").mkdir()
    again = invoke_in(tiny, "check", "-q")
    assert again.code == 1, again.text
    assert "registry/profiles/old.yaml: error: [layout] old.yaml is a folder" in again.text


def test_registries_that_differ_in_one_file_share_everything_else(tmp_path: Path) -> None:
    """The loader builds again only what the changed text reaches: the other entities (and the
    profiles whose extends chain did not change) are the very objects of the first load, and
    an invalid file is reported on every load, not only the first."""
    first_root, second_root = tmp_path / "one", tmp_path / "two"
    shutil.copytree(BASE, first_root)
    shutil.copytree(BASE, second_root)
    model = next((second_root / "registry" / "models").glob("*.yaml"))
    model.write_text(model.read_text(encoding="utf-8") + "\n# another text\n", encoding="utf-8")
    first, _ = load_registry(first_root)
    second, _ = load_registry(second_root)
    changed = model.stem
    assert second.models[changed] == first.models[changed]  # a comment changed: the same data
    assert second.models[changed] is not first.models[changed]  # from another text
    assert all(second.engines[e] is first.engines[e] for e in first.engines)
    unchanged = [p for p in first.profiles.values() if p.model != changed]
    assert all(second.profiles[p.id] is p for p in unchanged)
    # A file the model refuses is refused (and located) each time it is loaded.
    bad = second_root / "registry" / "gpus" / next(iter(second.gpus))
    text = bad.with_suffix(".yaml").read_text(encoding="utf-8")
    bad.with_suffix(".yaml").write_text(text + "bogus_key: 1\n", encoding="utf-8")
    found = [load_registry(second_root)[1].findings for _ in range(2)]
    assert found[0] == found[1] and len(found[0]) == 1
    assert "bogus_key" in found[0][0].message


def test_a_file_rewritten_with_its_old_size_changes_the_digest(tmp_path: Path) -> None:
    """The digest of a file that has not changed for a while is taken from what its status
    says; a rewrite changes its modification time, and a file changed within the clock's
    granularity of a read is read again, so the new bytes are always seen."""
    (tmp_path / "registry").mkdir()
    path = tmp_path / "registry" / "a.yaml"
    inputs = Inputs(tmp_path, ("registry",))
    path.write_bytes(b"one\n")
    first = inputs.key()
    path.write_bytes(b"two\n")  # the same size, within the same clock tick or not
    second = inputs.key()
    assert second != first
    os.utime(path, (1_600_000_000, 1_600_000_000))  # settled: its digest is remembered
    assert inputs.key() == second
    path.write_bytes(b"one\n")
    assert inputs.key() == first
    link = tmp_path / "elsewhere" / "registry" / "a.yaml"
    link.parent.mkdir(parents=True)
    os.link(path, link)  # a hard-linked copy: the same bytes, whatever linking changes
    assert Inputs(tmp_path / "elsewhere", ("registry",)).key() == first


def test_documents_parsed_by_other_code_are_not_used(tmp_path: Path, cache: Path) -> None:
    """The parsed texts in the store are reused only by the code that parsed them: a reader
    of another version may have made other data of the same text."""
    root = tmp_path / "tiny"
    shutil.copytree(BASE, root)
    model = next((root / "registry" / "models").glob("*.yaml"))
    text = model.read_text(encoding="utf-8") + "\n# a text no other test reads\n"
    model.write_text(text, encoding="utf-8")
    digest = hashlib.sha256(text.encode()).hexdigest()
    forged = {digest: pickle.dumps(({"id": "forged"}, {}))}
    for held in (forged, ("another version of profilegen", forged)):
        Store("documents").put_object("parsed", held)
        shutil.rmtree(cache / "results" / "registry", ignore_errors=True)
        other = tmp_path / f"copy-{len(held)}"
        shutil.copytree(root, other)
        registry, sink = load_registry_cached(other)
        assert sink.errors == []
        assert model.stem in registry.models
