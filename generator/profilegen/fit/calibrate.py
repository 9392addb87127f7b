"""Calibration: every measured boot in the registry against the prediction for its settings.

A record that a constant was fitted to (`fitted:`) is reported as `fitted`, never as a
prediction; `refit.py` fits the constants again from these records.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ProfilegenError
from ..lockfile.lock import Lock
from ..model import Profile
from ..model.evidence import Evidence
from ..registry import Registry
from ..units import MIB
from . import formulas as fm
from .options import FitOptions, FitResult
from .predict import fit_profile

TOLERANCE = 0.05  # predicted within ±5% of what the engine logged
TOLERANCE_ROUNDED = 0.07  # ... or ±7% where the source rounds its figure
# Quantities a record can be judged on, in order of preference.
QUANTITIES = ("kv_pool_tokens", "kv_buffer_bytes", "peak_vram_mib")
# A boot that logged no figure fit predicts, only whether the engine started (1) or refused
# (0): judged on fit's own verdict, which must say the same.
BOOTS = "boots"
# llama.cpp's logged buffers, each judged on its own: the weights and caches are sized by
# arithmetic the engine does exactly (±2%); the compute buffer by its graph allocator (±10%).
BUFFER_TERMS = {
    "model_buffer_bytes": ("model", 0.02),
    "kv_buffer_bytes": ("kv", 0.02),
    "rs_buffer_bytes": ("rs", 0.02),
    "compute_buffer_bytes": ("compute", 0.10),
}
BUFFERS_TOTAL = "buffers_total_bytes"
# `fit log` term names -> tolerance (the same terms, as a log fit names them).
_TERM_NAMES = {
    "model buffers (GPU)": 0.02,
    "model buffers (host)": 0.02,
    "KV buffers": 0.02,
    "RS buffers": 0.02,
    "compute buffers": 0.10,
    "buffers in all": TOLERANCE,
}


def term_tolerance(name: str) -> float | None:
    """The tolerance a log fit's term is judged at (None: a term calibration does not judge)."""
    return _TERM_NAMES.get(name)


@dataclass(frozen=True)
class Record:
    """One measured boot and what it is judged on."""

    profile: str
    index: int  # in the profile's evidence list
    evidence: Evidence
    quantity: str
    measured: int

    @property
    def name(self) -> str:
        base = self.evidence.key or f"{self.profile}#{self.index}"
        if _buffer_terms(self.evidence):
            suffix = BUFFER_TERMS[self.quantity][0] if self.quantity in BUFFER_TERMS else "total"
            return f"{base}:{suffix}"
        return base

    @property
    def tolerance(self) -> float:
        if self.quantity == BOOTS:
            return 0.0
        if self.quantity in BUFFER_TERMS and _buffer_terms(self.evidence):
            return BUFFER_TERMS[self.quantity][1]
        return TOLERANCE_ROUNDED if self.evidence.rounded else TOLERANCE


@dataclass(frozen=True)
class CalibrationPoint:
    profile: str
    evidence: int  # index in the profile's evidence list
    key: str
    date: str
    rig: str
    engine: str
    quantity: str
    measured: int
    predicted: int
    error: float  # predicted / measured - 1
    counted: bool  # False when the record is marked `calibration: false`
    fitted: tuple[str, ...] = ()  # constants fitted to this record
    tolerance: float = TOLERANCE
    sole: bool = False  # leave-one-out: the only record of a constant, nothing to refit from
    unmodelled: tuple[str, ...] = ()  # terms the prediction leaves out (fit names them)
    pool_by: str | None = None  # vLLM: what sized the pool (its own code, or the formulas)

    @property
    def within(self) -> bool:
        return abs(self.error) <= self.tolerance

    @property
    def off(self) -> bool:
        """A prediction (counted, not fitted to) outside its tolerance."""
        return self.counted and not self.sole and not self.fitted and not self.within

    @property
    def status(self) -> str:
        if not self.counted:
            return "not counted"
        if self.sole:
            return "sole point"
        if self.fitted:
            return "fitted"
        if self.within:
            return "ok"
        return f"off (unmodelled: {', '.join(self.unmodelled)})" if self.unmodelled else "off"


