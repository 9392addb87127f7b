"""The cells of a BENCHMARKS.md row, read as figures and rig facts (written as rows write them)."""

from __future__ import annotations

import pytest

from profilegen.importers.club3090 import benchrows as br
from profilegen.importers.club3090.benchrig import read_rig
from profilegen.importers.club3090.benchtable import read_tables


@pytest.mark.parametrize(
    ("cell", "pair"),
    [
        ("**69.7 / 85.5** (decode, n=3, CV <2%)", (69.7, 85.5)),
        ("~32 / ~33", (32, 33)),
        ("**72** / **80**", (72, 80)),
        ("wall 403.8 / 495.2 (n=5)", (403.8, 495.2)),
        ("52.39 code / 40.02 narr decode", (40.02, 52.39)),
        ("— (decode ≈ 56 / 66, carried from the 49K row)", None),
        ("TBD", None),
        ("62.4 decode (spec-off)", None),
    ],
)
def test_decode_pairs(cell: str, pair: tuple[float, float] | None) -> None:
    assert br.decode(cell) == pair


@pytest.mark.parametrize(
    ("cell", "points"),
    [
        ("1446 @10K / 1118 @90K (CV ≤0.6%)", [(10000, 1446), (90000, 1118)]),
        ("**1288 → 1175** (prefill t/s @10K→90K)", [(10000, 1288), (90000, 1175)]),
        ("4,545 → 3,919 (10K→90K)", [(10000, 4545), (90000, 3919)]),
        ("~10.8K @90K (TTFT 6.3 s)", [(90000, 10800)]),
        ("**1025**", []),
        ("int8-PTH fresh-prefill −3.7% @10K", []),
    ],
)
def test_prefill_points(cell: str, points: list[tuple[int, float]]) -> None:
    assert [(p["context_tokens"], p["tokens_per_s"]) for p in br.prefill(cell)] == points


@pytest.mark.parametrize(
    ("cell", "cards", "mib"),
    [
        ("22.5 GB/card", 2, 46080),
        ("21.8 / 21.2 GB/card", 2, 44032),
        ("12.6+17.2 GB", 2, 30515),
        ("45,816 MiB total (~22.4 GiB/card)", 2, 45816),
        ("30,576 / 32,607 MiB per card (93.8%)", 2, 63183),
        ("~23.6 GB", 2, 48333),  # one card's worth: per card
        ("31.5 GB", 1, 32256),
        ("439 MB free @ 262K", 2, None),
        ("int8-PTH saves ~798 MiB/card", 4, None),
        ("TBD", 1, None),
    ],
)
def test_peak_vram_is_summed_over_the_cards(cell: str, cards: int, mib: int | None) -> None:
    assert br.peak_vram_mib(cell, cards, 24.0) == mib


def test_a_rig_cell_names_cards_link_power_and_host() -> None:
    rig = read_rig(
        "@OVDEN13 (2× 3090 + Ryzen 7 5700X, **PCIe Gen 4 x4 + x8 asymmetric**, 300 W cap, "
        "no NVLink, Ubuntu 26.04 / driver 595.58.03)"
    )
    assert rig.contributor == "@OVDEN13"
    assert rig.gpus == ["rtx-3090", "rtx-3090"]
    assert rig.hardware() == {
        "cards": 2,
        "gpu": "RTX 3090",
        "link": "PCIe Gen 4 x4 + x8 asymmetric",
        "nvlink": False,
        "power_cap_w": [300],
        "host": "Ryzen 7 5700X, Ubuntu 26.04 / driver 595.58.03",
        "driver": "595.58.03",
    }
    mixed = read_rig("@p (RTX 5090 32 GB @400 W (default 600) + RTX 3090 Ti 24 GB @290 W)")
    assert (mixed.gpus, mixed.power_cap_w) == (["rtx-5090", "rtx-3090-ti"], [400, 290])
    assert read_rig("@w (6× 3090 VFIO-passthrough, all cards 250W cap)").cards == 6
    assert read_rig("@n", "Dual-card (2× RTX 3090, TP=2)").gpus == ["rtx-3090", "rtx-3090"]


def test_a_table_broken_by_a_note_continues_and_other_tables_are_set_apart() -> None:
    text = (
        "## M\n\n| Compose | Rig | Date |\n| --- | --- | --- |\n| `a.yml` | @x | 2026-01-01 |\n"
        "\n> note\n\n| `b.yml` | @y | 2026-01-02 |\n\n| Pack | Score |\n|---|---|\n| a | 1 |\n"
    )
    rows, others = read_tables(text)
    assert [(r.line, r.cells["compose"], r.heading) for r in rows] == [
        (5, "`a.yml`", "M"),
        (9, "`b.yml`", "M"),
    ]
    assert [(o.first, o.last, o.rows) for o in others] == [(11, 13, 1)]
