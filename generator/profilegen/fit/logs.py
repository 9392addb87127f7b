"""Engine boot logs read back into facts: the settings a server started with, what it measured.

vLLM (v0.2x): "non-default args: {...}", "Model loading took X GiB", "Available KV cache
memory: X GiB" (one per worker), "GPU KV cache size: N tokens" and "Maximum concurrency for
L tokens per request: Xx" (one line from v0.28), "Estimated CUDA graph memory: X GiB total".
llama.cpp: "<func>: <dev> model|KV|RS|compute buffer size = X MiB", "n_ctx = N",
"n_seq_max = N", the KV total line with its K/V types, "build: N (hash)" or "build N (hash)",
"file size = X MiB|GiB" (the tensors); recent builds prefix each line with a time and a level
letter, and print the buffers at verbosity 4 (-lv 4). Each context (the target's, a draft's)
reserves its compute buffers again after the first graph: the last reserve is what it holds.
SGLang: "KV Cache is allocated. #tokens: N", "max_total_num_tokens=N, ... context_len=L".
Only regular expressions and `ast.literal_eval` read the text: nothing in it is executed.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field
from typing import Any

from ..families import family, fit_model, kinds
from ..units import GIB, MIB

MAX_LOG_BYTES = 64 << 20

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Any word where a figure stands: a value that is no finite, non-negative number (nan, -3,
# inf) is refused with its line, never skipped or summed.
_NUM = r"([\w.+-]+?)"
_VLLM = {
    "version": re.compile(
        r"vLLM API server version ([0-9][\w.+-]*)|LLM engine \(v([0-9][\w.+-]*)\)"
    ),
    "args": re.compile(r"non-default args: (\{.*\})\s*$"),
    "loading": re.compile(r"Model loading took " + _NUM + r" ?GiB"),
    "available": re.compile(r"Available KV cache memory: " + _NUM + r" ?GiB"),
    "pinned": re.compile(r"reserved " + _NUM + r" GiB memory for KV Cache as specified by"),
    "tokens": re.compile(r"GPU KV cache size: ([\w.,+-]+) tokens"),
    "concurrency": re.compile(
        r"Maximum concurrency for ([\w.,+-]+) tokens per request: " + _NUM + r"x"
    ),
    "graphs": re.compile(r"Estimated CUDA graph memory: " + _NUM + r" GiB total"),
}
# An optional "0.01.234.567 I " prefix (time, level) before the function name.
_PREFIX = r"^(?:[\d.]+ [A-Z] )?(?:\w+\s+)?"
_LLAMA = {
    "build": re.compile(r"\bbuild:? (\d+) \(([0-9a-z]+)\)"),
    "file": re.compile(r"loaded meta data with \d+ key-value pairs and \d+ tensors from (\S+)"),
    "buffer": re.compile(
        _PREFIX + r"\w+:\s+(\S+)\s+(model|KV|RS|compute) buffer size =\s+" + _NUM + r" MiB"
    ),
    "context": re.compile(_PREFIX + r"llama_context: constructing llama_context"),
    "n_ctx": re.compile(_PREFIX + r"\w+: n_ctx\s+= (\d+)"),
    "n_seq": re.compile(_PREFIX + r"\w+: n_seq_max\s+= (\d+)"),
    "outputs": re.compile(_PREFIX + r"\w+: n_outputs_max\s+= (\d+)"),
    "ubatch": re.compile(_PREFIX + r"\w+: n_ubatch\s+= (\d+)"),
    "kv_types": re.compile(r"K \((\w+)\):\s+[\d.]+ MiB, V \((\w+)\)"),
    "tensors": re.compile(_PREFIX + r"print_info: file size\s+= " + _NUM + r" (MiB|GiB)"),
}
_GPU = ("CUDA", "ROCM", "VULKAN")
_SGLANG = {
    "tokens": re.compile(r"KV Cache is allocated\. #tokens: ([\w.+-]+)"),
    "summary": re.compile(
        r"max_total_num_tokens=(\d+),.*?max_running_requests=(\d+), context_len=(\d+)"
    ),
    "weights": re.compile(r"Load weight end\..*?mem usage=" + _NUM + " GB"),
}
# The cards a llama.cpp boot names: "- CUDA0 : NVIDIA H200 (143155 MiB, ...)" (recent
# builds), "Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6" (older ones).
_DEVICES = {
    "listed": re.compile(r"-\s+(CUDA\d+)\s+:\s+(.+?) \((\d+) MiB, \d+ MiB free\)"),
    "found": re.compile(r"\bDevice (\d+): (.+?), compute capability"),
}


class LogError(ValueError):
    """The text is not a boot log fit can read."""


@dataclass
class BootLog:
    """What one boot log says; every field is None when the log does not say it."""

    engine: str  # vllm | llama.cpp | sglang
    version: str | None = None
    args: dict[str, Any] = field(default_factory=dict)  # vLLM non-default args
    kv_pool_tokens: int | None = None
    max_concurrency: float | None = None
    concurrency_len: int | None = None
    kv_available_bytes: int | None = None  # the tightest worker
    kv_pinned_bytes: int | None = None
    weights_loaded_bytes: int | None = None
    cuda_graph_bytes: int | None = None
    model_file: str | None = None
    n_ctx: int | None = None
    n_seq_max: int | None = None
    cache_types: tuple[str, str] | None = None
    buffers: dict[str, int] = field(default_factory=dict)  # llama.cpp: kind -> bytes on GPUs
    gpu_buffers: dict[str, list[int]] = field(default_factory=dict)  # kind -> per device
    host_buffers: dict[str, int] = field(default_factory=dict)  # kind -> bytes in host memory
    tensor_bytes: int | None = None  # llama.cpp "file size": the GGUF's tensor data
    n_outputs_max: int | None = None  # llama-server: n_parallel x (1 + draft tokens)
    n_ubatch: int | None = None
    # Each context's compute buffers by device (a later reserve replaces an earlier one).
    compute: list[dict[str, int]] = field(default_factory=list)
    context_len: int | None = None
    running_requests: int | None = None
    # The cards the log names (llama.cpp): device -> (name, MiB or None).
    devices: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    # Bytes of GPU buffers on each device, and the line that last added to them.
    device_bytes: dict[str, int] = field(default_factory=dict)
    device_line: dict[str, int] = field(default_factory=dict)
    line_no: int = 0  # the line being read


def _number(log: BootLog, text: str, what: str) -> float:
    """A figure of the line being read: finite and not negative, else the log is refused."""
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        value = float("nan")
    if not math.isfinite(value) or value < 0:
        raise LogError(f"line {log.line_no}: {what} is {text!r}, not a size a boot can log")
    return value


def _whole(log: BootLog, text: str, what: str) -> int:
    value = _number(log, text, what)
    if not value.is_integer():
        raise LogError(f"line {log.line_no}: {what} is {text!r}, not a whole number")
    return int(value)


# Digits no figure of a boot log comes near: a longer count (a 5,000-digit n_ctx was a
# ValueError, a 400-digit one an OverflowError in the formulas) is refused with its line.
_MAX_DIGITS = 15


def _int(log: BootLog, text: str, what: str) -> int:
    """A count of the line being read (digits only), of at most _MAX_DIGITS digits."""
    if len(text) > _MAX_DIGITS:
        raise LogError(
            f"line {log.line_no}: {what} is {len(text):,} digits long, not a figure a boot can log"
        )
    return int(text)


def _outsized(value: Any) -> bool:
    """Whether a literal holds a number past _MAX_DIGITS digits, or one not finite."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, bool):
            continue
        if isinstance(item, int) and abs(item) >= 10**_MAX_DIGITS:
            return True
        if isinstance(item, float) and not math.isfinite(item):
            return True
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            pending.extend(item)
    return False