def _quantity(ev: Evidence) -> tuple[str, int] | None:
    m = ev.measured
    for name in QUANTITIES:
        value = getattr(m, name)
        if value is not None:
            return name, int(value)
    return None


def _buffer_terms(ev: Evidence) -> dict[str, int]:
    """A llama.cpp boot's logged buffers (model and compute beside the KV buffer)."""
    m = ev.measured
    if m.model_buffer_bytes is None and m.compute_buffer_bytes is None:
        return {}
    return {q: int(getattr(m, q)) for q in BUFFER_TERMS if getattr(m, q) is not None}


def records(registry: Registry) -> list[Record]:
    """Every evidence record with a figure fit predicts (KV pool, KV buffer, GPU memory);
    a llama.cpp boot with its buffers logged gives one per buffer, and one for their total."""
    out = []
    for profile in registry.concrete_profiles():
        for i, ev in enumerate(profile.evidence):
            terms = _buffer_terms(ev)
            if terms:
                out += [Record(profile.id, i, ev, q, v) for q, v in terms.items()]
                out.append(Record(profile.id, i, ev, BUFFERS_TOTAL, sum(terms.values())))
                continue
            # A bench's memory figure is taken under load, not at boot: not a prediction's.
            found = _quantity(ev) if ev.method == "boot" else None
            if found is None and ev.method == "boot" and ev.measured.boots is not None:
                found = BOOTS, int(ev.measured.boots)
            if found is not None:
                out.append(Record(profile.id, i, ev, *found))
    return out


def evidence_options(ev: Evidence, constants: fm.Constants = fm.DEFAULT_CONSTANTS) -> FitOptions:
    """The what-ifs that put a profile into the settings a record was measured at."""
    s = ev.settings
    return FitOptions(
        rig=ev.rig,
        engine=ev.engine,
        weights=ev.weights,
        tp=s.tp,
        gpu_util=s.gpu_memory_utilization,
        kv_dtype=s.kv_cache_dtype,
        max_model_len=s.max_model_len,
        max_num_seqs=s.max_num_seqs,
        max_num_batched_tokens=s.max_num_batched_tokens,
        spec_n=s.spec_n,
        kv_cache_memory=s.kv_cache_memory,
        prefix_caching=s.prefix_caching,
        mamba_cache_mode=s.mamba_cache_mode,
        cudagraph_max_capture=s.cudagraph_max_capture,
        enforce_eager=s.enforce_eager,
        weights_bytes=s.weights_bytes,
        mmproj=s.mmproj,
        ubatch_size=s.ubatch_size,
        booted_on=ev.date,
        constants=constants,
    )


_BUDGET_KEYS = {
    "model_buffer_bytes": "weights",
    "rs_buffer_bytes": "recurrent_state",
    "compute_buffer_bytes": "compute_buffer",
}


def predicted_value(result: FitResult, quantity: str, ev: Evidence | None = None) -> int:
    if quantity == BOOTS:
        return int(result.boots and not result.refused)
    if quantity == "kv_pool_tokens":
        return result.kv_pool_tokens
    if quantity == "kv_buffer_bytes":
        return result.kv_cache_bytes
    if quantity in _BUDGET_KEYS:
        return sum(b[_BUDGET_KEYS[quantity]] for b in result.budgets)
    if quantity == BUFFERS_TOTAL and ev is not None:
        return sum(predicted_value(result, q) for q in _buffer_terms(ev))
    return round(result.used_bytes / MIB)


def predict_record(
    registry: Registry, rec: Record, constants: fm.Constants, lock: Lock | None
) -> int:
    """What fit predicts for the quantity a record is judged on, under these constants."""
    return predicted_value(_result(registry, rec, constants, lock), rec.quantity, rec.evidence)


