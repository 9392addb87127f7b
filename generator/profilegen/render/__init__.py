"""Rendering: one resolved profile in, the bytes of a deployable target out (pure).

Owns: the shared pipeline (context, quoting, Jinja environments, tunables, patch manifest,
verification of what was rendered), the targets (`targets/compose`; `targets/gateway` with a
gateway's routes in `estate`; `targets/k8s*`: a Deployment or a LeaderWorkerSet, validated
against pinned API schemas), and relocatable bundles.
May import: `errors`, `lockfile`, `units`, `families`, `resources`, `write`, `cache`, `model`, `registry`, `hub` (patch files
for bundles; the lock, for the weights a Kubernetes pod loads).
"""

from __future__ import annotations

from .context import RenderError, container_name, served_names
from .memo import render_profile_cached
from .targets.compose import Rendered, render_profile
from .verify import parsed_compose

__all__ = [
    "RenderError",
    "Rendered",
    "container_name",
    "parsed_compose",
    "render_profile",
    "render_profile_cached",
    "served_names",
]
