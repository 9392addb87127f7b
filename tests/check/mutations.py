"""Planted defects in a copy of the real registry, each with the finding that must catch it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

Apply = Callable[[Path], None]

MODEL = "registry/models/qwen3.8-27b.yaml"
DFLASH = "registry/profiles/qwen38-27b-dual-dflash15-fast.yaml"
DUAL_FAST = "registry/profiles/qwen38-27b-dual-fast.yaml"
SINGLE = "registry/profiles/qwen38-27b-single-nvfp4.yaml"
MULTI4 = "registry/profiles/qwen38-27b-multi4-fast.yaml"
MULTI8 = "registry/profiles/qwen38-27b-multi8-fast.yaml"
VLLM_BASE = "registry/profiles/qwen3.8-27b-fp8-vllm-v0.27.1-base.yaml"
INT4_BASE = "registry/profiles/qwen3.8-27b-autoround-int4-vllm-v0.27.1-base.yaml"
WSL_UVA = "registry/patches/vllm-wsl-uva.yaml"
COMPOSE = "compose/qwen38-27b-dual-fast"
LOCK = "profilegen.lock.json"
VENDORED = "registry/patches/vllm-tiny-vendored.yaml"
CLONE_MODEL = "registry/models/qwen3.8-27b-clone.yaml"
CLONE_PROFILE = "registry/profiles/qwen38-27b-clone-dual-max.yaml"
GATEWAY = "registry/gateways/qwen38-dual-estate.yaml"
GATEWAY_OUT = "gateways/qwen38-dual-estate"
DECKARD = "registry/profiles/deckard40b-dual-mtp.yaml"
SGLANG = "registry/profiles/qwen36-27b-dual-eagle3.yaml"


@dataclass(frozen=True)
class Mutation:
    """One planted defect and where `check` must report it.

    `line` is a substring of exactly one line of `file` after the mutation: the finding
    must name that line. None means a finding about a whole file or folder (no line).
    """

    name: str
    rule: str
    file: str
    line: str | None
    apply: Apply
    message: str = ""
    xfail: str | None = None
    severity: str = "error"  # a warning leaves the exit status 0


class MutationError(AssertionError):
    """The real registry changed so that a mutation no longer applies as written."""


def put(target: Path, data: bytes) -> None:
    """Writes a new file in place of `target`: the scratch copy shares the files it does not
    change with the pristine registry (hard links), so nothing is ever written through them."""
    target.unlink(missing_ok=True)
    target.write_bytes(data)


def replace(path: str, old: str, new: str) -> Apply:
    """Replaces `old`, which must occur exactly once, so a drifting registry is noticed."""

    def apply(root: Path) -> None:
        target = root / path
        text = target.read_text(encoding="utf-8")
        if text.count(old) != 1:
            raise MutationError(f"{path}: {old!r} occurs {text.count(old)} times, not once")
        put(target, text.replace(old, new).encode("utf-8"))

    return apply


def write(path: str, text: str | bytes) -> Apply:
    def apply(root: Path) -> None:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode() if isinstance(text, str) else text
        put(target, data)

    return apply


def delete(path: str) -> Apply:
    def apply(root: Path) -> None:
        target = root / path
        if not target.is_file():
            raise MutationError(f"{path} does not exist")
        target.unlink()

    return apply


def chain(*steps: Apply) -> Apply:
    def apply(root: Path) -> None:
        for step in steps:
            step(root)

    return apply


def clone(source: str, dest: str, old_id: str, new_id: str) -> Apply:
    """A copy of a registry file under a new id (a second model, engine, …)."""

    def apply(root: Path) -> None:
        text = (root / source).read_text(encoding="utf-8")
        if text.count(f"\nid: {old_id}\n") != 1:
            raise MutationError(f"{source} has no line `id: {old_id}`")
        put(root / dest, text.replace(f"\nid: {old_id}\n", f"\nid: {new_id}\n").encode())

    return apply


def drop_lock_artifact(key: str) -> Apply:
    def apply(root: Path) -> None:
        data = json.loads((root / LOCK).read_text(encoding="utf-8"))
        if data["artifacts"].pop(key, None) is None:
            raise MutationError(f"{LOCK} has no artifact {key}")
        put(root / LOCK, (json.dumps(data, indent=2) + "\n").encode("utf-8"))

    return apply


PATCH_BODY = b"--- a/vllm/x.py\n+++ b/vllm/x.py\n@@ -1 +1 @@\n-a\n+b  # tiny\n"
VENDORED_YAML = """\
# yaml-language-server: $schema=../../schema/patch.schema.json
id: vllm-tiny-vendored
title: A vendored one-line fix
engine: vllm-v0.27.1
source:
  kind: vendored
  files:
    - {path: fix.patch, size: %d, sha256: %s}
