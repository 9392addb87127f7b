"""The size of the weights in a local checkpoint folder (`model add --from-dir`): read from
what the folder holds, estimated from config.json, or unknown, never the few bytes of the
metadata files that happen to be there.

In order: the safetensors index (`metadata.total_size`); the headers of the safetensors
files (every shard of a split checkpoint); GGUF files by their headers. Else the parameter
count config.json implies times the bytes a parameter takes in the declared dtype, recorded
as an estimate with how it was worked out. Else unknown: `fit` and `new` refuse to size a
profile of the model until `profilegen lock` reads the size on the Hub.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from ..fit import formulas as fm
from ..fit.inputs import FORMAT_DTYPES, WEIGHT_BITS, FitError, model_shape
from ..hub.checkpoint import MAX_WEIGHTS, Checkpoint, CheckpointError, CheckpointFile, read_json
from ..hub.gguf import GgufHeader, read_gguf_header
from ..hub.safetensors import read_safetensors_header
from ..model.model import Architecture
from .facts import Facts, Lookup, Source
from .hfconfig import text_lookup

INDEX = "model.safetensors.index.json"
INDEX_LIMIT = 64 * 2**20  # the largest indexes (a few hundred thousand tensors) are ~10 MB
SHARD = re.compile(r"^(?P<stem>.+)-(?P<no>[0-9]{5})-of-(?P<of>[0-9]{5})\.safetensors$")
# Bytes a parameter takes in each torch_dtype a checkpoint stores its weights in.
STORAGE = {"bfloat16": 2, "float16": 2, "float32": 4}


@dataclass
class Sizing:
    """The weights' bytes (None: unknown), the files read for them and what to tell the user."""

    total: int | None
    read: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _source(checkpoint: Checkpoint, label: str, file: str) -> Source:
    return Source(label, checkpoint.repo, checkpoint.commit, file)


def _top_level(checkpoint: Checkpoint, suffix: str) -> list[str]:
    return sorted(p for p in checkpoint.files if "/" not in p and p.endswith(suffix))


def _from_index(checkpoint: Checkpoint, facts: Facts, path: str) -> Sizing | None:
    names = _top_level(checkpoint, ".safetensors.index.json")
    if not names:
        return None
    name = INDEX if INDEX in names else names[0]
    index = read_json(checkpoint, name, INDEX_LIMIT) or {}
    metadata = index.get("metadata")
    total = metadata.get("total_size") if isinstance(metadata, dict) else None
    if total is None:
        return Sizing(None, notes=[f"{name} has no metadata.total_size"])
    if isinstance(total, float) and total.is_integer():
        total = int(total)
    if not isinstance(total, int) or isinstance(total, bool) or not 0 < total <= MAX_WEIGHTS:
        raise CheckpointError(
            f"{checkpoint.where}: {name}: metadata.total_size is {total!r:.40}, expected a "
            f"number of bytes from 1 to {MAX_WEIGHTS:,}"
        )
    facts.attribute(path, _source(checkpoint, "index", name), "metadata.total_size")
    return Sizing(total, read=[name])


def _incomplete(names: list[str]) -> str | None:
    """Why the split safetensors files cannot size the weights (a shard is missing)."""
    sets = Counter((m["stem"], m["of"]) for m in map(SHARD.match, names) if m is not None)
    for (stem, of), present in sorted(sets.items()):
        if present != int(of):
            return f"{stem} is split into {int(of)} safetensors files, the folder holds {present}"
    return None


def _from_headers(checkpoint: Checkpoint, facts: Facts, path: str) -> Sizing | None:
    names = _top_level(checkpoint, ".safetensors")
    if not names:
        return None
    missing = _incomplete(names)
    if missing is not None:
        return Sizing(None, notes=[f"{missing}: their headers cannot size the weights"])
    headers = [read_safetensors_header(checkpoint, name) for name in names]
    key = "header" if len(names) == 1 else f"headers of {len(names)} files"
    facts.attribute(path, _source(checkpoint, "weights", names[0]), key)
    read = sum(h.header_bytes for h in headers)
    shown = names[0] if len(names) == 1 else f"{names[0]} and {len(names) - 1} more"
    return Sizing(sum(h.file_bytes for h in headers), read=[f"{shown} (headers, {read:,} bytes)"])


# -- the estimate -------------------------------------------------------------------------------


