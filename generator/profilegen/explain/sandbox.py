"""Runs containers' entrypoints in a box of their own, with stub engines, many at a time.

Each job is one container's view: the files its mounts put at container paths (the rendered
entrypoint and helpers, the bundle's patch files, empty stand-ins for the model folder and for
host paths) and the launches to run there, each with its own environment. All jobs of a batch
share one box (`profilegen.sandbox`: the host's root read-only underneath, no network, nothing
of the host's home or work folders); inside it every job gets a mount namespace of its own,
where its mounts are applied in order, as Compose applies them, so a later mount shadows an
earlier one exactly as it would in the container; the folders and files made to mount on are
removed after it, so that a job sees the same paths whichever jobs ran before it in its box.
The engine and `nvidia-smi` are stubs at their paths, and within a launch functions of the
job's bash (`boxscripts.py`): `exec` of an engine records the argv and the environment it
would hand over, without a process started for it, so that a launch costs one fork.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..sandbox import Bind, BindMount, Box, nul, plan_mounts, run, scratch_folder
from .boxscripts import COMMAND_DIR, DRIVER, ENGINE_STUB, IDLE_NAMES, JOB, JOBS, NVIDIA_SMI, RUN_DIR

TIMEOUT_S = 20
# Variables bash itself exports to what it starts; they say nothing about the engine's input.
SHELL_VARIABLES = frozenset({"PATH", "PWD", "OLDPWD", "SHLVL", "_"})


@dataclass(frozen=True)
class Mount:
    """A bind mount of the container: `source` is a path inside the job's own folder."""

    source: str
    target: str
    read_only: bool = True


@dataclass(frozen=True)
class Layout:
    """A container's files: the job folder's contents and the mounts that place them."""

    files: Mapping[str, bytes]  # job-folder path -> content
    dirs: tuple[str, ...]  # job-folder paths of empty folders
    mounts: tuple[Mount, ...]


@dataclass(frozen=True)
class Launch:
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    gpus: int
    nvlink: bool


@dataclass(frozen=True)
class Job:
    layout: Layout
    launches: tuple[Launch, ...]
    engines: tuple[str, ...]  # the binaries a launch may end in (stubs are put there)


@dataclass(frozen=True)
class Run:
    """What happened: the engine's argv and environment if it was started, else the refusal."""

    exit_code: int | None
    stderr: str
    exe: str | None = None
    argv: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    timed_out: bool = False
    # The patch steps the entrypoint took, in order (tab-separated words).
    log: tuple[str, ...] = ()

    @property
    def launched(self) -> bool:
        return self.exe is not None


def stub_path(binary: str) -> str:
    """Where a command lives in the box: its own path, or the image's command folder."""
    return binary if binary.startswith("/") else f"{COMMAND_DIR}/{binary}"


def run_jobs(jobs: Sequence[Job], workers: int | None = None) -> list[list[Run]]:
    """Runs every launch of every job; the jobs are shared out over a few boxes."""
    if not jobs:
        return []
    boxes = max(1, min(workers or os.cpu_count() or 1, 4, len(jobs)))
    shares = [list(range(i, len(jobs), boxes)) for i in range(boxes)]
    results: list[list[Run]] = [[] for _ in jobs]
    with ThreadPoolExecutor(max_workers=boxes) as pool:
        done = list(pool.map(lambda s: run_box([jobs[i] for i in s]), shares))
    for share, runs in zip(shares, done, strict=True):
        for index, job_runs in zip(share, runs, strict=True):
            results[index] = job_runs
    return results


def run_box(jobs: Sequence[Job]) -> list[list[Run]]:
    """Runs the jobs in one box, one after another; each job's runs in launch order."""
    staged = stage_box(jobs)
    try:
        staged.run()
        return staged.collect()
    finally:
        staged.discard()