def _result(
    registry: Registry, rec: Record, constants: fm.Constants, lock: Lock | None
) -> FitResult:
    profile: Profile = registry.profiles[rec.profile]
    return fit_profile(registry, profile, evidence_options(rec.evidence, constants), lock=lock)


def record_point(
    registry: Registry, rec: Record, constants: fm.Constants, lock: Lock | None
) -> CalibrationPoint:
    result = _result(registry, rec, constants, lock)
    predicted = predicted_value(result, rec.quantity, rec.evidence)
    ev = rec.evidence
    engine = ev.engine or registry.profiles[rec.profile].engine
    return CalibrationPoint(
        profile=rec.profile,
        evidence=rec.index,
        key=rec.name,
        date=ev.date,
        rig=ev.rig,
        engine=engine,
        quantity=rec.quantity,
        measured=rec.measured,
        predicted=predicted,
        error=_error(rec.quantity, predicted, rec.measured),
        counted=ev.calibration,
        fitted=tuple(ev.fitted),
        tolerance=rec.tolerance,
        unmodelled=tuple(u.term for u in result.unmodelled),
        pool_by=result.pool_by,
    )


def _error(quantity: str, predicted: int, measured: int) -> float:
    """predicted / measured - 1; for a boot's verdict, 1 where fit and the engine disagree."""
    if quantity == BOOTS:
        return float(predicted != measured)
    return predicted / measured - 1


def calibration_points(
    registry: Registry, lock: Lock | None = None, constants: fm.Constants = fm.DEFAULT_CONSTANTS
) -> list[CalibrationPoint]:
    """Every evidence record with a measured figure, against the prediction for its settings."""
    return [record_point(registry, rec, constants, lock) for rec in records(registry)]


def _judged(
    registry: Registry, recs: list[Record], lock: Lock | None
) -> tuple[list[CalibrationPoint], list[tuple[Record, str]]]:
    """Each record's point, or why fit cannot predict it (its engine, weights or rig)."""
    points, unpredictable = [], []
    for rec in recs:
        try:
            points.append(record_point(registry, rec, fm.DEFAULT_CONSTANTS, lock))
        except ProfilegenError as exc:
            unpredictable.append((rec, str(exc)))
    return points, unpredictable


def profile_points(
    registry: Registry, profile_id: str, lock: Lock | None = None
) -> tuple[list[CalibrationPoint], list[tuple[Record, str]]]:
    """The measured boots recorded on one profile, each against the prediction for its own
    settings (what `fit PROFILE` shows beside its answer), and those it cannot predict."""
    return _judged(registry, [r for r in records(registry) if r.profile == profile_id], lock)


def unpredictable(registry: Registry, lock: Lock | None = None) -> list[tuple[Record, str]]:
    """Evidence records fit cannot predict at all (what `check` reports as fit-evidence)."""
    return _judged(registry, records(registry), lock)[1]


def check_names(registry: Registry) -> list[tuple[str, int, str]]:
    """(profile, evidence index, problem) for unknown `fitted:` names and reused keys."""
    problems = []
    keys: dict[str, str] = {}
    for profile in registry.concrete_profiles():
        for i, ev in enumerate(profile.evidence):
            for name in ev.fitted:
                if name not in fm.CONSTANT_NAMES:
                    known = ", ".join(fm.CONSTANT_NAMES)
                    problems.append(
                        (profile.id, i, f"unknown fit constant {name!r} (known: {known})")
                    )
            if ev.key and ev.key in keys:
                problems.append(
                    (profile.id, i, f"evidence key {ev.key!r} is also used in {keys[ev.key]}")
                )
            elif ev.key:
                keys[ev.key] = profile.id
    return problems


class CalibrationError(ProfilegenError):
    """A record cannot be predicted at all."""