def _torch_dtype(config: dict[str, Any], source: Source) -> str | None:
    names = ["torch_dtype", "dtype"]
    found = text_lookup(config, source).first(names) or Lookup(config, source).first(names)
    return None if found is None else str(found[1])


def _per_parameter(
    config: dict[str, Any], weights: Facts, variant: str, source: Source
) -> tuple[float, float, str] | str:
    """(bytes per embedding parameter, per other parameter, in words), or why none."""
    fmt = weights.values.get(f"artifacts.{variant}.format", "safetensors")
    dtype = _torch_dtype(config, source)
    stored = STORAGE.get(dtype or "")
    if fmt == "safetensors":
        if stored is None:
            said = f"its torch_dtype is {dtype!r}" if dtype else "it states no torch_dtype"
            return f"{source.file} does not say how many bytes a parameter takes ({said})"
        return stored, stored, f"{stored} bytes (torch_dtype {dtype})"
    quant = weights.values.get(f"artifacts.{variant}.weight_dtype") or FORMAT_DTYPES.get(fmt)
    if quant is None:
        return f"its quantization_config ({fmt}) does not say the weights' storage type"
    embedding = stored or 2
    said = f"torch_dtype {dtype}" if stored else "16-bit"
    words = (
        f"{WEIGHT_BITS[quant]:g} bits ({quant} from quantization_config, with its scales), "
        f"embeddings at {embedding} bytes ({said})"
    )
    return embedding, WEIGHT_BITS[quant] / 8, words


def estimate(
    config: dict[str, Any], arch: Facts, weights: Facts, variant: str, source: Source
) -> tuple[int, str] | str:
    """Bytes of the weights from the parameters config.json implies, with how they were
    worked out; or why config.json cannot tell."""
    tree = arch.tree("architecture")
    try:
        shape = model_shape(Architecture.model_validate(tree), "")
    except ValidationError:
        return f"the architecture {source.file} describes is not one profilegen can count"
    except FitError:
        lacks = "vocab_size" if "vocab_size" not in tree else "intermediate_size"
        return f"{source.file} states no {lacks}"
    per = _per_parameter(config, weights, variant, source)
    if isinstance(per, str):
        return per
    embedding_bytes, other_bytes, words = per
    embedding, body, nextn = fm.model_params(shape)
    params = embedding + body + nextn
    embeddings = embedding * (1 if shape.tied_embeddings else 2)
    total = round(embeddings * embedding_bytes + (params - embeddings) * other_bytes)
    how = f"{params / 1e9:.2f}B parameters implied by {source.file} x {words}"
    if shape.multimodal:
        how += "; the vision tower is not counted"
    return total, how


# -- the whole folder ---------------------------------------------------------------------------


def size_weights(
    checkpoint: Checkpoint,
    config: dict[str, Any],
    arch: Facts,
    weights: Facts,
    variant: str,
) -> Sizing:
    """The size of a local safetensors checkpoint's weights; provenance lands in `weights`."""
    path = f"artifacts.{variant}.size"
    notes: list[str] = []
    for method in (_from_index, _from_headers):
        found = method(checkpoint, weights, path)
        if found is not None and found.total is not None:
            found.notes = notes + found.notes
            return found
        notes += found.notes if found else []
    source = _source(checkpoint, "config", "config.json")
    worked = estimate(config, arch, weights, variant, source)
    if isinstance(worked, tuple):
        total, how = worked
        weights.attribute(path, source, None, estimate=how)
        notes.append(
            f"the size of the {variant} weights is an estimate: {how} (the folder holds "
            f"neither {INDEX} nor the weights); `profilegen lock` online reads the real size"
        )
        return Sizing(total, notes=notes)
    notes.append(
        f"the size of the {variant} weights is unknown: the folder holds neither {INDEX} "
        f"nor the weights, and {worked}. `profilegen fit` and `new` cannot size a profile of "
        "this model until `profilegen lock` reads the size on the Hub (or add it again with "
        "the index or the weights' files in the folder)"
    )
    return Sizing(None, notes=notes)


def gguf_size(checkpoint: Checkpoint, files: list[CheckpointFile], known: GgufHeader) -> int:
    """A local GGUF artifact's bytes as its headers lay them out, every shard's (a header
    already read is not read again); the file's own size where a tensor type is unknown."""
    total = 0
    for f in files:
        header = known if f.path == known.path else read_gguf_header(checkpoint, f.path)
        total += header.extent if header.extent is not None else header.size
    return total
