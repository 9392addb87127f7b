"""`profilegen model add`: a model entry derived from its checkpoint, each fact with its source.

The checkpoint is read at one commit (the Hub's listing, config.json, generation_config.json,
or a GGUF header by ranged reads): never the weights. What it says becomes a draft: the
model's facts, one artifact and where each fact came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError, printable, suggest
from ..hub.checkpoint import Checkpoint, CheckpointError, CheckpointFile, read_json
from ..hub.gguf import read_gguf_header
from ..model.common import ID_PATTERN
from ..model.model import HF_REPO_PATTERN
from .facts import DerivationError, Facts, Source, display_name, kind_name
from .ggufmeta import gguf_facts, quantization_name
from .hfconfig import architecture_facts
from .weights import sampling_facts, weight_facts
from .weightsize import gguf_size, size_weights

SHARD = re.compile(r"^(?P<stem>.+)-(?P<no>[0-9]{5})-of-(?P<of>[0-9]{5})\.gguf$")
# mmproj variants in the order a projector is preferred.
MMPROJ_ORDER = ("f16", "bf16", "q8_0", "f32")


@dataclass(frozen=True)
class AddOptions:
    repo: str
    revision: str | None = None
    gguf: str | None = None  # a file name, or a part of one (`Q4_K_M`), in a GGUF repo
    from_dir: Path | None = None
    model_id: str | None = None
    variant: str | None = None
    timeout: float | None = None
    dry_run: bool = False
    offline: bool = False  # read the Hugging Face cache's copy, not the Hub


@dataclass
class ArtifactDraft:
    variant: str
    files: list[CheckpointFile]  # empty: the whole repository
    facts: Facts
    kind: str = "main"
    # The bytes where they are not the listed files' sum: a whole repository's listing, or
    # what a local folder's index, headers or config.json say (None: unknown).
    total: int | None = None

    @property
    def size(self) -> int | None:
        if self.total is not None or not self.files:
            return self.total
        sizes = [f.size for f in self.files]
        return None if None in sizes else sum(s for s in sizes if s is not None)


@dataclass
class ModelDraft:
    """What the checkpoint says: model facts, its artifacts and the sources read."""

    model_id: str
    name: str
    family: str
    facts: Facts
    artifacts: list[ArtifactDraft]
    checkpoint: Checkpoint
    read: list[str] = field(default_factory=list)  # files read, for the report
    trust_remote_code: str | None = None


def check_repo(repo: str) -> None:
    if not re.match(HF_REPO_PATTERN, repo):
        raise UsageError(f"{repo!r} is not a Hub repository id (owner/name)")


def slug(text: str) -> str:
    """Lower-case id characters only: `Q4_K_M` -> `q4km`."""
    return re.sub(r"[^a-z0-9.]+", "", text.lower())


def default_id(repo: str, given: str | None) -> str:
    ident = given or re.sub(r"-gguf$", "", repo.split("/")[1].lower())
    if not re.match(ID_PATTERN, ident):
        raise UsageError(f"{ident!r} is not a valid model id; pass --id")
    return ident


# -- which files ---------------------------------------------------------------------------------


def _gguf_groups(files: dict[str, CheckpointFile]) -> dict[str, list[CheckpointFile]]:
    """GGUF weights by artifact: a single file, or every shard of a split one."""
    groups: dict[str, list[CheckpointFile]] = {}
    for path, f in sorted(files.items()):
        name = path.rsplit("/", 1)[-1]
        if not name.lower().endswith(".gguf") or name.lower().startswith("mmproj"):
            continue
        shard = SHARD.match(path)
        groups.setdefault(shard.group("stem") if shard else path, []).append(f)
    return groups


def _complete(stem: str, shards: list[CheckpointFile], where: str) -> list[CheckpointFile]:
    match = SHARD.match(shards[0].path)
    if match is None:
        return shards
    expected = int(match.group("of"))
    if len(shards) != expected:
        raise CheckpointError(
            f"{where}: {stem} is split into {expected} files, {len(shards)} are present"
        )
    return shards


def pick_gguf(checkpoint: Checkpoint, wanted: str | None) -> list[CheckpointFile]:
    groups = _gguf_groups(checkpoint.files)
    if not groups:
        raise CheckpointError(f"{checkpoint.where}: no GGUF weights (only mmproj files, if any)")
    if wanted is None:
        if len(groups) == 1:
            stem, shards = next(iter(groups.items()))
            return _complete(stem, shards, checkpoint.where)
        raise UsageError(
            f"{checkpoint.where} holds {len(groups)} GGUF files; pick one with --gguf: "
            + printable(", ".join(sorted(groups)))
        )
    exact = [s for s, shards in groups.items() if wanted in (s, *(f.path for f in shards))]
    matching = exact or [s for s in groups if wanted.lower() in s.lower()]
    if len(matching) == 1:
        return _complete(matching[0], groups[matching[0]], checkpoint.where)
    if not matching:
        close = suggest(wanted, sorted(groups))
        hint = f" (did you mean {close!r}?)" if close else f" (it has: {', '.join(sorted(groups))})"
        hint = printable(hint)  # file names, one line
        raise UsageError(f"--gguf {wanted!r}: no such GGUF file in {checkpoint.where}{hint}")
    names = printable(", ".join(matching))
    raise UsageError(f"--gguf {wanted!r} matches {len(matching)} files: {names}")


def pick_mmproj(checkpoint: Checkpoint) -> CheckpointFile | None:
    projectors = [
        f
        for path, f in sorted(checkpoint.files.items())
        if path.rsplit("/", 1)[-1].lower().startswith("mmproj") and path.lower().endswith(".gguf")
    ]

    def rank(f: CheckpointFile) -> int:
        name = f.path.lower()
        return next((i for i, t in enumerate(MMPROJ_ORDER) if t in name), len(MMPROJ_ORDER))

    return min(projectors, key=rank, default=None)


# -- facts ---------------------------------------------------------------------------------------


def _source(checkpoint: Checkpoint, label: str, file: str) -> Source:
    return Source(label, checkpoint.repo, checkpoint.commit, file)


def _from_config(checkpoint: Checkpoint, opts: AddOptions, draft_id: str) -> ModelDraft:
    config = read_json(checkpoint, "config.json")
    if config is None:
        raise CheckpointError(
            f"{checkpoint.where} has no config.json (and no GGUF file): it is not a checkpoint "
            "profilegen can read"
        )
    source = _source(checkpoint, "config", "config.json")
    facts = architecture_facts(config, source)
    read = ["config.json"]
    generation = read_json(checkpoint, "generation_config.json")
    if generation is not None:
        facts.merge(
            sampling_facts(generation, _source(checkpoint, "generation", "generation_config.json"))
        )
        read.append("generation_config.json")
    weights = weight_facts(config, source, "_")
    variant = opts.variant or _hf_variant(weights)
    weights = weight_facts(config, source, variant)
    if checkpoint.from_hub:  # the whole repository, as the Hub lists it
        total = sum(f.size or 0 for f in checkpoint.files.values()) or None
    else:
        sizing = size_weights(checkpoint, config, facts, weights, variant)
        total, read, facts.notes = sizing.total, read + sizing.read, facts.notes + sizing.notes
    artifact = ArtifactDraft(variant, [], weights, total=total)
    if config.get("model_type"):
        family = kind_name(config["model_type"], "config.json", "model_type")
        facts.put("family", family.replace("_", "-").lower(), source, "model_type")
    remote = None
    if isinstance(config.get("auto_map"), dict):
        remote = "config.json maps the model classes to code in the repository (auto_map)"
    name = checkpoint.repo.split("/")[1]
    return ModelDraft(draft_id, name, "", facts, [artifact], checkpoint, read, remote)


def _hf_variant(weights: Facts) -> str:
    fmt = str(weights.values.get("artifacts._.format", "safetensors"))
    dtype = weights.values.get("artifacts._.weight_dtype")
    if fmt == "safetensors":
        return str(dtype or "bf16")
    if fmt in ("fp8", "nvfp4") or dtype is None:
        return fmt
    return f"{'ct' if fmt == 'compressed-tensors' else fmt}-{dtype}"


def _from_gguf(checkpoint: Checkpoint, opts: AddOptions, draft_id: str) -> ModelDraft:
    files = pick_gguf(checkpoint, opts.gguf)
    first = files[0].path
    header = read_gguf_header(checkpoint, first)
    source = _source(checkpoint, "gguf", first)
    facts = gguf_facts(header.metadata, source)
    quant, key = quantization_name(header.metadata, header.tensor_types)
    org = slug(checkpoint.repo.split("/")[0])
    variant = opts.variant or f"{org}-{slug(quant)}"
    weights = Facts()
    weights.put(f"artifacts.{variant}.format", "gguf", source, None)
    weights.put(f"artifacts.{variant}.quantization", quant, source, key)
    artifacts = [ArtifactDraft(variant, files, weights)]
    projector = pick_mmproj(checkpoint)
    if projector is not None:
        mm = f"{org}-mmproj"
        mm_facts = Facts()
        mm_facts.put(
            f"artifacts.{mm}.format", "gguf", _source(checkpoint, "mmproj", projector.path), None
        )
        artifacts.append(ArtifactDraft(mm, [projector], mm_facts, kind="mmproj"))
        facts.put("architecture.vision", True, _source(checkpoint, "mmproj", projector.path), None)
    if not checkpoint.from_hub:  # a local copy may hold only the headers: they say the size
        for a in artifacts:
            a.total = gguf_size(checkpoint, a.files, header)
            label, path = ("gguf" if a.kind == "main" else a.kind), a.files[0].path
            where = _source(checkpoint, label, path)
            a.facts.attribute(f"artifacts.{a.variant}.size", where, "tensor_infos")
    arch = kind_name(header.metadata.get("general.architecture"), first, "general.architecture")
    facts.put("family", arch.replace("_", "-").lower(), source, "general.architecture")
    name = display_name(header.metadata.get("general.name"))
    if name:
        facts.put("name", name, source, "general.name")
    shown = name or draft_id
    read = [f"{first} (header, {header.header_bytes:,} of {header.size:,} bytes)"]
    return ModelDraft(draft_id, shown, "", facts, artifacts, checkpoint, read)


def derive(checkpoint: Checkpoint, opts: AddOptions) -> ModelDraft:
    """The draft: GGUF when asked for (or the repo holds no config.json), else config.json."""
    draft_id = default_id(opts.repo, opts.model_id)
    has_gguf = any(p.lower().endswith(".gguf") for p in checkpoint.files)
    use_gguf = opts.gguf is not None or (has_gguf and "config.json" not in checkpoint.files)
    try:
        draft = (_from_gguf if use_gguf else _from_config)(checkpoint, opts, draft_id)
    except DerivationError as exc:
        raise DerivationError(f"{checkpoint.where}: {exc}") from None
    # Name and family are top-level fields: their values move to the draft, their sources stay.
    draft.family = str(draft.facts.values.pop("family", draft_id))
    if "name" in draft.facts.values:
        draft.name = str(draft.facts.values.pop("name"))
    return draft
