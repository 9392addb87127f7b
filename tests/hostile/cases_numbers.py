"""Corpus: every number is finite and bounded where it enters (issue items 13, 14, 16).

Registry files (one cap on every number, and the domains that matter: a rig's GPUs, a model's
layers, Compose's shm_size, a patch host's port and name), the entrypoint Compose runs, a
checkpoint's config.json and GGUF header, environment variables and command-line options:
each ends in a located finding or a usage error, never a crash.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from pathlib import Path

from tests.hostile import hubs
from tests.hostile.build import (
    CHILD,
    GPU,
    MODEL,
    PATCH_FILE,
    PROFILE,
    RIG,
    Case,
    doc,
    edit,
    rerender,
    schema_finding,
)

RANGE = "is out of range: a registry number is finite and at most 9,007,199,254,740,992 in size"
DIGITS_400 = "9" * 400
COMMIT = "0123456789abcdef0123456789abcdef01234567"
DRAFTER = "registry/drafters/tiny-eagle.yaml"
REMOTE = "registry/patches/remote-fix.yaml"
SECONDS = "must be a number of seconds more than 0 and at most 86,400 (a day), got "


def out_of_range(path: str, line: int, shown: str) -> str:
    return schema_finding(path, line, f"the number {shown} {RANGE}")


def remote_patch(base_url: str) -> str:
    """A remote patch no profile uses, fetched from `base_url`."""
    return doc(
        "patch",
        "id: remote-fix\ntitle: A remote fix\nengine: vllm-test\nsource:\n  kind: remote\n"
        f"  base_url: {base_url}\n  files:\n"
        "    - {path: fix.patch, size: 62, sha256: "
        "dd5d0074ae4617432901c7d706d294b4849e9966da9815880e023a4534a7fecb}\n"
        "steps:\n  - {method: diff, file: fix.patch, target: tiny.py, marker: '# x'}\n"
        "capability: the fixed line\ndrop_when: the engine ships the fix\n",
    )


def many_patch_files(count: int) -> object:
    """Setup: tiny-fix carries `count` more vendored files."""

    def apply(root: Path) -> None:
        folder = (root / PATCH_FILE).parent
        lines = []
        for i in range(count):
            data = f"# file {i}\n".encode()
            (folder / f"f{i:04d}.py").write_bytes(data)
            digest = hashlib.sha256(data).hexdigest()
            lines.append(f"    - {{path: f{i:04d}.py, size: {len(data)}, sha256: {digest}}}\n")
        path = root / "registry" / "patches" / "tiny-fix.yaml"
        text = path.read_text().replace(
            "    - {path: fix.patch", "".join(lines) + "    - {path: fix.patch"
        )
        path.write_text(text)

    return apply


def checkpoint(name: str, content: bytes, size: int | None = None) -> object:
    """Setup: a checkpoint folder beside the root holding one file (sparse up to `size`)."""

    def apply(root: Path) -> None:
        folder = root.parent / "ckpt"
        folder.mkdir(exist_ok=True)
        with (folder / name).open("wb") as handle:
            handle.write(content)
            if size is not None:
                handle.truncate(size)

    return apply


def config(extra: str) -> bytes:
    """A config.json whose last key is `extra` (raw JSON text)."""
    base = json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama"})
    return (base[:-1] + f', "x": {extra}}}').encode()


def model_add(repo: str = "lab/Tiny-7B") -> tuple[str, ...]:
    return ("model", "add", repo, "--from-dir", "{root}/../ckpt", "--revision", COMMIT, "--dry-run")


TINY_CONFIG = json.dumps(
    {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_attention_heads": 4,
        "num_hidden_layers": 2,
        "max_position_embeddings": 128,
        "vocab_size": 100,
        "torch_dtype": "bfloat16",
    }
).encode()


def safetensors(header: object) -> bytes:
    """A safetensors file's first bytes: the header's length, then the JSON header."""
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text


def gguf_strings(count: int) -> tuple[bytes, int]:
    """A GGUF header of one array of `count` empty strings (the sparse rest is zeros)."""
    key = b"tokenizer.ggml.tokens"
    head = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", len(key)) + key
    head += struct.pack("<IIQ", 9, 8, count)
    return head, len(head) + 8 * count + 64


def foreign(*names: bytes) -> object:
    """Setup: files under registry/ named in bytes that are not UTF-8."""

    def apply(root: Path) -> None:
        for name in names:
            (root / "registry" / os.fsdecode(name)).write_text("id: x\n")

    return apply


def not_utf8(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    return (
        f"{rel}: error: [layout] {name} is named in bytes that are not UTF-8: it is not read "
        "(rename it to an id: a-z, 0-9, '.', '_' and '-')"
    )


def registry_number_cases() -> list[Case]:
    return [
        Case(
            "size-of-1e308-gb",
            setup=(edit(MODEL, "{value: 15, unit: GB}", "{value: 1.0e+308, unit: GB}"),),
            # One mistake, one finding: what names the model is not reported again.
            findings=(out_of_range(MODEL, 20, "1.0e+308"),),
        ),
        Case(
            "vram-of-1e300-gib",
            setup=(edit(GPU, "{value: 24, unit: GiB}", "{value: 1e300, unit: GiB}"),),
            findings=(out_of_range(GPU, 6, "1e300"),),
        ),
        Case(
            "max-model-len-of-400-digits",
            setup=(edit(CHILD, "max_model_len: 131072", f"max_model_len: {DIGITS_400}"),),
            findings=(out_of_range(CHILD, 6, "999999999999…9999 (400 characters)"),),
        ),
        Case(
            "max-model-len-of-infinity",
            setup=(edit(CHILD, "max_model_len: 131072", "max_model_len: .inf"),),
            findings=(out_of_range(CHILD, 6, ".inf"),),
        ),
        Case(
            "max-model-len-of-nan",
            setup=(edit(CHILD, "max_model_len: 131072", "max_model_len: .nan"),),
            findings=(out_of_range(CHILD, 6, ".nan"),),
        ),
        Case(
            "max-model-len-just-past-the-cap",
            setup=(edit(CHILD, "max_model_len: 131072", "max_model_len: 9007199254740993"),),
            findings=(out_of_range(CHILD, 6, "9007199254740993"),),
        ),
        Case(
            "a-number-deep-in-free-json",
            setup=(
                edit(
                    CHILD,
                    "  attention_backend: FLASHINFER",
                    "  attention_backend: FLASHINFER\n  compilation: {level: [1, -1e309]}",
                ),
            ),
            findings=(out_of_range(CHILD, 9, "-1e309"),),
        ),
        Case(
            "rig-count-of-400-digits",
            setup=(edit(RIG, "count: 2", f"count: {DIGITS_400}"),),
            findings=(out_of_range(RIG, 5, "999999999999…9999 (400 characters)"),),
        ),
        Case(
            "rig-count-beyond-any-rig",
            setup=(edit(RIG, "count: 2", "count: 257"),),
            findings=(
                schema_finding(
                    RIG, 5, "count: Input should be less than or equal to 256 (got 257)"
                ),
            ),
        ),
        Case(
            "layers-beyond-any-model",
            setup=(edit(MODEL, "num_layers: 32", "num_layers: 4097"),),
            findings=(
                schema_finding(
                    MODEL,
                    7,
                    "architecture.num_layers: Input should be less than or equal to 4096 (got 4097)",
                ),
            ),
        ),
        Case(
            "shm-size-past-what-compose-reads",
            setup=(
                edit(
                    PROFILE,
                    "bind_host: 127.0.0.1",
                    "bind_host: 127.0.0.1\nshm_size: 99999999999999999999g",
                ),
            ),
            findings=(
                schema_finding(
                    PROFILE,
                    21,
                    "shm_size: 99999999999999999999g is 8 EiB or more, past the 64-bit byte count "
                    "Compose reads a size into (it wraps to a negative size)",
                ),
            ),
        ),
        Case(
            "shm-size-one-past-compose-gos-limit",
            setup=(
                edit(
                    PROFILE, "bind_host: 127.0.0.1", "bind_host: 127.0.0.1\nshm_size: 8589934592g"
                ),
            ),
            findings=(
                schema_finding(
                    PROFILE,
                    21,
                    "shm_size: 8589934592g is 8 EiB or more, past the 64-bit byte count Compose "
                    "reads a size into (it wraps to a negative size)",
                ),
            ),
        ),
        Case(
            "shm-size-at-compose-gos-limit-renders",
            setup=(
                edit(
                    PROFILE, "bind_host: 127.0.0.1", "bind_host: 127.0.0.1\nshm_size: 8589934591g"
                ),
                rerender,
            ),
            code=0,
            says=("check passed: 0 errors, 0 warnings",),
        ),
        Case(
            "patch-host-port-99999",
            {REMOTE: remote_patch("https://example.com:99999/fixes/")},
            findings=(
                schema_finding(REMOTE, 7, "source.base_url: port 99999 is not a port (1-65535)"),
            ),
        ),
        Case(
            "patch-host-port-0",
            {REMOTE: remote_patch("https://example.com:0/fixes/")},
            findings=(
                schema_finding(REMOTE, 7, "source.base_url: port 0 is not a port (1-65535)"),
            ),
        ),
        Case(
            "patch-host-port-of-30-digits",
            {REMOTE: remote_patch("https://example.com:" + "9" * 30 + "/fixes/")},
            findings=(
                schema_finding(
                    REMOTE, 7, "source.base_url: port 99999… (30 digits) is not a port (1-65535)"
                ),
            ),
        ),
        Case(
            "patch-host-with-an-empty-label",
            {REMOTE: remote_patch("https://a..b/fixes/")},
            findings=(schema_finding(REMOTE, 7, "source.base_url: 'a..b' is not a host name"),),
        ),
        Case(
            "patch-host-ending-in-a-hyphen",
            {REMOTE: remote_patch("https://fixes-.example.com/x/")},
            findings=(
                schema_finding(
                    REMOTE, 7, "source.base_url: 'fixes-.example.com' is not a host name"
                ),
            ),
        ),
        Case(
            "render-a-patch-of-2000-files",
            # The entrypoint is a mounted file, not an argument: no length limit to pass.
            setup=(many_patch_files(2000),),
            args=("render", "tiny-chat"),
            code=0,
            says=('      - "/profilegen/entrypoint.sh"',),
        ),
        Case(
            "file-names-that-are-not-utf8",
            setup=(foreign(b"profiles/\xff\xfe.yaml", b"\xfe"),),
            findings=(not_utf8("registry/\\xfe"), not_utf8("registry/profiles/\\xff\\xfe.yaml")),
        ),
        Case(
            "artifacts-with-an-undeclared-size",
            setup=(edit(DRAFTER, "  size: {value: 0.5, unit: GB}\n", ""),),
            args=("artifacts",),
            code=0,
            says=(
                "  example/Tiny-7B-Eagle3@7654321fedcba0987654321fedcba0987654321f  size not "
                "declared  [whole repo]",
            ),
        ),
        Case(
            "new-with-a-number-past-the-cap",
            args=(
                "new",
                "tiny-new",
                "--from",
                "tiny-chat",
                "--set",
                "envelope.max_model_len=1e400",
            ),
            # `--set` reads 1e400 as a float, infinite: it is written, and refused, as .inf.
            findings=(out_of_range("registry/profiles/tiny-new.yaml", 10, ".inf"),),
        ),
    ]


def checkpoint_cases() -> list[Case]:
    return [
        Case(
            "config-json-with-a-5000-digit-integer",
            setup=(checkpoint("config.json", config("9" * 5000)),),
            args=model_add(),
            says=(
                "error: {root}/../ckpt: config.json:1: an integer 5,000 digits long; no config "
                "holds one longer than 40",
            ),
            code=2,
        ),
        Case(
            "config-json-nested-50000-deep",
            setup=(checkpoint("config.json", config("[" * 50_000 + "]" * 50_000)),),
            args=model_add(),
            says=(
                "error: {root}/../ckpt: config.json:1: nests deeper than 64 levels; no config does",
            ),
            code=2,
        ),
        Case(
            "config-json-with-nan",
            setup=(checkpoint("config.json", config("NaN")),),
            args=model_add(),
            says=("error: {root}/../ckpt: config.json holds the number NaN, which is not finite",),
            code=2,
        ),
        Case(
            "config-json-with-1e400",
            setup=(checkpoint("config.json", config("1e400")),),
            args=model_add(),
            says=(
                "error: {root}/../ckpt: config.json holds the number 1e400, which is not finite",
            ),
            code=2,
        ),
        Case(
            "gguf-header-of-30-million-empty-strings",
            setup=(checkpoint("tiny-Q4_K_M.gguf", *gguf_strings(30_000_000)),),
            args=model_add("lab/Tiny-7B-GGUF"),
            says=(
                "error: {root}/../ckpt: tiny-Q4_K_M.gguf: the header holds more than 1,000,000 "
                "records (at 30,000,000 strings); no model's header has that many, so it is not read",
            ),
            code=2,
        ),
        Case(
            "safetensors-header-length-of-2-to-the-64-less-1",
            setup=(
                checkpoint("config.json", TINY_CONFIG),
                checkpoint("model.safetensors", b"\xff" * 8 + b"{}"),
            ),
            args=model_add(),
            says=(
                "error: {root}/../ckpt: model.safetensors: its first 8 bytes give a header of "
                "18,446,744,073,709,551,615 bytes; a safetensors header holds 2 to 100,000,000: "
                "it is not a safetensors file",
            ),
            code=2,
        ),
        Case(
            "safetensors-tensor-of-16-exbibytes",
            setup=(
                checkpoint("config.json", TINY_CONFIG),
                checkpoint(
                    "model.safetensors",
                    safetensors(
                        {"w": {"dtype": "F32", "shape": [2**62], "data_offsets": [0, 2**64]}}
                    ),
                ),
            ),
            args=model_add(),
            says=(
                "error: {root}/../ckpt: model.safetensors: tensor 'w' has a shape of more "
                "elements than any checkpoint holds",
            ),
            code=2,
        ),
        Case(
            "safetensors-tensor-whose-bytes-do-not-match-its-shape",
            setup=(
                checkpoint("config.json", TINY_CONFIG),
                checkpoint(
                    "model.safetensors",
                    safetensors({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 2**40]}}),
                ),
            ),
            args=model_add(),
            says=(
                "error: {root}/../ckpt: model.safetensors: tensor 'w' spans 1,099,511,627,776 "
                "bytes; F32 of shape [4] takes 16",
            ),
            code=2,
        ),
        Case(
            "safetensors-tensors-sharing-their-bytes",
            setup=(
                checkpoint("config.json", TINY_CONFIG),
                checkpoint(
                    "model.safetensors",
                    safetensors(
                        {
                            "a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                            "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]},
                        }
                    ),
                ),
            ),
            args=model_add(),
            says=(
                "error: {root}/../ckpt: model.safetensors: tensors 'a' and 'b' overlap (bytes 8 "
                "to 16): a safetensors file lays its tensors end to end",
            ),
            code=2,
        ),
        Case(
            "safetensors-bytes-no-tensor-holds",
            setup=(
                checkpoint("config.json", TINY_CONFIG),
                checkpoint(
                    "model.safetensors",
                    safetensors({"w": {"dtype": "F32", "shape": [4], "data_offsets": [64, 80]}}),
                ),
            ),
            args=model_add(),
            says=(
                "error: {root}/../ckpt: model.safetensors: bytes 0 to 64 belong to no tensor "
                "(before 'w'): a safetensors file lays its tensors end to end",
            ),
            code=2,
        ),
        Case(
            "safetensors-index-with-a-negative-total-size",
            setup=(
                checkpoint("config.json", TINY_CONFIG),
                checkpoint(
                    "model.safetensors.index.json",
                    json.dumps({"metadata": {"total_size": -5}}).encode(),
                ),
            ),
            args=model_add(),
            says=(
                "error: {root}/../ckpt: model.safetensors.index.json: metadata.total_size is -5, "
                "expected a number of bytes from 1 to 1,125,899,906,842,624",
            ),
            code=2,
        ),
        Case(
            "gguf-header-just-past-the-record-cap",
            setup=(checkpoint("tiny-Q4_K_M.gguf", *gguf_strings(1_000_000)),),
            args=model_add("lab/Tiny-7B-GGUF"),
            says=(
                "error: {root}/../ckpt: tiny-Q4_K_M.gguf: the header holds more than 1,000,000 "
                "records (at 1,000,000 strings); no model's header has that many, so it is not read",
            ),
            code=2,
        ),
    ]


def option_cases() -> list[Case]:
    """Environment variables and options: a usage error (exit 2) naming what was given."""
    cases = []
    for command in (("lock",), ("check", "--online"), ("render", "tiny-chat", "-o", "{out}")):
        for given in ("inf", "nan", "1e400", "0", "-1", "86401"):
            cases.append(
                Case(
                    f"{command[0]}-with-timeout-{given}",
                    args=(*command, "--timeout", given),
                    code=2,
                    says=(f"error: --timeout {SECONDS}{given!r}",),
                )
            )
    for name, given, says in (
        ("PROFILEGEN_HUB_RETRIES", "inf", "must be a whole number from 0 to 100, got 'inf'"),
        ("PROFILEGEN_HUB_RETRIES", "2.5", "must be a whole number from 0 to 100, got '2.5'"),
        ("PROFILEGEN_HUB_WORKERS", "1e400", "must be a whole number from 1 to 256, got '1e400'"),
        ("PROFILEGEN_HUB_WORKERS", "0", "must be a whole number from 1 to 256, got '0'"),
        ("PROFILEGEN_HUB_TIMEOUT", "nan", "must be a number from 0.001 to 86400, got 'nan'"),
        ("PROFILEGEN_NETWORK_TIMEOUT", "inf", SECONDS + "'inf'"),
    ):
        cases.append(
            Case(
                f"lock-with-{name.lower().replace('_', '-')}-{given}",
                hub=hubs.honest(),
                env={name: given},
                args=("lock",),
                code=2,
                says=(f"error: {name} {says}",),
            )
        )
    cases += [
        Case(
            "render-with-network-timeout-nan",
            env={"PROFILEGEN_NETWORK_TIMEOUT": "nan"},
            args=("render", "tiny-chat", "-o", "{out}"),
            code=2,
            says=(f"error: PROFILEGEN_NETWORK_TIMEOUT {SECONDS}'nan'",),
        ),
        Case(
            "render-k8s-with-replicas-past-int32",
            args=("render", "tiny-chat", "--target", "k8s", "--replicas", "2147483648"),
            code=2,
            says=("error: --replicas: 2147483648 is more than Kubernetes' 2,147,483,647",),
        ),
        Case(
            "render-k8s-over-more-nodes-than-any-rig",
            args=("render", "tiny-chat", "--target", "k8s", "--nodes", "257"),
            code=2,
            says=("error: --nodes: 257 is more than the 256 GPUs of any rig",),
        ),
    ]
    return cases


def number_cases() -> list[Case]:
    return [*registry_number_cases(), *checkpoint_cases(), *option_cases()]