def _args(log: BootLog, text: str) -> dict[str, Any]:
    """vLLM's non-default args; one holding a number no boot takes is refused with its line."""
    args = _literal(text)
    for key, value in args.items():
        if _outsized(value):
            raise LogError(
                f"line {log.line_no}: the non-default arg {str(key)[:40]!r} holds a number past "
                f"{_MAX_DIGITS} digits or not finite, not one a boot takes"
            )
    return args


def _gib(log: BootLog, text: str, what: str) -> int:
    return round(_number(log, text, what) * GIB)


_PAIR = re.compile(
    r"'(\w+)': ('[^'\\]*'|-?[\d.]+(?:e-?\d+)?|True|False|None|\[[^\[\]]*\]|\{[^{}]*\})"
)


def _literal(text: str) -> dict[str, Any]:
    """vLLM prints its args as a Python dict; literal_eval reads it without running it.

    A value that is not a literal (an object's repr) spoils the whole dict, so then each
    key whose value is a literal is read on its own.
    """
    try:
        value = ast.literal_eval(text)
        return value if isinstance(value, dict) else {}
    except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
        pass
    out: dict[str, Any] = {}
    for key, raw in _PAIR.findall(text):
        try:
            out[key] = ast.literal_eval(raw)
        except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
            continue
    return out


