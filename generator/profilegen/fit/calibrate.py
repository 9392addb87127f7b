"""Calibration: every evidence record with a logged KV size against the prediction for it."""

from __future__ import annotations

from dataclasses import dataclass

from ..hub.lock import Lock
from ..registry import Registry
from .predict import FitOptions, fit_profile

TOLERANCE = 0.05  # calibration: predicted within ±5% of what the engine logged


@dataclass(frozen=True)
class CalibrationPoint:
    profile: str
    evidence: int  # index in the profile's evidence list
    date: str
    rig: str
    quantity: str  # kv_pool_tokens (vLLM log) or kv_buffer_bytes (llama.cpp log)
    measured: int
    predicted: int
    error: float  # predicted / measured - 1
    counted: bool  # False when the record is marked `calibration: false`

    @property
    def within(self) -> bool:
        return abs(self.error) <= TOLERANCE


def calibration_points(registry: Registry, lock: Lock | None = None) -> list[CalibrationPoint]:
    """Every evidence record with a logged KV size, against the prediction for its settings."""
    points = []
    for profile in registry.concrete_profiles():
        for i, ev in enumerate(profile.evidence):
            m, s = ev.measured, ev.settings
            if m.kv_pool_tokens is None and m.kv_buffer_bytes is None:
                continue
            opts = FitOptions(
                rig=ev.rig,
                tp=s.tp,
                gpu_util=s.gpu_memory_utilization,
                kv_dtype=s.kv_cache_dtype,
                max_model_len=s.max_model_len,
                max_num_seqs=s.max_num_seqs,
                spec_n=s.spec_n,
                kv_cache_memory=s.kv_cache_memory,
            )
            result = fit_profile(registry, profile, opts, lock=lock)
            if m.kv_pool_tokens is not None:
                quantity, measured = "kv_pool_tokens", m.kv_pool_tokens
                predicted = result.kv_pool_tokens
            else:
                quantity, measured = "kv_buffer_bytes", m.kv_buffer_bytes or 0
                predicted = result.kv_cache_bytes
            points.append(
                CalibrationPoint(
                    profile.id,
                    i,
                    ev.date,
                    ev.rig,
                    quantity,
                    measured,
                    predicted,
                    predicted / measured - 1,
                    ev.calibration,
                )
            )
    return points
