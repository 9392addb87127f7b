"""Generated docs/: the catalogue and benchmark pages, their freshness check, `changelog`."""

from __future__ import annotations

from pathlib import Path

from profilegen.docs.catalog import docs_plan, md_cell
from profilegen.registry import open_registry
from tests.support.cli import Invoke

SEED = "qwen38-27b-dual-dflash15-fast"


def test_catalog_lists_every_profile_with_its_newest_measurements(repo: Path) -> None:
    registry = open_registry(repo)
    plan = docs_plan(registry)
    assert plan == docs_plan(registry)  # deterministic bytes
    catalog = plan["docs/CATALOG.md"].decode()
    for ident in registry.profiles:
        assert f"[`{ident}`](../compose/{ident}/compose.yaml)" in catalog
    row = next(line for line in catalog.splitlines() if f"[`{SEED}`]" in line)
    for fact in (
        "2x3090-pcie-x16x4-wsl2",
        "TP2, bfloat16 KV, 244,320 x 1, util 0.85",
        "incubating",
        "93.69 / 163.82",
        "1,286.33 @10k",
        "qwen38-27b-dual-ultrafast",
    ):
        assert fact in row
    page = plan["docs/benchmarks/qwen3.8-27b.md"].decode()
    assert "131/150" in page and "224,840" in page and "spec_n=0" in page


def test_markdown_cells_cannot_break_a_table() -> None:
    assert md_cell("a | b\nc <script>") == r"a \| b c \<script\>"
    assert md_cell(None) == "-"


def test_stale_catalog_fails_check(repo: Path, pristine: Path, invoke: Invoke) -> None:
    catalog = repo / "docs" / "CATALOG.md"
    lines = catalog.read_text().splitlines(keepends=True)
    lines[4] = "hand edit\n"
    catalog.write_text("".join(lines))
    run = invoke("check")
    assert run.code == 1
    assert "docs/CATALOG.md:5: error: [docs-stale]" in run.out
    assert "profilegen render --all" in run.out
    assert "[disk-stale]" not in run.out and "[disk-missing]" not in run.out

    assert invoke("render", "--all").code == 0
    assert catalog.read_bytes() == (pristine / "docs" / "CATALOG.md").read_bytes()


def test_missing_and_orphan_pages_fail_check(repo: Path, pristine: Path, invoke: Invoke) -> None:
    (repo / "docs" / "benchmarks" / "qwen3.8-27b.md").unlink()
    orphan = repo / "docs" / "benchmarks" / "gone-model.md"
    orphan.write_text("# old\n")
    run = invoke("check")
    assert run.code == 1
    assert "generated page docs/benchmarks/qwen3.8-27b.md is missing" in run.out
    assert "docs/benchmarks/gone-model.md belongs to no model" in run.out
    rendered = invoke("render", "--all")
    assert "removed docs/benchmarks/gone-model.md" in rendered.out
    assert not orphan.exists()
    page = "docs/benchmarks/qwen3.8-27b.md"
    assert (repo / page).read_bytes() == (pristine / page).read_bytes()


def test_changelog_entry_carries_the_measured_figures(invoke: Invoke) -> None:
    run = invoke("changelog", SEED)
    assert run.code == 0, run.text
    out = run.out
    assert out.startswith("### Added\n")
    for fact in (
        "vllm/qwen38-27b-dual-dflash15-fast",
        "incubating",
        "vllm/vllm-openai:v0.27.1",
        "born2bewild/Qwen3.8-27B-W4A16-AutoRound-fast",
        "syvai/Qwen3.8-27B-DFlash2-W4A16",
        "SPEC_N=15",
        "244,320",
        "util 0.85",
        "93.69 / 163.82",
        "1,286.33 @10k",
        "1,097.53 @90k",
        "41,979 MiB",
        "verify-full 9/9",
        "131/150 pass@1",
        "`vllm-dflash15`",
    ):
        assert fact in out, fact


def test_changelog_of_an_unknown_profile_is_a_usage_error(invoke: Invoke) -> None:
    run = invoke("changelog", "nope")
    assert run.code == 2
