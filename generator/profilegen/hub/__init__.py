"""Verify and fetch model artifacts on the Hugging Face Hub (the only module on the network)."""

from __future__ import annotations

from .client import offline, verify_artifacts
from .download import fetch_artifact
from .types import (
    ADVISORY_CODES,
    ArtifactRequest,
    ArtifactResult,
    FetchPlan,
    FetchResult,
    HubError,
    HubProblem,
    HubSettings,
    PlannedFile,
    RemoteFile,
)

__all__ = [
    "ADVISORY_CODES",
    "ArtifactRequest",
    "ArtifactResult",
    "FetchPlan",
    "FetchResult",
    "HubError",
    "HubProblem",
    "HubSettings",
    "PlannedFile",
    "RemoteFile",
    "fetch_artifact",
    "offline",
    "verify_artifacts",
]
