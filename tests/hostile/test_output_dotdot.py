"""`render -o` and `gateway -o` refuse a folder named through a committed symlink even when a
`..` after the link seems to step back into the repository: `compose/link/../x` is, to the
system, the parent of the link's target (outside the tree), not compose/x."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.base import build_base
from tests.support.cli import invoke_in
from tests.support.copies import copy_tree
from tests.support.repo import fast_schemas  # noqa: F401 (fixture)

pytestmark = pytest.mark.usefixtures("fast_schemas")


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_base(tmp_path_factory.mktemp("dotdot") / "base")


def test_a_dotdot_after_a_link_does_not_lead_the_bundle_out(base: Path, tmp_path: Path) -> None:
    root = copy_tree(base, tmp_path / "root", symlinks=True)
    victim = tmp_path / "home" / "srv"
    victim.mkdir(parents=True)
    (root / "compose" / "evil").symlink_to(victim)
    out = root / "compose" / "evil" / ".." / "bundle"
    run = invoke_in(root, "render", "tiny-chat", "-o", str(out))
    assert run.code == 2, run.text
    assert run.err == (
        f"error: {out}: compose/evil is a symlink to {victim}, outside the repository: "
        "profilegen writes and removes nothing through a symlink (choose another -o)\n"
    )
    assert sorted(p.name for p in victim.parent.iterdir()) == ["srv"]  # nothing written there
    assert not (root / "compose" / "bundle").exists()


def test_a_dotdot_without_a_link_still_names_its_folder(base: Path, tmp_path: Path) -> None:
    root = copy_tree(base, tmp_path / "root", symlinks=True)
    out = root / "compose" / ".." / "bundle"
    run = invoke_in(root, "render", "tiny-chat", "-o", str(out))
    assert run.code == 0, run.text
    assert (root / "bundle" / "compose.yaml").is_file()
