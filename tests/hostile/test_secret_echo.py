"""A registry value an error quotes never shows a URL's credentials: a pull request's patch
source with user:password@ or ?token= is refused, and the CI log that says so keeps the secret
out (the schema error quotes the value it refuses)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.base import build_base
from tests.support.cli import invoke_in
from tests.support.copies import copy_tree
from tests.support.repo import fast_schemas  # noqa: F401 (fixture)

pytestmark = pytest.mark.usefixtures("fast_schemas")

PATCH = "registry/patches/tiny-fix.yaml"
PATTERN = "'^https://[A-Za-z0-9.-]+(:[0-9]+)?/[A-Za-z0-9._~%/+-]*$'"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_base(tmp_path_factory.mktemp("secret-echo") / "base")


def _remote(root: Path, url: str) -> None:
    path = root / PATCH
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("  kind: vendored\n", f'  kind: remote\n  base_url: "{url}"\n'),
        encoding="utf-8",
    )


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://bob:hunter2pw@example.org/p/", "'https://***@example.org/p/'"),
        ("https://example.org/p/?token=hunter2pw&x=1", "'https://example.org/p/?token=***&x=1'"),
    ],
)
def test_a_patch_url_with_credentials_is_refused_without_showing_them(
    base: Path, tmp_path: Path, url: str, shown: str
) -> None:
    root = copy_tree(base, tmp_path / "root", symlinks=True)
    _remote(root, url)
    for args in (("check",), ("check", "--format", "json"), ("render", "tiny-chat")):
        run = invoke_in(root, *args)
        assert run.code == 1, run.text
        assert "hunter2pw" not in run.text
    run = invoke_in(root, "check")
    assert (
        f"{PATCH}:7: error: [schema] source.base_url: String should match pattern {PATTERN} "
        f"(got {shown})"
    ) in run.out
