"""The import reads a drafters file as it reads a models file (one it cannot read is refused
at its line, never replaced by a guessed drafter), and whatever catalogue text an error or a
note names is shown on one line (a line break in a compose path, an entry key, a model name or
a kept argument could forge a line of a CI log)."""

from __future__ import annotations

from pathlib import Path

from .fixtures import DRAFTER, REGISTRY, VLLM_COMPOSE, base_files
from .test_club3090 import run, snapshot
from .test_refusals import _catalogue, _line, _refused

DRAFTERS = "scripts/lib/profiles/drafters/tiny-mtp.yml"
REG = "scripts/lib/profiles/registry.yaml"
COMPOSE = "models/tiny-9b/vllm/compose/dual/int4/mtp.yml"


def test_a_drafters_file_with_a_forbidden_tag_is_refused_at_its_line(
    tmp_path: Path, target: Path
) -> None:
    drafter = DRAFTER.replace(
        "spec_method: mtp", 'spec_method: !!python/object/apply:os.system ["id"]'
    )
    rev = _catalogue(tmp_path / "club-3090", {**base_files(), DRAFTERS: drafter})
    assert _refused(target, tmp_path / "club-3090", "--rev", rev) == (
        f"error: {DRAFTERS}:{_line(drafter, 'spec_method:')}: not valid YAML (could not "
        "determine a constructor for the tag 'tag:yaml.org,2002:python/object/apply:os.system')"
    )


def test_a_drafters_file_with_a_bad_id_is_refused_at_its_line(tmp_path: Path, target: Path) -> None:
    drafter = DRAFTER.replace("id: tiny-mtp", "id: Tiny MTP/..")
    rev = _catalogue(tmp_path / "club-3090", {**base_files(), DRAFTERS: drafter})
    assert _refused(target, tmp_path / "club-3090", "--rev", rev) == (
        f"error: {DRAFTERS}:{_line(drafter, 'id:')}: id 'Tiny MTP/..' is not a valid id "
        "(^[a-z0-9][a-z0-9._-]{0,79}$)"
    )


def test_catalogue_text_in_a_refusal_is_one_line(tmp_path: Path, target: Path) -> None:
    forged = REGISTRY.replace(
        f"compose_path: {COMPOSE}", 'compose_path: "models/x\\n::error::y.yml"'
    )
    rev = _catalogue(tmp_path / "a", {**base_files(), REG: forged})
    assert _refused(target, tmp_path / "a", "--rev", rev) == (
        f"error: vllm/tiny-dual-fast: compose file models/x\\x0a::error::y.yml is missing at {rev[:8]}"
    )
    forged = REGISTRY.replace(
        "    model: tiny-9b\n    weights_variant: gguf-q4",
        '    model: "tiny-9b\\n::error::y"\n    weights_variant: gguf-q4',
    )
    rev = _catalogue(tmp_path / "b", {**base_files(), REG: forged})
    assert _refused(target, tmp_path / "b", "--rev", rev) == (
        "error: model tiny-9b\\x0a::error::y has no scripts/lib/profiles/models file upstream"
    )


def test_a_kept_argument_in_a_note_is_one_line(tmp_path: Path, target: Path) -> None:
    compose = VLLM_COMPOSE.replace(
        "      - --disable-log-stats\n",
        '      - --disable-log-stats\n      - --foo-bar\n      - "v\\n::error::y"\n',
    )
    rev = _catalogue(tmp_path / "club-3090", {**base_files(), COMPOSE: compose})
    before = snapshot(target)
    result = run(target, "import", "club3090", str(tmp_path / "club-3090"), "--rev", rev,
                 "--dry-run")  # fmt: skip
    assert result.code == 0, result.text
    assert snapshot(target) == before
    assert (
        "escape: vllm/tiny-dual-fast: not modelled, kept as extra arguments: --foo-bar "
        "v\\x0a::error::y\n" in result.err
    ), result.err
    assert not any(line.startswith("::error::") for line in result.err.splitlines())


def test_an_installer_the_mounted_folder_lacks_is_refused_at_the_boot_line(
    tmp_path: Path, target: Path
) -> None:
    files = {k: v for k, v in base_files().items() if not k.endswith("tiny-fix/install.sh")}
    rev = _catalogue(tmp_path / "club-3090", files)
    line = _line(VLLM_COMPOSE, "tiny-fix/install.sh")
    assert _refused(target, tmp_path / "club-3090", "--rev", rev) == (
        f"error: {COMPOSE}:{line}: the boot runs /etc/club3090/tiny-fix/install.sh, but the patch "
        f"folder models/tiny-9b/vllm/patches/tiny-fix it mounts holds no install.sh file at "
        f"{rev[:8]}"
    )
