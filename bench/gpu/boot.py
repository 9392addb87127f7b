"""The GPU side of the shapes run: write each planned GGUF, boot llama-server on it, keep the log.

Runs where profilegen's dependencies may be missing (the GPU machine): it needs only Python,
numpy and the `gguf` package of the llama.cpp source it builds. A GGUF is written header
first; its tensor data is left as a hole of the right length (a sparse file reads as zeros):
llama.cpp's memory does not depend on the values, and the catalogue's larger models could not
be written in the time, nor held on the machine's disk, any other way.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

READY = "listening on http"
BOOT_TIMEOUT_S = 90.0
# What a boot takes on an H200 (4-13 s measured): no boot starts that would end past the run's
# deadline by this estimate.
BOOT_ESTIMATE_S = 30.0
_ALIGN = 32


def _gguf() -> Any:
    import gguf  # from the llama.cpp source's gguf-py (on sys.path), or installed

    return gguf


def _copy_tokenizer(writer: Any, vocab: Path, n_vocab: int) -> None:
    """The vocabulary GGUF's tokenizer, padded with unused tokens up to the model's vocab."""
    gguf = _gguf()
    reader = gguf.GGUFReader(vocab)
    fields = {k: f for k, f in reader.fields.items() if k.startswith("tokenizer.")}
    have = len(fields["tokenizer.ggml.tokens"].data)
    if have > n_vocab:
        raise ValueError(f"{vocab.name} holds {have} tokens, more than the model's {n_vocab}")
    pad = n_vocab - have
    for key, field in fields.items():
        value = field.contents()
        kind = field.types[0]
        if key == "tokenizer.ggml.tokens":
            value = value + [f"[PAD{i}]" for i in range(pad)]
        elif key == "tokenizer.ggml.token_type":
            value = value + [int(gguf.TokenType.UNUSED)] * pad
        elif key == "tokenizer.ggml.scores":
            value = value + [0.0] * pad
        if kind == gguf.GGUFValueType.ARRAY:
            writer.add_array(key, value)
        elif kind == gguf.GGUFValueType.STRING:
            writer.add_string(key, value)
        elif kind == gguf.GGUFValueType.BOOL:
            writer.add_bool(key, value)
        else:
            writer.add_key_value(key, value, kind)


def _add_key(writer: Any, key: str, kind: str, value: Any) -> None:
    gguf = _gguf()
    if kind.endswith("[]"):
        writer.add_array(key, value)
    elif kind == "u32":
        writer.add_uint32(key, int(value))
    elif kind == "f32":
        writer.add_float32(key, float(value))
    elif kind == "bool":
        writer.add_bool(key, bool(value))
    else:
        writer.add_key_value(key, value, gguf.GGUFValueType.STRING)


def tensor_bytes(shape: list[int], kind: str) -> int:
    gguf = _gguf()
    qtype = gguf.GGMLQuantizationType[kind]
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    elements = 1
    for n in shape:
        elements *= n
    return elements // block * size


def write_sparse_gguf(spec: dict[str, Any], vocab: Path, out: Path) -> int:
    """Writes the spec's GGUF with a hole for its tensor data; the tensor bytes."""
    gguf = _gguf()
    writer = gguf.GGUFWriter(out, spec["arch"])
    writer.add_name(f"random weights, shape of {spec.get('model', spec['arch'])}")
    _copy_tokenizer(writer, vocab, spec["n_vocab"])
    for key, kind, value in spec["keys"]:
        _add_key(writer, key, kind, value)
    total = 0
    for name, shape, kind in spec["tensors"]:
        nbytes = tensor_bytes(shape, kind)
        numpy_shape = list(reversed(shape))
        writer.add_tensor_info(
            name, numpy_shape, _np_float32(), nbytes, raw_dtype=gguf.GGMLQuantizationType[kind]
        )
        total += -(-nbytes // _ALIGN) * _ALIGN
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    handle = writer.fout[0]
    handle.flush()
    start = -(-handle.tell() // _ALIGN) * _ALIGN
    handle.close()
    writer.fout = None
    os.truncate(out, start + total)
    return total


def _np_float32() -> Any:
    import numpy as np

    return np.dtype(np.float32)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def boot(server: Path, argv: list[str], log: Path, env: dict[str, str]) -> dict[str, Any]:
    """Starts llama-server with `argv`, waits until it listens (or exits); the outcome."""
    started = time.monotonic()
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [str(server), *argv], stdout=sink, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, env={**os.environ, **env}, start_new_session=True,
        )  # fmt: skip
    outcome = "timeout"
    while time.monotonic() - started < BOOT_TIMEOUT_S:
        if proc.poll() is not None:
            outcome = f"exited {proc.returncode}"
            break
        if READY in log.read_text(errors="replace"):
            outcome = "listening"
            break
        time.sleep(0.25)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return {"outcome": outcome, "seconds": round(time.monotonic() - started, 1)}


def server_flags(server: Path) -> set[str]:
    """Every flag spelling the build's --help lists."""
    done = subprocess.run(
        [str(server), "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    return set(re.findall(r"(?:^|[\s,])(--?[A-Za-z][\w-]*)", done.stdout + done.stderr))


def engine_argv(
    words: list[str], model: Path, port: int, known: set[str]
) -> tuple[list[str], list[str]]:
    """The planned argv with the local model file, a free local port and debug logging; the
    flags the build does not take (a fork's own) are left out, each with its value."""
    out, dropped = [], []
    skip = False
    for i, word in enumerate(words):
        if skip:
            skip = False
            continue
        has_value = i + 1 < len(words) and not re.fullmatch(r"-[A-Za-z-].*", words[i + 1])
        if word in ("-m", "--model", "--host", "--port") or (
            word.startswith("-") and word not in known
        ):
            if word not in ("-m", "--model", "--host", "--port"):
                dropped.append(word)
            skip = has_value
            continue
        out.append(word)
    argv = ["-m", str(model), "--host", "127.0.0.1", "--port", str(port), *out, "-lv", "4"]
    return argv, dropped


def _size(entry: dict[str, Any]) -> int:
    return sum(tensor_bytes(shape, kind) for _, shape, kind in entry["spec"]["tensors"])


def run_plan(
    plan: dict[str, Any], server: Path, vocab_dir: Path, work: Path, keep: Path, deadline: float
) -> list[dict[str, Any]]:
    """Every planned boot in turn, smallest model first; each log goes to work/logs/<key>.log
    and into the tar file `keep` at once, so a run stopped at its time limit keeps the boots
    it made. No boot starts that could not end before `deadline` (a monotonic time)."""
    (work / "logs").mkdir(parents=True, exist_ok=True)
    known = server_flags(server)
    results: list[dict[str, Any]] = []
    for entry in sorted(plan["boots"], key=_size):
        key = entry["key"]
        if time.monotonic() + BOOT_ESTIMATE_S > deadline:
            results.append({"key": key, "outcome": "not started: out of time"})
            continue
        # Named as the profile's file, so the log reads like the profile's own boot.
        model = work / key / (entry.get("file") or f"{key}.gguf")
        model.parent.mkdir(parents=True, exist_ok=True)
        spec = {**entry["spec"], "model": entry["model"]}
        vocab = vocab_dir / f"ggml-vocab-{spec['vocab']}.gguf"
        tensor_total = write_sparse_gguf(spec, vocab, model)
        argv, dropped = engine_argv(entry["argv"], model, _free_port(), known)
        result = boot(server, argv, work / "logs" / f"{key}.log", entry.get("env", {}))
        model.unlink()
        results.append(
            {"key": key, "tensor_bytes": tensor_total, "argv": argv, "dropped": dropped, **result}
        )
        print(json.dumps(results[-1]), flush=True)
        with tarfile.open(keep, "a") as tar:
            tar.add(work / "logs" / f"{key}.log", arcname=f"logs/{key}.log")
    return results


if __name__ == "__main__":  # pragma: no cover - the shapes command runs this module
    sys.exit("run through bench/gpu/llamacpp_shapes.py")