def _vllm_line(log: BootLog, line: str) -> None:
    p = _VLLM
    if m := p["version"].search(line):
        log.version = log.version or m.group(1) or m.group(2)
    if m := p["args"].search(line):
        log.args = _args(log, m.group(1)) or log.args
    if m := p["loading"].search(line):
        loaded = _gib(log, m.group(1), "the model loading size")
        log.weights_loaded_bytes = max(log.weights_loaded_bytes or 0, loaded)
    if m := p["available"].search(line):
        value = _gib(log, m.group(1), "the available KV cache memory")
        log.kv_available_bytes = min(log.kv_available_bytes or value, value)
    if m := p["pinned"].search(line):
        log.kv_pinned_bytes = _gib(log, m.group(1), "the reserved KV cache memory")
    if m := p["tokens"].search(line):
        log.kv_pool_tokens = _whole(log, m.group(1), "the GPU KV cache size")
    if m := p["concurrency"].search(line):
        log.concurrency_len = _whole(log, m.group(1), "the tokens per request")
        log.max_concurrency = _number(log, m.group(2), "the maximum concurrency")
    if m := p["graphs"].search(line):
        graphs = _gib(log, m.group(1), "the CUDA graph memory")
        log.cuda_graph_bytes = max(log.cuda_graph_bytes or 0, graphs)


def _is_gpu(device: str) -> bool:
    return device.upper().startswith(_GPU) and "HOST" not in device.upper()


def _buffer(log: BootLog, device: str, kind: str, size: int) -> None:
    if kind == "compute":  # one buffer per device and context, sized by its last reserve
        if not log.compute:
            log.compute.append({})
        log.compute[-1][device] = size
    elif _is_gpu(device):
        log.buffers[kind] = log.buffers.get(kind, 0) + size
        log.gpu_buffers.setdefault(kind, []).append(size)
        _on_device(log, device, size)
    elif kind != "model" or device.upper() in ("CPU", "CPU_MAPPED"):
        # The host's own copy of the weights (a repacked copy for the CPU's kernels is not).
        log.host_buffers[kind] = log.host_buffers.get(kind, 0) + size


def _on_device(log: BootLog, device: str, size: int) -> None:
    log.device_bytes[device] = log.device_bytes.get(device, 0) + size
    log.device_line[device] = log.line_no
    _within_the_card(log, device)


def _device(log: BootLog, line: str) -> None:
    if m := _DEVICES["listed"].search(line):
        mib = _int(log, m.group(3), f"the memory of {m.group(1)}")
        log.devices.setdefault(m.group(1), (m.group(2).strip(), mib))
    elif m := _DEVICES["found"].search(line):
        log.devices.setdefault(f"CUDA{m.group(1)}", (m.group(2).strip(), None))


def _llama_line(log: BootLog, line: str) -> None:
    p = _LLAMA
    _device(log, line)
    if (m := p["build"].search(line)) and log.version is None:
        log.version = f"b{m.group(1)}"
    if (m := p["file"].search(line)) and log.model_file is None:
        log.model_file = m.group(1)
    if (m := p["tensors"].search(line)) and log.tensor_bytes is None:
        size = _number(log, m.group(1), "the file size")
        log.tensor_bytes = round(size * (GIB if m.group(2) == "GiB" else MIB))
    if p["context"].search(line):
        log.compute.append({})
    if m := p["buffer"].search(line):
        size = _number(log, m.group(3), f"the {m.group(2)} buffer size on {m.group(1)}")
        _buffer(log, m.group(1), m.group(2), round(size * MIB))
    if (m := p["n_ctx"].search(line)) and log.n_ctx is None:
        log.n_ctx = _int(log, m.group(1), "n_ctx")
    if (m := p["ubatch"].search(line)) and log.n_ubatch is None:
        log.n_ubatch = _int(log, m.group(1), "n_ubatch")
    if (m := p["outputs"].search(line)) and log.n_outputs_max is None:
        log.n_outputs_max = _int(log, m.group(1), "n_outputs_max")
    if (m := p["n_seq"].search(line)) and log.n_seq_max is None:
        log.n_seq_max = _int(log, m.group(1), "n_seq_max")
    if (m := p["kv_types"].search(line)) and log.cache_types is None:
        log.cache_types = (m.group(1), m.group(2))


