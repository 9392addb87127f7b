"""Offline `profilegen check` of the shipped registry, relative to importing our dependencies."""

from __future__ import annotations

import statistics
import sys

from _timing import median_seconds, python_command, run_command, table

TARGET_RATIO = 3.0
RUNS = 9
IMPORT_DEPS = "import jinja2, pydantic, ruamel.yaml, jsonschema, click, huggingface_hub"


def main() -> int:
    # Interleaved, so that a busy moment on the machine weighs on both the same way.
    import_times, check_times = [], []
    for _ in range(RUNS):
        import_times.append(median_seconds(lambda: run_command(python_command(IMPORT_DEPS)), 1))
        check_times.append(
            median_seconds(
                lambda: run_command(
                    python_command("from profilegen.cli import main; main()") + ["check"],
                    ok=(0, 1),
                ),
                1,
            )
        )
    imports, check = statistics.median(import_times), statistics.median(check_times)
    ratio = check / imports
    print(
        table(
            [
                ("import our dependencies (median)", f"{imports:.3f} s"),
                ("`profilegen check`, offline (median)", f"{check:.3f} s"),
                ("ratio", f"{ratio:.2f}x (target <= {TARGET_RATIO:.0f}x)"),
            ]
        )
    )
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
