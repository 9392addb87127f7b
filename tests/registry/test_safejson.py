"""JSON profilegen did not just make is read bounded: nesting, size and numbers are capped before
Python's parser runs, and a file past them is a located error, never a RecursionError.

Each reader is tried with a 2,000-deep document: engine facts, the lock, a patch manifest (in
the checked-in tree and in a folder `render -o` is pointed at), the verified-files record of
a model folder, a JSON value on an engine's command line, and JSON in an imported catalogue.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from profilegen.facts.judge import judge_argv
from profilegen.hub.fetched import FETCHED_NAME, Fetched
from profilegen.hub.verify import RECORD_NAME, Record
from profilegen.importers.club3090.envmap import template_kwargs
from profilegen.importers.club3090.flags import CONVERT
from profilegen.registry import safeyaml
from profilegen.registry.safejson import MAX_DEPTH, JsonProblem, load_json, load_json_file
from tests.facts.fixtures import facts
from tests.importers.fixtures import base_files, commit
from tests.support.cli import invoke_in

BASE = Path(__file__).resolve().parents[1] / "registry" / "base"
REAL = Path(__file__).resolve().parents[2]
DEEP = '{\n  "a": ' + "[" * 2000 + "]" * 2000 + "}\n"
TOO_DEEP = "nested deeper than 64 levels: line 2 column 71 (char 72)"


def _problem(text: str | bytes) -> str:
    with pytest.raises(JsonProblem) as caught:
        load_json(text)
    return str(caught.value)


def test_nesting_is_capped_as_yaml_is() -> None:
    assert MAX_DEPTH == safeyaml.MAX_DEPTH == 64
    assert load_json("[" * 64 + "]" * 64) == json.loads("[" * 64 + "]" * 64)
    assert (
        _problem("[" * 65 + "]" * 65) == "nested deeper than 64 levels: line 1 column 65 (char 64)"
    )
    assert _problem(DEEP) == TOO_DEEP
    # Brackets inside strings do not nest.
    assert load_json('{"a": "' + "[" * 100 + '"}') == {"a": "[" * 100}


def test_numbers_size_and_encoding_are_capped() -> None:
    assert _problem('{"a":\n 1e999}') == (
        "the number 1e999, which is not finite: line 2 column 2 (char 7)"
    )
    assert _problem('{"a": NaN}') == "the number NaN, which is not finite: line 1 column 7 (char 6)"
    assert _problem("[" + "9" * 5000 + "]") == (
        "a number 5,000 digits long (at most 40): line 1 column 2 (char 1)"
    )
    with pytest.raises(JsonProblem) as caught:
        load_json("[1, 2]", limit=5)
    assert caught.value.msg == "6 characters, more than the 5 read"
    assert _problem(b'["\xff"]') == "not UTF-8 text: line 1 column 3 (char 2)"
    assert load_json('{"a": [1, 2.5, -3, true, null]}') == {"a": [1, 2.5, -3, True, None]}


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PROFILEGEN_NO_CACHE", "1")
    root = tmp_path / "tiny"
    shutil.copytree(BASE, root)
    for args in (("schema",), ("lock", "--offline"), ("render", "--all")):
        run = invoke_in(root, *args)
        assert run.code == 0, run.text
    return root


def test_deep_engine_facts_are_a_located_finding(tiny: Path) -> None:
    (tiny / "registry" / "engines" / "facts" / "vllm-test.json").write_text(DEEP)
    run = invoke_in(tiny, "check", "-q")
    assert run.code == 1, run.text
    assert "registry/engines/facts/vllm-test.json:2: error: [schema] malformed JSON: nested " in (
        run.out + run.err
    )
    assert invoke_in(tiny, "list").code == 1


def test_a_deep_lock_is_a_located_error(tiny: Path) -> None:
    (tiny / "profilegen.lock.json").write_text(DEEP)
    run = invoke_in(tiny, "check", "-q")
    assert run.code == 1, run.text
    assert (
        f"profilegen.lock.json: error: [lock] cannot be read as JSON ({TOO_DEEP}); rerun "
        "`profilegen lock`"
    ) in run.out + run.err


def test_a_deep_patch_manifest_is_a_finding_and_no_owner(tiny: Path, tmp_path: Path) -> None:
    manifest = tiny / "compose" / "tiny-chat" / "patches.manifest.json"
    manifest.write_text(DEEP.replace('"a"', '"patches"'))
    run = invoke_in(tiny, "check", "-q")
    assert run.code == 1, run.text
    assert (
        "compose/tiny-chat/patches.manifest.json:1: error: [patch-mount] patch manifest cannot "
        "be read"
    ) in run.out + run.err
    out = tmp_path / "bundle"
    out.mkdir()
    shutil.copy(manifest, out / "patches.manifest.json")
    run = invoke_in(tiny, "render", "tiny-chat", "-o", str(out))
    assert run.code == 2, run.text
    assert run.err.startswith(f"error: {out} is not empty and holds no profilegen bundle")


def test_a_deep_or_blocking_verified_record_is_ignored(tmp_path: Path) -> None:
    (tmp_path / RECORD_NAME).write_text(DEEP)
    assert Record(tmp_path).files == {}
    fifo = tmp_path / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / RECORD_NAME)
    done: list[Record] = []
    reader = threading.Thread(target=lambda: done.append(Record(fifo)), daemon=True)
    reader.start()
    reader.join(10)
    assert done and done[0].files == {}, "the record's reader waited on a FIFO"
    with pytest.raises(OSError, match="is a FIFO, not a regular file"):
        load_json_file(fifo / RECORD_NAME)


def test_a_deep_json_value_on_a_command_line_is_not_judged_as_json() -> None:
    assert judge_argv(facts(), ["--speculative-config", "[" * 2000 + "]" * 2000]) == []


def test_deep_json_in_an_imported_catalogue_is_not_taken_for_json(tmp_path: Path) -> None:
    """The speculative config a compose entrypoint builds, and a JSON flag of its command."""
    files = base_files()
    deep = "[" * 2000 + "]" * 2000
    spec = '"{\\"method\\":\\"mtp\\",\\"num_speculative_tokens\\":$$_spec_n}"'
    for name, text in files.items():
        if spec in text:
            files[name] = text.replace(spec, '"{\\"method\\":' + deep + '}"')
    assert any(deep in text for text in files.values())
    target = tmp_path / "ours"
    (target / "registry" / "gpus").mkdir(parents=True)
    shutil.copy(REAL / "registry/gpus/rtx-3090.yaml", target / "registry/gpus/rtx-3090.yaml")
    shutil.copytree(REAL / "schema", target / "schema")
    repo = tmp_path / "club-3090"
    run = invoke_in(target, "import", "club3090", str(repo), "--rev", commit(repo, files, "deep"))
    assert "internal error" not in run.text and "Traceback" not in run.text, run.text
    assert run.code in (0, 1, 2), run.text
    assert template_kwargs(deep) == {}
    with pytest.raises(ValueError, match="nested deeper than 64 levels"):
        CONVERT["json"]([deep])


def test_the_fetched_record_is_read_bounded_and_never_waited_on(tmp_path: Path) -> None:
    """`MODEL_DIR/.profilegen-fetched.json` is read as the verified-files record is: a deep
    document or a FIFO in its place is no record (it was a RecursionError, or a hang)."""
    (tmp_path / FETCHED_NAME).write_text("[" * 2000 + "]" * 2000)
    assert Fetched(tmp_path).artifacts == {}
    (tmp_path / FETCHED_NAME).unlink()
    os.mkfifo(tmp_path / FETCHED_NAME)
    assert Fetched(tmp_path).artifacts == {}
