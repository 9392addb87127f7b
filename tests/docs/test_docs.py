"""Generated docs/: the catalogue and benchmark pages, their freshness check, `changelog`."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from profilegen.docs.catalog import docs_plan, md_cell
from profilegen.docs.diff import setting_changes
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


def test_markdown_cells_hold_no_live_link_or_image() -> None:
    """A title arrives by pull request: `[x](url)` or `![x](url)` is shown as written."""
    assert md_cell("Fast [click](https://evil.example) ![i](https://t.example/p.png)") == (
        r"Fast \[click\](https://evil.example) !\[i\](https://t.example/p.png)"
    )


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


def test_every_imported_row_is_on_its_page_and_every_chart_bar_is_a_record() -> None:
    registry = open_registry(Path(__file__).resolve().parents[2])  # the whole catalogue
    plan = docs_plan(registry)
    landed = 0
    for p in registry.concrete_profiles():
        page = plan[f"docs/benchmarks/{p.model}.md"].decode()
        for ev in p.evidence:
            if ev.origin is not None and ev.origin.file == "BENCHMARKS.md":
                landed += 1
                assert f"| `{p.id}` | {ev.date} | {ev.contributor or '-'} |" in page
    assert landed >= 80  # club-3090's BENCHMARKS.md at 4a29ab57: 86 of its 172 rows
    for path, data in plan.items():
        if not path.endswith(".svg"):
            continue
        for rect in ET.fromstring(data).iter("{http://www.w3.org/2000/svg}rect"):
            if rect.get("data-profile") is None:
                continue
            p = registry.profiles[rect.get("data-profile", "")]
            kind = f"decode_tps_{rect.get('data-kind')}"
            figures = {
                getattr(ev.measured, kind) for ev in p.evidence if ev.rig == rect.get("data-rig")
            }
            assert float(rect.get("data-value", "nan")) in figures, (path, rect.attrib)


def test_the_catalog_names_the_engine_bugs_a_profile_runs_into() -> None:
    registry = open_registry(Path(__file__).resolve().parents[2])  # the whole catalogue
    catalog = docs_plan(registry)["docs/CATALOG.md"].decode()
    row = next(line for line in catalog.splitlines() if f"[`{SEED}`]" in line)
    assert "| incubating<br>exposed to vllm#50021 |" in row
    quiet = next(line for line in catalog.splitlines() if "[`deckard40b-dual-mtp`]" in line)
    assert "exposed to" not in quiet  # exposures: [] (its compose names none)


def test_diff_leaves_out_where_advice_was_read() -> None:
    """Sources and upstream's picks are prose, not settings; the exposures themselves differ."""
    registry = open_registry(Path(__file__).resolve().parents[2])
    fast, pick = registry.profiles["qwen38-27b-dual-fast"], registry.profiles["qwen38-27b-dual-max"]
    changed = {c.what.split(".")[0] for c in setting_changes(fast, pick)}
    assert not changed & {"best_for_source", "exposures_source", "recommendations"}
    quiet = registry.profiles["deckard40b-dual-mtp"]
    assert "exposures" in {c.what.split(".")[0] for c in setting_changes(fast, quiet)}
