"""`profilegen init`: a new registry that check passes at once, and the folders it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from profilegen.cli import cli
from profilegen.model import Gpu
from profilegen.scaffold.packaged import packaged
from profilegen.scaffold.shapes import GPUS
from tests.scaffold.conftest import init
from tests.support.cli import invoke_in

REPO = Path(__file__).resolve().parents[2]
WRITTEN = [
    ".github/workflows/profilegen.yml",
    ".pre-commit-config.yaml",
    "docs/CATALOG.md",
    "profilegen.lock.json",
    "registry/engines/.gitkeep",
    "registry/gpus/rtx-3090.yaml",
    "registry/models/.gitkeep",
    "registry/profiles/.gitkeep",
    "registry/rigs/1x3090.yaml",
    "registry/settings.yaml",
    *(
        f"schema/{kind}.schema.json"
        for kind in (
            "drafter",
            "engine",
            "gateway",
            "gpu",
            "manifest",
            "model",
            "patch",
            "profile",
            "rig",
            "settings",
        )  # fmt: skip
    ),
]


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_init_writes_a_registry_that_check_passes_and_render_keeps(tmp_path: Path) -> None:
    folder = tmp_path / "catalogue"
    run = init(folder)
    assert run.code == 0, run.text
    assert run.out == "".join(f"wrote {rel}\n" for rel in WRITTEN)
    assert list(_tree(folder)) == sorted(WRITTEN)
    assert run.err.startswith(f"a new registry in {folder}. Next:\n")

    check = invoke_in(folder, "check")
    assert (check.code, check.out) == (0, "check passed: 0 errors, 0 warnings\n"), check.text
    render = invoke_in(folder, "render", "--all")
    assert (render.code, render.out) == (0, "docs/ is up to date (1 files)\n"), render.text
    assert list(_tree(folder)) == sorted(WRITTEN)


def test_the_rig_is_the_shape_asked_for(tmp_path: Path) -> None:
    folder = tmp_path / "catalogue"
    assert init(folder, "--rig", "2x5090").code == 0
    listed = invoke_in(folder, "rigs", "--format", "json")
    assert listed.code == 0, listed.text
    assert '"id": "2x5090"' in listed.out
    assert (folder / "registry/rigs/2x5090.yaml").read_text().splitlines()[4:] == [
        "id: 2x5090",
        "name: Two RTX 5090 over PCIe, Linux",
        "gpu: rtx-5090",
        "count: 2",
        "interconnect:",
        "  kind: pcie",
        "host_os: linux",
    ]
    assert sorted(p.name for p in (folder / "registry/gpus").iterdir()) == ["rtx-5090.yaml"]
    assert invoke_in(folder, "check").code == 0


@pytest.mark.parametrize("short", sorted(GPUS))
def test_each_packaged_gpu_is_the_catalogues_own(short: str) -> None:
    """The GPUs init offers are the catalogue's entries (all but a note about the catalogue)."""
    gpu_id = GPUS[short][0]
    yaml = YAML(typ="safe")
    shipped = yaml.load(packaged("gpus", f"{gpu_id}.yaml"))
    ours = yaml.load((REPO / "registry/gpus" / f"{gpu_id}.yaml").read_bytes())
    ours.pop("notes", None)
    assert Gpu.model_validate(shipped) == Gpu.model_validate(ours)


def test_a_folder_with_a_registry_is_refused_and_left_as_it_was(catalogue: Path) -> None:
    before = _tree(catalogue)
    run = init(catalogue, "--rig", "2x3090")
    assert run.code == 2
    assert run.err == (
        f"error: {catalogue} already holds a registry (registry/): `profilegen init` starts a "
        "new one and changes nothing there (run `profilegen check` in it instead)\n"
    )
    assert run.out == ""
    assert _tree(catalogue) == before


def test_files_it_would_overwrite_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    (tmp_path / ".pre-commit-config.yaml").write_text("repos: []\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/CATALOG.md").write_text("# ours\n")
    (tmp_path / ".github").write_text("not a folder\n")
    before = _tree(tmp_path)
    run = init(tmp_path)
    assert run.code == 2
    assert run.err == (
        f"error: `profilegen init` would overwrite what is in {tmp_path}: .github, "
        ".pre-commit-config.yaml, docs/CATALOG.md (move it aside, or init another folder); "
        "nothing was written\n"
    )
    assert _tree(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".github",
        ".pre-commit-config.yaml",
        "docs",
    ]


def test_what_else_the_folder_holds_stays(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# our models\n")
    (tmp_path / ".github/workflows").mkdir(parents=True)
    (tmp_path / ".github/workflows/tests.yml").write_text("name: tests\n")
    assert init(tmp_path).code == 0
    assert (tmp_path / "README.md").read_text() == "# our models\n"
    assert (tmp_path / ".github/workflows/tests.yml").read_text() == "name: tests\n"
    assert (tmp_path / ".github/workflows/profilegen.yml").is_file()
    assert invoke_in(tmp_path, "check").code == 0


@pytest.mark.parametrize(
    ("rig", "message"),
    [
        ("3x3080", "error: --rig '3x3080': no GPU '3080' (GPUs: 3090, 3090ti, 4090, 5090, a6000, h200)\n"),
        ("rtx3090", "error: --rig 'rtx3090': expected COUNTxGPU, such as 1x3090 or 2x5090 (GPUs: 3090, 3090ti, 4090, 5090, a6000, h200)\n"),
        ("0x3090", "error: --rig '0x3090': a rig has 1 to 16 cards\n"),
        ("17x4090", "error: --rig '17x4090': a rig has 1 to 16 cards\n"),
    ],
)  # fmt: skip
def test_a_rig_it_does_not_know_is_a_usage_error(tmp_path: Path, rig: str, message: str) -> None:
    run = init(tmp_path / "catalogue", "--rig", rig)
    assert (run.code, run.err, run.out) == (2, message, "")
    assert not (tmp_path / "catalogue").exists()


def test_a_file_for_a_folder_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    run = init(tmp_path / "file")
    assert run.code == 2
    assert f"Directory '{tmp_path / 'file'}' is a file." in run.err


def test_the_default_folder_is_the_current_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = CliRunner().invoke(cli, ["init"], catch_exceptions=False)
    assert run.exit_code == 0, run.output
    assert run.stderr.startswith(
        "a new registry in the current folder. Next:\n"
        "  git init && pre-commit install   # the hooks, before every commit\n"
    )
    assert invoke_in(tmp_path, "check").code == 0
    again = CliRunner().invoke(cli, ["init"], catch_exceptions=False)
    assert again.exit_code == 2
    assert again.stderr.startswith("error: the current folder already holds a registry")
