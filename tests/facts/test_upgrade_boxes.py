"""`upgrade` explains every scenario of every profile on the engine in one batch (a few
boxes, as `check` does, not a box of its own for each scenario), and renders each profile
once for its scenarios and its patch rehearsal."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from profilegen.explain import batch
from profilegen.explain.batch import MAX_BOXES
from profilegen.explain.sandbox import Job, StagedBox
from profilegen.facts.upgrade import compare
from profilegen.render.context import Context
from profilegen.render.targets import compose
from tests.support.repo import shared_registry

ENGINE = "vllm-v0.22.0"


def test_upgrade_runs_the_scenarios_of_all_profiles_in_a_few_boxes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = shared_registry()
    monkeypatch.setenv("PROFILEGEN_CACHE", str(tmp_path / "cache"))  # no run remembered
    monkeypatch.setenv("PROFILEGEN_OFFLINE", "1")
    staged: list[int] = []
    stage = batch.stage_box

    def counted(jobs: Sequence[Job]) -> StagedBox:
        staged.append(sum(len(job.launches) for job in jobs))
        return stage(jobs)

    monkeypatch.setattr(batch, "stage_box", counted)
    verdicts = compare(registry, registry.engines[ENGINE], registry.facts[ENGINE], offline=True)
    profiles = [p.id for p in registry.concrete_profiles() if p.engine == ENGINE]
    assert [v.profile for v in verdicts] == sorted(profiles)
    assert len(profiles) > 1
    assert sum(staged) > len(profiles)  # every profile has scenarios beyond its defaults
    assert len(staged) <= MAX_BOXES, staged


def test_upgrade_renders_each_profile_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = shared_registry()
    cache = tmp_path / "cache"
    monkeypatch.setenv("PROFILEGEN_CACHE", str(cache))  # no render remembered
    monkeypatch.setenv("PROFILEGEN_OFFLINE", "1")
    provenance = registry.facts[ENGINE].provenance
    assert provenance is not None
    source = cache / "sources" / provenance.sha256  # the release's source: rehearsals run
    (source / "vllm").mkdir(parents=True)
    (source / ".complete").write_text("vllm-0.22.0-py3-none-any.whl\n")
    rendered: list[str] = []
    script = compose.entrypoint_script

    def counted(ctx: Context, *args: Any) -> str:
        rendered.append(ctx.profile.id)
        return script(ctx, *args)

    monkeypatch.setattr(compose, "entrypoint_script", counted)
    verdicts = compare(registry, registry.engines[ENGINE], registry.facts[ENGINE], offline=True)
    patched = [v.profile for v in verdicts if v.not_rehearsed]
    assert patched == sorted(p.id for p in registry.concrete_profiles() if p.engine == ENGINE)
    assert all("cannot get its patch files" in v.not_rehearsed[0] for v in verdicts)
    assert sorted(rendered) == patched  # once each, not again for the rehearsal