@dataclass(frozen=True)
class StagedBox:
    """A box's jobs written out, ready to run. Writing them (`stage_box`) and reading what
    they left (`collect`) is Python's work, done by the thread that holds the interpreter
    anyway; only `run`, which waits on the box, is for a thread of its own."""

    folder: Path
    names: tuple[str, ...]
    jobs: tuple[Job, ...]
    box: Box

    def run(self) -> None:
        launches = sum(len(job.launches) for job in self.jobs)
        argv = ["/bin/bash", "-p", f"{RUN_DIR}-driver.sh", *(f"{JOBS}/{n}" for n in self.names)]
        run(self.box, argv, timeout=60 + TIMEOUT_S * launches)

    def collect(self) -> list[list[Run]]:
        pairs = zip(self.names, self.jobs, strict=True)
        return [_read_job(self.folder / name, job) for name, job in pairs]

    def discard(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def stage_box(jobs: Sequence[Job]) -> StagedBox:
    """The jobs' folders written, and the box that runs them."""
    batch = scratch_folder("profilegen-explain-")
    try:
        names = tuple(_write_job(batch / str(i), job) for i, job in enumerate(jobs))
    except BaseException:
        shutil.rmtree(batch, ignore_errors=True)
        raise
    files = {
        f"{RUN_DIR}-job.sh": JOB.encode(),
        f"{RUN_DIR}-driver.sh": DRIVER.encode(),
        f"{RUN_DIR}/launch": b"",  # the folder each launch names itself in
        "/usr/bin/nvidia-smi": NVIDIA_SMI.encode(),
        **{stub_path(n): b"#!/bin/sh\nexit 0\n" for n in IDLE_NAMES},
        **{stub_path(e): ENGINE_STUB.encode() for job in jobs for e in job.engines},
    }
    box = Box(
        binds=(Bind(batch, JOBS, read_only=False),),
        files=files,
        env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
    )
    return StagedBox(batch, names, tuple(jobs), box)


def _write_job(folder: Path, job: Job) -> str:
    for rel, data in job.layout.files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for rel in job.layout.dirs:
        (folder / rel).mkdir(parents=True, exist_ok=True)
    (folder / "engines").write_bytes(nul(list(job.engines)))
    _write_mounts(folder, job.layout)
    for i, launch in enumerate(job.launches):
        where = folder / "launch" / f"{i:04d}"
        where.mkdir(parents=True)
        (where / "env").write_bytes(nul([f"{k}={v}" for k, v in launch.env]))
        (where / "argv").write_bytes(nul(list(launch.argv)))
        link = "NV4" if launch.nvlink else "PHB"
        (where / "gpus").write_text(f"{max(launch.gpus, 1)} {link}\n")
    return folder.name


def _write_mounts(folder: Path, layout: Layout) -> None:
    """The job's mounts as the job applies them (`profilegen.sandbox.mounts`)."""
    at = f"{JOBS}/{folder.name}"
    plan = plan_mounts(
        [
            BindMount(f"{at}/{m.source}", m.target, m.read_only, (folder / m.source).is_dir())
            for m in layout.mounts
        ]
    )
    if plan.ordered:
        (folder / "mounts").write_bytes(nul(plan.ordered))
        return
    (folder / "dirs").write_bytes(nul(plan.dirs))
    (folder / "files").write_bytes(nul(plan.files))
    (folder / "fstab").write_text(plan.fstab)


def _readnul(path: Path) -> list[str]:
    if not path.is_file():
        return []
    data = path.read_bytes().decode("utf-8", errors="replace")
    return data.split("\0")[:-1] if data else []


def _read_job(folder: Path, job: Job) -> list[Run]:
    error = folder / "error"
    if error.is_file():
        message = error.read_text(errors="replace").strip()
        return [Run(1, f"profilegen: {message}; refusing to boot\n") for _ in job.launches]
    return [_read_launch(folder / "launch" / f"{i:04d}") for i in range(len(job.launches))]


def _read_launch(where: Path) -> Run:
    stderr = (where / "stderr").read_text(errors="replace") if (where / "stderr").is_file() else ""
    code_text = (where / "code").read_text().strip() if (where / "code").is_file() else ""
    code = int(code_text) if code_text.lstrip("-").isdigit() else None
    timed_out = code in (None, 137)
    steps = (
        tuple((where / "steps.log").read_text(errors="replace").splitlines())
        if (where / "steps.log").is_file()
        else ()
    )
    words = _readnul(where / "engine.argv")
    if not words:
        return Run(None if timed_out else code, stderr, timed_out=timed_out, log=steps)
    pairs = [item.partition("=") for item in _readnul(where / "engine.env")]
    env = tuple(sorted((k, v) for k, _, v in pairs if k not in SHELL_VARIABLES))
    exe = words[0].rsplit("/", 1)[-1]
    return Run(code, stderr, exe, tuple(words[1:]), env, log=steps)
