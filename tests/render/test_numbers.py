"""The entrypoint compares numbers in bash itself: exactly as decimals, for every spelling a
tunable's type lets through (signs, leading zeros, fractions, exponents, long digit runs)."""

from __future__ import annotations

import random
import subprocess
from decimal import Decimal

from profilegen.render.context import environments
from profilegen.render.targets.compose import render_helpers
from profilegen.resources import template_dirs

# The helpers as every entrypoint sources them (rendered: their limits come from Python).
HELPERS = render_helpers(environments(tuple(template_dirs(None)))).decode()


def _spelling(rng: random.Random) -> str:
    """A number as the float type admits it: [-]digits[.digits] or .digits, then an exponent."""
    digits = "".join(rng.choice("0123456789") for _ in range(rng.choice([1, 2, 3, 12, 13, 20])))
    fraction = "".join(rng.choice("0123456789") for _ in range(rng.choice([0, 1, 4, 6, 7, 9])))
    body = rng.choice([digits, f"{digits}.{fraction}", f".{fraction or '5'}", f"{digits}."])
    if rng.random() < 0.3:
        body += rng.choice("eE") + rng.choice(["", "-", "+"]) + str(rng.randint(0, 30))
    return rng.choice(["", "-"]) + body


def _compare_in_bash(pairs: list[tuple[str, str]], helpers: str) -> list[int]:
    script = "set -euo pipefail\n" + helpers + "\n"
    script += "".join(f"pg_compare '{a}' '{b}'; echo $pg_cmp\n" for a, b in pairs)
    done = subprocess.run(["bash"], input=script, capture_output=True, text=True, check=True)
    return [int(word) for word in done.stdout.split()]


def test_numbers_compare_as_decimals() -> None:
    rng = random.Random(20261203)
    pairs = [(_spelling(rng), _spelling(rng)) for _ in range(1500)]
    # Equal values spelled apart, zero's signs, the edges of the integer path, huge exponents.
    pairs += [
        ("0", "-0"), ("0.85", "0.850"), (".5", "0.5"), ("5.", "5"), ("007", "7"),
        ("1E3", "999.999999"), ("999999999999", "1000000000000"), ("0.000001", "0.0000011"),
        ("1e500", "5"), ("-1e500", "5"), ("1e-500", "0"), ("-2", "-10"), ("1.5e-3", ".0015"),
    ]  # fmt: skip
    pairs += [(b, a) for a, b in pairs[-13:]]
    got = _compare_in_bash(pairs, HELPERS)
    want = [(Decimal(a) > Decimal(b)) - (Decimal(a) < Decimal(b)) for a, b in pairs]
    wrong = [(a, b, g, w) for (a, b), g, w in zip(pairs, got, want, strict=True) if g != w]
    assert (len(got), wrong) == (len(pairs), [])


def test_a_bound_is_named_when_a_changed_value_breaks_it() -> None:
    script = f"""set -euo pipefail
{HELPERS}
GPU_MEMORY_UTILIZATION=1.00000001 TP=0 MAX_MODEL_LEN=1e400
pg_tunable TP int 2
pg_range TP gt 0 - 0 '> 0'
pg_tunable GPU_MEMORY_UTILIZATION float 0.9
pg_range GPU_MEMORY_UTILIZATION gt 0 le 1 '> 0 and <= 1'
pg_ranges
"""
    done = subprocess.run(["bash"], input=script, capture_output=True, text=True, check=False)
    assert (done.returncode, done.stderr) == (1, "profilegen: TP must be > 0, got '0'\n")
    fixed = script.replace("TP=0 ", "TP=2 ")
    done = subprocess.run(["bash"], input=fixed, capture_output=True, text=True, check=False)
    assert (done.returncode, done.stderr) == (
        1,
        "profilegen: GPU_MEMORY_UTILIZATION must be > 0 and <= 1, got '1.00000001'\n",
    )


def test_a_default_value_is_not_bounded_again() -> None:
    # The registry's own values were checked against the same bounds when they were loaded.
    script = f"""set -euo pipefail
{HELPERS}
TP=2
pg_tunable TP int 2
pg_range TP gt 5 - 0 '> 5'
pg_ranges
echo "${{#pg_bounds[@]}}"
"""
    done = subprocess.run(["bash"], input=script, capture_output=True, text=True, check=True)
    assert done.stdout == "0\n"
