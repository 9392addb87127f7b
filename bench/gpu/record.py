"""The shapes runs' logs back as evidence: each boot on its profile, judged term by term.

The logs are kept in the repository (bench/gpu/logs/), each run's summary beside them; a
later run's boot of a profile replaces an earlier one's. Every boot fit can read becomes an
evidence record on its profile, with its provenance (the build, the card, the date, "random
weights, shape of <model>"); `fit calibration` then judges the fit on each term.
"""

from __future__ import annotations

import datetime
import json
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from plan import make_plan

from profilegen.authoring.evidence import record_evidence
from profilegen.errors import ProfilegenError
from profilegen.fit.calibrate import term_tolerance
from profilegen.fit.fromlog import LogFit, evidence_record, fit_log
from profilegen.fit.logs import parse_log
from profilegen.fit.options import FitOptions
from profilegen.fit.predict import read_lock_or_none
from profilegen.registry import open_registry

RIG = "1xh200"
ENGINE = "llama.cpp-b10236"
KEPT = Path("bench/gpu/logs")


def _unpack(path: Path) -> Path:
    if path.is_dir():
        return path if (path / "summary.json").is_file() else path / "logs"
    folder = Path(tempfile.mkdtemp(prefix="shapes-logs-"))
    with tarfile.open(path) as tar:
        tar.extractall(folder, filter="data")
    return folder / "logs"


def keep_logs(root: Path, sources: list[Path]) -> dict[str, Any]:
    """Copies every run's logs into the repository; the boots, later runs winning."""
    kept = root / KEPT
    kept.mkdir(parents=True, exist_ok=True)
    runs, boots = [], {}
    for source in sources:
        logs = _unpack(source)
        summary = json.loads((logs / "summary.json").read_text())
        run = {k: summary[k] for k in ("gpu", "build", "build_seconds", "total_seconds")}
        runs.append(run)
        for boot in summary["boots"]:
            if (logs / f"{boot['key']}.log").is_file():
                shutil.copy2(logs / f"{boot['key']}.log", kept / f"{boot['key']}.log")
            boots[boot["key"]] = {**boot, "run": len(runs) - 1}
    doc = {"runs": runs, "boots": sorted(boots.values(), key=lambda b: b["key"])}
    (kept / "runs.json").write_text(json.dumps(doc, indent=1) + "\n")
    return doc


def _row(fit: LogFit) -> tuple[list[str], int]:
    cells, off = [], 0
    for term in fit.terms:
        tol = term_tolerance(term.name)
        if tol is None:
            continue
        ok = abs(term.error) <= tol
        off += not ok
        cells.append(f"{term.name} {term.error:+.2%}{'' if ok else ' OFF'}")
    return cells, off


def _options(boot: dict[str, Any], plan: dict[str, Any]) -> FitOptions:
    dropped_mmproj = any(n.startswith("--mmproj dropped") for n in plan.get("notes", []))
    return FitOptions(
        profile=boot["key"],
        rig=RIG,
        engine=plan["engine"],
        mmproj=False if dropped_mmproj else None,
    )


def _record(
    fit: LogFit, boot: dict[str, Any], plan: dict[str, Any], run: dict[str, Any]
) -> dict[str, Any]:
    gpu = run["gpu"].split(",")[0]
    day = datetime.date.fromisoformat(run["build"]["built"][:10])
    record = evidence_record(fit, Path(f"{boot['key']}.log"), RIG, day)
    record["key"] = f"{boot['key'][:60]}-h200-shape"
    quant = plan["spec"]["quant"]
    record["source"] = (
        f"bench/gpu/logs/{boot['key']}.log: llama-server built from "
        f"{run['build']['source']} with CUDA (bench/gpu/llamacpp_shapes.py), {run['gpu']}"
    )
    record["synthetic"] = True
    record["summary"] = (
        f"random weights, shape of {plan['model']} ({quant}): llama.cpp "
        f"b{run['build']['source_build']} on one {gpu}"
    )
    return record


def record_all(root: Path, sources: list[Path], *, write: bool) -> int:
    """Keeps the logs, records each readable boot; 1 when a term is off its tolerance."""
    doc = keep_logs(root, sources)
    plan = make_plan(root, ENGINE, RIG)
    planned = {b["key"]: {**b, "engine": plan["engine"]} for b in plan["boots"]}
    off = 0
    for boot in doc["boots"]:
        key, run = boot["key"], doc["runs"][boot["run"]]
        if boot.get("outcome") != "listening":
            print(f"{key}: not measured ({boot.get('outcome')}){_why(root, key)}")
            continue
        registry = open_registry(root)
        text = (root / KEPT / f"{key}.log").read_text(errors="replace")
        try:
            fit = fit_log(
                registry, parse_log(text), _options(boot, planned[key]), read_lock_or_none(registry)
            )
        except ProfilegenError as exc:
            print(f"{key}: fit cannot predict it: {exc}")
            continue
        cells, bad = _row(fit)
        off += bad
        print(f"{key}: " + "; ".join(cells))
        if write:
            record_evidence(registry, key, _record(fit, boot, planned[key], run), replace=True)
    return 1 if off else 0


def _why(root: Path, key: str) -> str:
    log = root / KEPT / f"{key}.log"
    if not log.is_file():
        return ""
    lines = [ln for ln in log.read_text(errors="replace").splitlines() if "error" in ln.lower()]
    return f": {lines[0].strip()}" if lines else ""
