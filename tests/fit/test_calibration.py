"""Every measured KV size recorded in the registry stays within ±5% of the prediction."""

from __future__ import annotations

import pytest

from profilegen.fit.calibrate import TOLERANCE, CalibrationPoint, calibration_points
from profilegen.registry import open_registry

from .conftest import ROOT

POINTS = [p for p in calibration_points(open_registry(ROOT)) if p.counted]


def _id(p: CalibrationPoint) -> str:
    return f"{p.profile}#{p.evidence}"


def test_the_registry_holds_calibration_points() -> None:
    # MEASUREMENTS.md points 1 (MTP on and off), 2 and 4 at least, on both engines.
    assert len(POINTS) >= 4
    assert {p.quantity for p in POINTS} == {"kv_pool_tokens", "kv_buffer_bytes"}


@pytest.mark.parametrize("point", POINTS, ids=_id)
def test_prediction_within_tolerance(point: CalibrationPoint) -> None:
    assert abs(point.error) <= TOLERANCE, (
        f"{point.profile} evidence #{point.evidence} ({point.date}, {point.rig}): "
        f"predicted {point.predicted:,} {point.quantity}, measured {point.measured:,} "
        f"({point.error:+.1%})"
    )