steps:
  - {method: diff, file: fix.patch, target: x.py, marker: "# tiny"}
capability: the fixed line
drop_when: the image ships the fix
"""
CLONE_PROFILE_YAML = """\
# yaml-language-server: $schema=../../schema/profile.schema.json
id: qwen38-27b-clone-dual-max
extends: qwen3.8-27b-fp8-vllm-v0.27.1-base
title: A second model on dual-max's port
status: experimental
model: qwen3.8-27b-clone
rig: 2x3090-pcie
port: 8091
envelope: {tp: 2, max_model_len: 131072}
"""


def _vendored_patch(file_body: bytes | None) -> Apply:
    """Adds a vendored patch whose pin is for PATCH_BODY; the file on disk may differ."""
    steps = [
        write(VENDORED, VENDORED_YAML % (len(PATCH_BODY), hashlib.sha256(PATCH_BODY).hexdigest()))
    ]
    if file_body is not None:
        steps.append(write("registry/patches/files/vllm-tiny-vendored/fix.patch", file_body))
    return chain(*steps)


# A route to a name the engine does not serve: tests/gateway/test_gateway.py (check's finding).
GATEWAY_MUTATIONS: tuple[Mutation, ...] = (
    Mutation(
        name="gateway-alias-claimed-twice",
        rule="gateway-routes",
        file=GATEWAY,
        line="- profile: deckard40b-dual-mtp",
        apply=replace(
            DECKARD,
            "  served_names: [deckard-40b]\n",
            "  served_names: [deckard-40b]\n  gateway_aliases: [gemma-4-31b-autoround]\n",
        ),
        message="gateway alias 'gemma-4-31b-autoround' of deckard40b-dual-mtp is also claimed "
        "by gemma-31b-dual (registry/profiles/gemma-31b-dual.yaml:31)",
    ),
    Mutation(
        name="gateway-member-port-clash",
        rule="gateway-ports",
        file=GATEWAY,
        line="- profile: deckard40b-dual-mtp",
        apply=replace(DECKARD, "\nport: 8199\n", "\nport: 8091\n"),
        message="port 8091 of deckard40b-dual-mtp on host.docker.internal is also the port of "
        "qwen38-27b-dual-max (registry/profiles/qwen38-27b-dual-max.yaml:14)",
    ),
    Mutation(
        name="gateway-member-retired",
        rule="gateway-routes",
        file=GATEWAY,
        line="- profile: deckard40b-dual-mtp",
        apply=replace(DECKARD, "\nstatus: production\n", "\nstatus: retired\n"),
        message="deckard40b-dual-mtp is retired: the gateway would route to a server that is no "
        "longer served",
    ),
    Mutation(
        name="gateway-member-host-no-address",
        rule="schema",
        file=GATEWAY,
        line="host: 999.999.999.999",
        apply=replace(
            GATEWAY,
            "  - profile: deckard40b-dual-mtp\n",
            "  - profile: deckard40b-dual-mtp\n    host: 999.999.999.999\n",
        ),
        message="'999.999.999.999' is neither a host name nor an IPv4 address (a.b.c.d, 0-255)",
    ),
    Mutation(
        name="engine-in-service-without-its-facts-file",
        rule="engine-facts-file",
        file="registry/engines/llama.cpp-b10236.yaml",
        line="id: llama.cpp-b10236",
        apply=delete("registry/engines/facts/llama.cpp-b10236.json"),
        message="llama.cpp-b10236 has no facts file: what its profiles pass is not checked "
        "against its release (",
    ),
    Mutation(
        name="served-name-an-engine-drops",
        rule="served-names",
        file=DECKARD,
        line="served_names: [deckard-40b, deckard]",
        apply=replace(
            DECKARD, "served_names: [deckard-40b]", "served_names: [deckard-40b, deckard]"
        ),
        message="llama.cpp takes one served name (--alias deckard-40b): deckard would never be "
        "served",
    ),
    Mutation(
        name="gateway-config-edited",
        rule="disk-stale",
        file=f"{GATEWAY_OUT}/config.yaml",
        line='"openai/gemma-4-31b-autoround"',
        apply=replace(
            f"{GATEWAY_OUT}/config.yaml",
            '- model_name: gemma-4-31b-autoround\n    litellm_params:\n      model: "openai/gemma-4-31b"\n',
            '- model_name: gemma-4-31b-autoround\n    litellm_params:\n      model: "openai/gemma-4-31b-autoround"\n',
        ),
        message="differs from a fresh render of registry/gateways/qwen38-dual-estate.yaml",
    ),
    Mutation(
        name="orphan-gateway-folder",
        rule="disk-orphan",
        file="gateways/old-estate",
        line=None,
        apply=write("gateways/old-estate/config.yaml", "model_list: []\n"),
        message="gateways/old-estate/ has no gateway registry/gateways/old-estate.yaml",
    ),
)

FACTS = "registry/engines/facts/vllm-v0.27.1.json"
DRAFTER = "registry/drafters/syvai-qwen38-dflash2.yaml"


def _extra(words: str) -> Apply:
    """serve.extra_args on the DFlash profile (vLLM v0.27.1, judged by its facts file)."""
    return replace(
        DFLASH, "  reasoning_parser: qwen3\n", f"  reasoning_parser: qwen3\n  extra_args: {words}\n"
    )


# What v0.27.1's own parser refuses, judged by its checked-in facts at the line that set it
# (an unknown flag in serve.extra_args: unknown-extra-arg below; every refusal's wording:
# tests/facts/test_judge.py).
FACTS_MUTATIONS: tuple[Mutation, ...] = (
    Mutation(
        name="facts-repeated-flag",
        rule="engine-facts",
        file=DFLASH,
        line="extra_args: [--max-num-seqs",
        apply=_extra('[--max-num-seqs, "2"]'),
        message="vllm-v0.27.1: --max-num-seqs is passed twice (--max-num-seqs before it): the "
        "last one wins",
    ),
    Mutation(
        name="facts-unknown-compilation-key",
        rule="engine-facts",
        file=DFLASH,
        line="compilation: {max_capture_size: 8}",
        apply=replace(
            DFLASH,
            "  cudagraph_mem_mib: 1900\n",
            "  cudagraph_mem_mib: 1900\n  compilation: {max_capture_size: 8}\n",
        ),
        message="vllm-v0.27.1: --compilation-config has no key 'max_capture_size'",
    ),
    Mutation(
        name="facts-unknown-speculative-method",
        rule="engine-facts",
        file=DRAFTER,
        line="method: dflash",
        apply=replace(FACTS, '"inkling_mtp", "dflash", "ngram_gpu"', '"inkling_mtp", "ngram_gpu"'),
        message="vllm-v0.27.1: --speculative-config method 'dflash' is not one this release knows",
    ),
    Mutation(
        name="facts-unknown-engine-variable",
        rule="engine-facts",
        file=DFLASH,
        line="VLLM_ATTENTION_BACKNED",
        apply=replace(
            DFLASH,
            '  VLLM_SKIP_P2P_CHECK: "1"\n',
            '  VLLM_SKIP_P2P_CHECK: "1"\n  VLLM_ATTENTION_BACKNED: FLASH_ATTN\n',
        ),
        message="vllm-v0.27.1: VLLM_ATTENTION_BACKNED is not a variable this release reads",
        severity="warning",
    ),
)


MUTATIONS: tuple[Mutation, ...] = (
    *GATEWAY_MUTATIONS,
    *FACTS_MUTATIONS,
    # Generated files: missing, stale, orphaned.
    Mutation(
        name="compose-deleted",
        rule="disk-missing",
        file=DUAL_FAST,
        line="yaml-language-server",
        apply=delete(f"{COMPOSE}/compose.yaml"),
        message="compose.yaml is missing",
    ),
    Mutation(
        name="compose-header-edited",
        rule="disk-stale",
        file=f"{COMPOSE}/compose.yaml",
        line="Qwen 3.8",
        apply=replace(
            f"{COMPOSE}/compose.yaml",
            "# qwen38-27b-dual-fast: Qwen3.8",
            "# qwen38-27b-dual-fast: Qwen 3.8",
        ),
        message="differs from a fresh render",
    ),
    Mutation(
        name="compose-body-edited",
        rule="disk-stale",
        file=f"{COMPOSE}/compose.yaml",
        line="container_name: my-qwen",
        apply=replace(
            f"{COMPOSE}/compose.yaml",
            "container_name: vllm-qwen38-27b-dual-fast\n",
            "container_name: my-qwen\n",
        ),
        message="differs from a fresh render",
    ),
    Mutation(
        name="manifest-edited",
        rule="disk-stale",
        file=f"{COMPOSE}/patches.manifest.json",
        line="{ ",
        apply=replace(
            f"{COMPOSE}/patches.manifest.json",
            '{\n  "manifest_version"',
            '{ \n  "manifest_version"',
        ),
        message="differs from a fresh render",
    ),
    Mutation(
        name="orphan-compose-folder",
        rule="disk-orphan",
        file="compose/qwen38-27b-retired",
        line=None,
        apply=write("compose/qwen38-27b-retired/compose.yaml", "services: {}\n"),
        message="has no profile",
    ),
    Mutation(
        name="extra-file-in-compose-folder",
        rule="disk-orphan",
        file=f"{COMPOSE}/NOTES.md",
        line=None,
        apply=write(f"{COMPOSE}/NOTES.md", "hand-written notes\n"),
        message="is not a generated file",
    ),
    # Explain: every profile's container starts (or a guard refuses) under the scenarios.
    Mutation(
        name="tunable-of-the-wrong-type-never-boots",
        rule="explain-scenarios",
        file=DUAL_FAST,
        line="id: qwen38-27b-dual-fast",
        apply=replace(
            "registry/engines/vllm-v0.27.1.yaml",
            "tunables:\n",
            "tunables:\n  - {env: MY_UTIL, field: profile.envelope.gpu_memory_utilization, "
            "type: int, reaches: environment, help: a memory share}\n",
        ),
        message="does not start with its defaults (exit 1: MY_UTIL must be a whole number, got '0.9')",
    ),
    # A tunable default no boot takes is refused where it is written.
    Mutation(
        name="tunable-default-that-never-boots",
        rule="schema",
        file=DUAL_FAST,
        line="MY_BATCH: {default: many",
        apply=replace(
            DUAL_FAST,
            "port: 8113\n",
            "port: 8113\ntunables:\n  MY_BATCH: {default: many, type: int, help: a batch size}\n",
        ),
        message="a int tunable's default must be a whole number, got 'many'",
    ),
    # Patches: integrity of vendored files and remote pins, engine and listing.
    Mutation(
        name="vendored-patch-tampered",
        rule="patch-vendored",
        file=VENDORED,
        line="- {path: fix.patch",
        apply=_vendored_patch(PATCH_BODY.replace(b"+b", b"+c")),
        message="does not match its pin",
    ),
    Mutation(
        name="vendored-patch-file-missing",
        rule="patch-vendored",
        file=VENDORED,
        line="- {path: fix.patch",
        apply=_vendored_patch(None),
        message="is missing",
    ),
    Mutation(
        name="remote-patch-sha-changed",
        rule="lock",
        file=WSL_UVA,
        line="- path: install.sh",
        apply=replace(
            WSL_UVA,
            'sha256: "00dff5a40a8b4dd6e57fd7dccc55aafddd9fab90cd036356088f412fefc84e3e"',
            'sha256: "00dff5a40a8b4dd6e57fd7dccc55aafddd9fab90cd036356088f412fefc84e3f"',
        ),
        message="does not agree with profilegen.lock.json",
    ),
    Mutation(
        name="patch-for-another-engine",
        rule="patch-engine",
        file=DFLASH,
        line="patches:",
        apply=chain(
            clone(
                "registry/engines/vllm-v0.27.1.yaml",
                "registry/engines/vllm-v0.27.2.yaml",
                "vllm-v0.27.1",
                "vllm-v0.27.2",
            ),
            replace(WSL_UVA, "engine: vllm-v0.27.1", "engine: vllm-v0.27.2"),
        ),
        message="patch vllm-wsl-uva targets engine vllm-v0.27.2",
    ),
    Mutation(
        name="patch-listed-twice",
        rule="patch-engine",
        file=DFLASH,
        line="patches:",
        apply=replace(DFLASH, "vllm-wsl-uva]", "vllm-wsl-uva, vllm-wsl-uva]"),
        message="listed twice",
    ),
    # Hardware: TP, KV dtype, memory and context.
    Mutation(
        name="tp-not-dividing-heads",
        rule="hw-tp",
        file=MULTI8,
        line="tp: 5",
        apply=replace(MULTI8, "  tp: 8\n", "  tp: 5\n"),
        message="TP 5 does not divide the 24 attention heads",
    ),
    Mutation(
        name="tp-not-fitting-kv-heads",
        rule="hw-tp",
        file=MULTI4,
        line="tp: 3",
        apply=replace(MULTI4, "  tp: 4\n", "  tp: 3\n"),
        message="neither divides nor is a multiple of the 4 KV heads",
    ),
    Mutation(
        name="tp-larger-than-rig",
        rule="hw-tp",
        file=MULTI4,
        line="tp: 8",
        apply=replace(MULTI4, "  tp: 4\n", "  tp: 8\n"),
        message="TP 8 needs 8 GPUs",
    ),
    Mutation(
        name="fp8-kv-flash-attn-3090",
        rule="hw-kv-dtype",
        file=DFLASH,
        line="kv_cache_dtype: fp8_e4m3",
        apply=replace(DFLASH, "  kv_cache_dtype: bfloat16\n", "  kv_cache_dtype: fp8_e4m3\n"),
        message="FLASH_ATTN on NVIDIA GeForce RTX 3090 (sm 8.6) does not take fp8_e4m3 KV",
    ),
    Mutation(
        name="fp8-kv-flash-attn-set-beside",
        rule="hw-kv-dtype",
        file=DUAL_FAST,
        line="kv_cache_dtype: fp8_e4m3",
        apply=replace(
            DUAL_FAST,
            "envelope:\n  tp: 2\n",
            "envelope:\n  attention_backend: FLASH_ATTN\n  tp: 2\n",
        ),
        message="does not take fp8_e4m3 KV",
    ),
    Mutation(
        name="unknown-kv-dtype",
        rule="hw-kv-dtype",
        file=DFLASH,
        line="kv_cache_dtype: fp4",
        apply=replace(DFLASH, "  kv_cache_dtype: bfloat16\n", "  kv_cache_dtype: fp4\n"),
        message="does not know KV dtype 'fp4'",
    ),
    Mutation(
        name="context-over-model-maximum",
        rule="hw-memory",
        file=DFLASH,
        line="max_model_len: 300000",
        apply=replace(DFLASH, "max_model_len: 244320", "max_model_len: 300000"),
        message="exceeds qwen3.8-27b's maximum of 262144",
    ),
    Mutation(
        name="utilization-over-wsl2-policy",
        rule="hw-memory",
        file=DFLASH,
        line="gpu_memory_utilization: 0.9",
        apply=replace(DFLASH, "gpu_memory_utilization: 0.85", "gpu_memory_utilization: 0.9"),
        message="exceeds rig 2x3090-pcie-x16x4-wsl2's policy of 0.85",
    ),
    Mutation(
        name="weights-too-big-for-one-3090",
        rule="hw-memory",
        file=SINGLE,
        line="weights: fp8",
        apply=replace(SINGLE, "port: 8098\n", "port: 8098\nweights: fp8\n"),
        message="do not fit 1 x NVIDIA GeForce RTX 3090",
    ),
    # Drafter and patch requirements.
    Mutation(
        name="drafter-needs-flash-backend",
        rule="requirements",
        file=DFLASH,
        line="attention_backend: TRITON_ATTN",
        apply=replace(DFLASH, "attention_backend: FLASH_ATTN", "attention_backend: TRITON_ATTN"),
        message="drafter syvai-qwen38-dflash2 cannot run with attention backend TRITON_ATTN",
    ),
    Mutation(
        name="patch-needs-sync-scheduler",
        rule="requirements",
        file=DFLASH,
        line="async_scheduling: true",
        apply=replace(DFLASH, "async_scheduling: false", "async_scheduling: true"),
        message="patch vllm-dflash15 cannot run with async scheduling on",
    ),
    Mutation(
        name="patch-needs-bf16-kv",
        rule="requirements",
        file=DFLASH,
        line="kv_cache_dtype: float16",
        apply=replace(DFLASH, "  kv_cache_dtype: bfloat16\n", "  kv_cache_dtype: float16\n"),
        message="patch vllm-dflash15 cannot run with KV dtype float16",
    ),
    Mutation(
        name="drafter-for-another-model",
        rule="requirements",
        file=DFLASH,
        line="id: syvai-qwen38-dflash2",
        apply=chain(
            clone(MODEL, CLONE_MODEL, "qwen3.8-27b", "qwen3.8-27b-clone"),
            replace(
                "registry/drafters/syvai-qwen38-dflash2.yaml",
                "models: [qwen3.8-27b]",
                "models: [qwen3.8-27b-clone]",
            ),
        ),
        message="drafter syvai-qwen38-dflash2 is not made for model qwen3.8-27b",
    ),
    Mutation(
        name="builtin-mtp-without-head",
        rule="requirements",
        file=MULTI4,
        line="id: qwen-mtp-builtin",
        apply=replace(MODEL, "mtp_layers: 1", "mtp_layers: 0"),
        message="qwen3.8-27b has no built-in MTP head",
    ),
    # Catalogue: ports, siblings, status, artifact kinds, engine flags.
    Mutation(
        name="cross-model-port-clash",
        rule="port-clash",
        file=CLONE_PROFILE,
        line="port: 8091",
        apply=chain(
            clone(MODEL, CLONE_MODEL, "qwen3.8-27b", "qwen3.8-27b-clone"),
            write(CLONE_PROFILE, CLONE_PROFILE_YAML),
        ),
        message="port 8091 is also used by qwen38-27b-dual-max",
    ),
    Mutation(
        name="alternative-not-a-profile",
        rule="alternatives",
        file=DUAL_FAST,
        line="alternatives:",
        apply=replace(
            DUAL_FAST, "\nport: 8113\n", "\nport: 8113\nalternatives: [qwen38-27b-dual-maxx]\n"
        ),
        message="alternative 'qwen38-27b-dual-maxx' is not a profile",
    ),
    Mutation(
        name="dangling-sibling",
        rule="siblings",
        file=DUAL_FAST,
        line="siblings:",
        apply=replace(
            DUAL_FAST, "siblings: [qwen38-27b-dual-max,", "siblings: [qwen38-27b-dual-maxx,"
        ),
        message="sibling 'qwen38-27b-dual-maxx' is not a profile",
    ),
    Mutation(
        name="self-sibling",
        rule="siblings",
        file=DUAL_FAST,
        line="siblings:",
        apply=replace(
            DUAL_FAST,
            "siblings: [qwen38-27b-dual-max,",
            "siblings: [qwen38-27b-dual-fast, qwen38-27b-dual-max,",
        ),
        message="lists itself as a sibling",
    ),
    Mutation(
        name="production-without-evidence",
        rule="status-evidence",
        file=SINGLE,
        line="status: production",
        apply=replace(SINGLE, "status: experimental\n", "status: production\n"),
        message="is production but carries no evidence record",
    ),
    Mutation(
        name="gguf-weights-on-vllm",
        rule="artifact-kind",
        file=SINGLE,
        line="weights: gguf-iq4xs",
        apply=replace(SINGLE, "port: 8098\n", "port: 8098\nweights: gguf-iq4xs\n"),
        message="a GGUF artifact cannot be served by vllm",
    ),
    Mutation(
        name="projector-as-weights",
        rule="artifact-kind",
        file=SINGLE,
        line="weights: mmproj-f16",
        apply=replace(SINGLE, "port: 8098\n", "port: 8098\nweights: mmproj-f16\n"),
        message="weights mmproj-f16 is a mmproj artifact, not main weights",
    ),
    Mutation(
        name="weights-as-projector",
        rule="artifact-kind",
        file=SINGLE,
        line="mmproj: fp8",
        apply=replace(SINGLE, "port: 8098\n", "port: 8098\nmmproj: fp8\n"),
        message="fp8 is not a vision projector",
    ),
    Mutation(
        name="unknown-extra-arg",
        rule="engine-facts",
        file=SINGLE,
        line="--no-such-flag",
        apply=replace(
            SINGLE, "port: 8098\n", "port: 8098\nserve: {extra_args: [--no-such-flag]}\n"
        ),
        message="--no-such-flag is not a flag this release takes",
    ),
    # The lock file.
    Mutation(
        name="artifact-missing-from-lock",
        rule="lock",
        file=MODEL,
        line="  nvfp4:",
        apply=drop_lock_artifact("qwen3.8-27b/nvfp4"),
        message="is not in profilegen.lock.json",
    ),
    Mutation(
        name="lock-file-deleted",
        rule="lock",
        file=LOCK,
        line=None,
        apply=delete(LOCK),
        message="lock file is missing",
    ),
    Mutation(
        name="artifact-repo-changed",
        rule="lock",
        file=MODEL,
        line="  nvfp4:",
        apply=replace(
            MODEL,
            'repo: "RadixArk/Qwen3.8-27B-NVFP4"\n',
            'repo: "RadixArk/Qwen3.8-27B-NVFP4-v2"\n',
        ),
        message="changed since profilegen.lock.json was written",
    ),
    # The schema files and the loader's own checks.
    Mutation(
        name="schema-file-stale",
        rule="schema-stale",
        file="schema/profile.schema.json",
        line=None,
        apply=replace(
            "schema/profile.schema.json",
            '"title": "profilegen registry file: profile"',
            '"title": "profilegen registry file: a profile"',
        ),
        message="is stale",
    ),
    Mutation(
        name="broken-rig-reference",
        rule="reference",
        file=DFLASH,
        line='rig: "2x3090-pcie-x16x4-wsl3"',
        apply=replace(
            DFLASH, '\nrig: "2x3090-pcie-x16x4-wsl2"\n', '\nrig: "2x3090-pcie-x16x4-wsl3"\n'
        ),
        message="rig '2x3090-pcie-x16x4-wsl3' is not defined",
    ),
    Mutation(
        name="drafter-width-above-maximum",
        rule="reference",
        file=DFLASH,
        line="width: 16",
        apply=replace(DFLASH, "  width: 15\n", "  width: 16\n"),
        message="exceeds syvai-qwen38-dflash2's maximum",
    ),
    Mutation(
        name="extends-cycle",
        rule="extends-cycle",
        file=VLLM_BASE,
        line="extends: qwen38-27b-dual-max",
        apply=replace(
            VLLM_BASE,
            "id: qwen3.8-27b-fp8-vllm-v0.27.1-base\n",
            "id: qwen3.8-27b-fp8-vllm-v0.27.1-base\nextends: qwen38-27b-dual-max\n",
        ),
        message="qwen3.8-27b-fp8-vllm-v0.27.1-base -> qwen38-27b-dual-max -> "
        "qwen3.8-27b-fp8-vllm-v0.27.1-base",
    ),
    Mutation(
        name="predicted-not-to-boot-without-a-caveat",
        rule="fit-boots",
        file=SINGLE,
        line="caveats:",
        apply=replace(
            SINGLE,
            "Predicted not to fit: NVFP4 weights (21.9 GB) leave no KV pool on one 24 GB card; "
            "upstream says it cannot boot there.",
            "Untested beyond the dual-card sibling.",
        ),
        message="fit predicts it cannot boot on 1x3090: a KV pool of 0 tokens",
    ),
    Mutation(
        name="evidence-fitted-to-an-unknown-constant",
        rule="fit-evidence",
        file=DUAL_FAST,
        line="key: q38-int4-v0251-nospec",
        apply=replace(
            DUAL_FAST, "fitted: [vllm-runtime-overhead]", "fitted: [vllm-runtim-overhead]"
        ),
        message="unknown fit constant 'vllm-runtim-overhead'",
    ),
    Mutation(
        name="evidence-on-an-unknown-engine",
        rule="reference",
        file=DUAL_FAST,
        line="engine: vllm-v0.25.2",
        apply=replace(
            DUAL_FAST,
            'key: q38-int4-v0251-mtp4\n    date: "2026-08-16"\n    rig: "2x3090-pcie"\n    engine: vllm-v0.25.1',
            'key: q38-int4-v0251-mtp4\n    date: "2026-08-16"\n    rig: "2x3090-pcie"\n    engine: vllm-v0.25.2',
        ),
        message="engine 'vllm-v0.25.2' is not defined",
    ),
    Mutation(
        name="evidence-on-an-engine-of-another-kind",
        rule="fit-evidence",
        file=DUAL_FAST,
        line="key: q38-int4-v0251-nospec",
        apply=replace(
            DUAL_FAST,
            'key: q38-int4-v0251-nospec\n    date: "2026-08-16"\n    rig: "2x3090-pcie"\n    engine: vllm-v0.25.1',
            'key: q38-int4-v0251-nospec\n    date: "2026-08-16"\n    rig: "2x3090-pcie"\n    engine: llama.cpp-b10236',
        ),
        message="q38-int4-v0251-nospec: fit cannot predict this boot: engine llama.cpp-b10236 is "
        "llama.cpp",
    ),
    Mutation(
        name="sglang-requires-an-api-key",
        rule="api-key-engine",
        file=SGLANG,
        line="api_key: required",
        apply=replace(SGLANG, "serve:\n", "serve:\n  api_key: required\n"),
        message="requires an API key, but sglang takes one only on its command line",
    ),
    Mutation(
        name="api-key-as-an-extra-argument",
        rule="schema",
        file=SGLANG,
        line="extra_args:",
        apply=replace(SGLANG, "  extra_args:\n", "  extra_args:\n    - --api-key\n"),
        message="--api-key is not an extra argument",
    ),
    # Kubernetes: how a node provides a host path; who loads the weights.
    Mutation(
        name="k8s-host-path-without-a-source",
        rule="k8s",
        file=DFLASH,
        line='host: "/usr/bin/ninja"',
        apply=replace(DFLASH, "    ninja: {host_type: File}\n", ""),
        message="mount ninja: /usr/bin/ninja is a path on the host; say how a cluster node",
    ),
    Mutation(
        name="k8s-typed-host-path",
        rule="k8s-hostpath",
        file=DFLASH,
        line="include: {host_type: File}",
        apply=replace(DFLASH, "include: {host_type: Directory}", "include: {host_type: File}"),
        message="mount include is the node's own /usr/local/cuda/include (hostPath File)",
        severity="warning",  # a cluster that does not enforce baseline runs it
    ),
    Mutation(
        name="k8s-no-loader-image",
        rule="k8s-loader",
        file="registry/settings.yaml",
        line="yaml-language-server",  # the file: the setting it lacks has no line
        apply=replace(
            "registry/settings.yaml",
            'kubernetes:\n  loader_image: "vllm/vllm-openai:v0.27.1"\n',
            "",
        ),
        message="profile(s) cannot load their weights on a cluster",
        severity="warning",
    ),
    Mutation(
        name="evidence-speed-past-the-physical-bound",
        rule="evidence-bound",
        file=DUAL_FAST,
        line="decode_tps_narrative: 4321",
        apply=replace(DUAL_FAST, "decode_tps_narrative: 74.9", "decode_tps_narrative: 4321"),
        message="decode_tps_narrative 4,321.0 tok/s is past the physical bound of 1,377 tok/s "
        "(3.14x it) for 2x NVIDIA GeForce RTX 3090: 1,872 GB/s of memory bandwidth over",
    ),
    Mutation(
        name="evidence-prefill-past-the-physical-bound",
        rule="evidence-bound",
        file=DUAL_FAST,
        line="tokens_per_s: 178000}",
        apply=replace(DUAL_FAST, "tokens_per_s: 1780}", "tokens_per_s: 178000}"),
        message="prefill at 10,000 tokens 178,000.0 tok/s is past the physical bound of 16,625 "
        "tok/s (10.71x it) for 2x NVIDIA GeForce RTX 3090: 568 dense 8-bit tensor TFLOPS",
    ),
    Mutation(
        name="evidence-source-with-a-password",
        rule="evidence-source",
        file=DUAL_FAST,
        line="http://bob:hunter2@10.0.0.7:8000",
        apply=replace(
            DUAL_FAST,
            'source: "club-3090 BENCHMARKS.md@4a29ab57 line 358"',
            'source: "profilegen bench http://bob:hunter2@10.0.0.7:8000?api_key=k: bench"',
        ),
        message="the source holds a URL with user information and the query's api_key=: a "
        "credential must not be published",
    ),
    Mutation(
        name="evidence-without-a-rig",
        rule="schema",
        file=DUAL_FAST,
        line='source: "club-3090 BENCHMARKS.md@4a29ab57 line 358"',
        apply=replace(
            DUAL_FAST,
            'line: 358}\n    date: "2026-08-20"\n    rig: "2x3090-pcie"\n',
            'line: 358}\n    date: "2026-08-20"\n',
        ),
        message="missing required key 'rig' in evidence.4",
    ),
    Mutation(
        name="evidence-without-a-date",
        rule="schema",
        file=DUAL_FAST,
        line='source: "club-3090 BENCHMARKS.md@4a29ab57 line 358"',
        apply=replace(
            DUAL_FAST,
            'line: 358}\n    date: "2026-08-20"\n    rig: "2x3090-pcie"\n',
            'line: 358}\n    rig: "2x3090-pcie"\n',
        ),
        message="missing required key 'date' in evidence.4",
    ),
    Mutation(
        name="evidence-without-a-source",
        rule="schema",
        file=DUAL_FAST,
        line='origin: {file: BENCHMARKS.md, rev: "4a29ab57", line: 358}',
        apply=replace(
            DUAL_FAST,
            '  - source: "club-3090 BENCHMARKS.md@4a29ab57 line 358"\n    origin:',
            "  - origin:",
        ),
        message="missing required key 'source' in evidence.4",
    ),
    Mutation(
        name="live-profile-without-best-for",
        rule="advice",
        file=SINGLE,
        line="id: qwen38-27b-single-nvfp4",
        apply=replace(
            SINGLE,
            'best_for: "one user or agent at long context, accuracy before throughput"\n',
            "",
        ),
        message="qwen38-27b-single-nvfp4 does not say what it is best for",
        severity="warning",
    ),
    Mutation(
        name="best-for-without-its-source",
        rule="advice",
        file=DUAL_FAST,
        line='best_for: "fastest decode with the built-in MTP head"',
        apply=replace(
            DUAL_FAST,
            'best_for_source: {file: "scripts/lib/profiles/registry.yaml", line: 2761, '
            'rev: "4a29ab57"}\n',
            "",
        ),
        message="best_for does not say where it was read",
        severity="warning",
    ),
    Mutation(
        name="live-profile-without-exposures",
        rule="advice",
        file=DECKARD,
        line="id: deckard40b-dual-mtp",
        apply=replace(DECKARD, "exposures: []\n", ""),
        message="deckard40b-dual-mtp does not state its known exposures (engine bugs it runs into)",
        severity="warning",
    ),
    Mutation(
        name="no-exposures-without-a-source-saying-so",
        rule="advice",
        file=DECKARD,
        line="exposures: []",
        apply=replace(
            DECKARD,
            'exposures_source: {file: "models/qwen3.6-40b-deckard/llama-cpp/compose/dual/'
            'piehsoft-q6k/mtp.yml", rev: "4a29ab57"}\n',
            "",
        ),
        message="exposures is empty but no exposures_source says none are known",
        severity="warning",
    ),
    Mutation(
        name="evidence-with-an-empty-source",
        rule="evidence-record",
        file=DUAL_FAST,
        line='source: "  "',
        apply=replace(
            DUAL_FAST,
            'source: "club-3090 BENCHMARKS.md@4a29ab57 line 358"',
            'source: "  "',
        ),
        message="the source is empty: a record names where its figures were read",
    ),
    Mutation(
        name="evidence-dated-in-the-future",
        rule="evidence-record",
        file=DUAL_FAST,
        line='date: "2999-08-20"',
        apply=replace(
            DUAL_FAST,
            'line: 358}\n    date: "2026-08-20"\n',
            'line: 358}\n    date: "2999-08-20"\n',
        ),
        message="dated 2999-08-20, after today (",
    ),
)