def _sglang_line(log: BootLog, line: str) -> None:
    p = _SGLANG
    if m := p["tokens"].search(line):
        log.kv_pool_tokens = _whole(log, m.group(1), "the KV cache's #tokens")
    if m := p["summary"].search(line):
        log.kv_pool_tokens = log.kv_pool_tokens or _int(log, m.group(1), "max_total_num_tokens")
        log.running_requests = _int(log, m.group(2), "max_running_requests")
        log.context_len = _int(log, m.group(3), "context_len")
    if m := p["weights"].search(line):
        log.weights_loaded_bytes = _gib(log, m.group(1), "the weights' memory usage")


def detect_engine(text: str) -> str:
    """The family whose start-up lines the log holds (families are tried in their order)."""
    for kind in kinds():
        if any(marker in text for marker in family(kind).log_markers):
            return kind
    known = [family(k).label for k in kinds() if family(k).log_markers]
    labels = ", ".join(known[:-1]) + f" or {known[-1]}" if len(known) > 1 else "".join(known)
    raise LogError(f"no {labels} start-up line found (is this the engine's boot log?)")


# How each memory model's boot log is read, line by line.
READERS = {"pool": _vllm_line, "layer-split": _llama_line, "static-fraction": _sglang_line}


def _sum_compute(log: BootLog) -> None:
    """Compute buffers over every context: the GPUs', or the host's in a CPU-only boot."""
    for context in log.compute:
        for device, size in context.items():
            if _is_gpu(device):
                log.buffers["compute"] = log.buffers.get("compute", 0) + size
                log.gpu_buffers.setdefault("compute", []).append(size)
                log.device_bytes[device] = log.device_bytes.get(device, 0) + size
            else:
                log.host_buffers["compute"] = log.host_buffers.get("compute", 0) + size


def parse_log(text: str) -> BootLog:
    """The facts of one boot log (the first boot in it wins where a fact repeats)."""
    text = _ANSI.sub("", text)
    log = BootLog(engine=detect_engine(text))
    model = fit_model(log.engine)
    if model is None:
        raise LogError(f"no memory model reads a {family(log.engine).label} log")
    read = READERS[model]
    for number, line in enumerate(text.splitlines(), start=1):
        log.line_no = number
        read(log, line.rstrip())
    _within_the_cards(log)
    if (
        fit_model(log.engine) == "pool"
        and log.kv_pool_tokens is None
        and log.kv_available_bytes is None
    ):
        raise LogError("the vLLM log ends before the KV cache was sized (no 'GPU KV cache size')")
    if fit_model(log.engine) == "layer-split":
        _sum_compute(log)
        if not log.buffers and not log.host_buffers:
            raise LogError(
                "the llama.cpp log has no 'buffer size' lines (did the model load? recent "
                "builds print them at verbosity 4: -lv 4, or LLAMA_ARG_LOG_VERBOSITY=4)"
            )
    if fit_model(log.engine) == "static-fraction" and log.kv_pool_tokens is None:
        raise LogError("the SGLang log ends before the KV cache was allocated")
    return log


def _within_the_cards(log: BootLog) -> None:
    for device in log.device_bytes:
        _within_the_card(log, device)


def _within_the_card(log: BootLog, device: str) -> None:
    """The buffers a boot logs on a card fit in that card's memory, where the log names it
    (a log repeating its lines sums past any card)."""
    named = log.devices.get(device)
    used = log.device_bytes.get(device, 0)
    if named is None or named[1] is None or used <= named[1] * MIB:
        return
    raise LogError(
        f"line {log.device_line.get(device, log.line_no)}: the buffers on {device} sum to "
        f"{used / GIB:,.1f} GiB, more than the {named[1] / 1024:,.1f} GiB of its {named[0]}: "
        "not one boot's log"
    )
