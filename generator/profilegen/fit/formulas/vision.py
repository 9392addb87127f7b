"""A vision tower in vLLM's start-up: its weights on every rank, and its profile-run peak.

Before sizing the KV pool, vLLM's profile run (v1/worker/gpu_model_runner.py profile_run)
passes the modality with the most tokens per item through the encoder, as many items as the
encoder budget (max(max_num_batched_tokens, tokens per item)) and the decoder budget
(max_num_seqs x items per prompt) allow. The torch peak it reaches is charged as activation
memory, so where the encoder's transient outgrows the language model's own profiling peak,
the pool is smaller by the difference.

Gemma 4 (model_executor/models/gemma4_mm.py): the tower is transformers' own module
(`AutoModel.from_config`), which vLLM does not shard: every rank holds all of it. Its patch
embedder looked positions up through a one-hot matrix, (items, patches, 2, positions) in
int64 plus its 16-bit copy, until transformers replaced it with an embedding lookup
(huggingface/transformers#46176). vLLM first encoded one image or frame per call; from
vllm-project/vllm#43169 it encodes them in chunks sized from free memory (`_encoder_chunk`:
min(free / 2, total / 10) over patches x 4 x positions x 8 bytes per item).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

ONE_HOT_BYTES = 8 + 2  # the int64 one-hot and its 16-bit copy, alive together
DEFAULT_MEDIA_LIMIT = 999  # vLLM's limit_mm_per_prompt for a modality left unset


@dataclass(frozen=True)
class Tower:
    """A tower lineage's constants, as vLLM's model file and transformers' config state them."""

    patches_per_token: int  # pooling_kernel_size ** 2: patches pooled into one soft token
    position_embedding_size: int
    image_tokens: int  # vision_config.default_output_length
    video_frames: int  # frames a video is sampled to
    frame_tokens: int  # soft tokens per video frame
    frame_extra_tokens: int  # boi, eoi and timestamp tokens around each frame
    sharded: bool  # vLLM splits the tower over TP ranks

    def item_tokens(self) -> dict[str, int]:
        frame = self.frame_tokens + self.frame_extra_tokens
        return {"image": self.image_tokens, "video": self.video_frames * frame}


# gemma4_mm.py: _VIDEO_MAX_FRAMES 32, _VIDEO_MAX_SOFT_TOKENS 70 (+2 +6 per frame); the
# vision config's defaults: pooling_kernel_size 3, position_embedding_size 10240,
# default_output_length 280.
_GEMMA4 = Tower(
    patches_per_token=9,
    position_embedding_size=10240,
    image_tokens=280,
    video_frames=32,
    frame_tokens=70,
    frame_extra_tokens=8,
    sharded=False,
)
TOWERS = {
    "gemma4": _GEMMA4,
    # Gemma 4 unified (gemma4_unified.py): no tower, raw patches projected into the language
    # model, but the same media budget (get_mm_max_tokens_per_item) and the same prefix-LM
    # attention over media, so vLLM batches at least a whole video. With no tower there is
    # no position lookup for the profile run to size.
    "gemma4-unified": replace(_GEMMA4, position_embedding_size=0),
}


@dataclass(frozen=True)
class VisionProfile:
    """How one boot profiles its tower (None in VllmInputs: no tower, or none modelled)."""

    tower: Tower
    batching: str  # per-item | chunked | none (the profile run skips the encoder)
    position_lookup: str  # one-hot | lookup
    tower_bytes: int  # the tower's weights (replicated on every rank where not sharded)
    limits: tuple[tuple[str, int], ...]  # modality -> items allowed per prompt


@dataclass(frozen=True)
class EncoderBatch:
    modality: str
    items: int  # dummy items in the profile batch
    units: int  # what the tower encodes: images, or every frame of every video
    patches: int  # patches per unit


def profile_batch(
    v: VisionProfile, batched_tokens: int, max_num_seqs: int, max_model_len: int
) -> EncoderBatch | None:
    """The dummy batch vLLM's profile run encodes (multimodal/encoder_budget.py)."""
    allowed = dict(v.limits)
    tokens = {m: n for m, n in v.tower.item_tokens().items() if allowed.get(m, 1) > 0}
    if not tokens:
        return None
    modality, per_item = max(tokens.items(), key=lambda kv: (kv[1], kv[0]))
    budget = max(batched_tokens, per_item)
    per_prompt = max(1, min(allowed.get(modality, DEFAULT_MEDIA_LIMIT), max_model_len // per_item))
    items = max(1, min(budget // per_item, max_num_seqs * per_prompt))
    tower = v.tower
    if modality == "video":
        return EncoderBatch(
            modality,
            items,
            items * tower.video_frames,
            tower.frame_tokens * tower.patches_per_token,
        )
    return EncoderBatch(modality, items, items, tower.image_tokens * tower.patches_per_token)


def units_per_call(v: VisionProfile, batch: EncoderBatch, free: int, total: int) -> int:
    """Images or frames the tower encodes in one call (gemma4_mm._encoder_chunk)."""
    chunk = 1
    if v.batching == "chunked":
        room = min(free // 2, total // 10)
        chunk = max(1, room // (batch.patches * 4 * v.tower.position_embedding_size * 8))
    return min(chunk, batch.units)


def encoder_peak_bytes(v: VisionProfile, batch: EncoderBatch, free: int, total: int) -> int:
    """The transient the encoder adds at its peak (the one-hot lookup; with an embedding
    lookup the tower's activations stay below the language model's and nothing is added)."""
    if v.position_lookup != "one-hot" or v.batching == "none":
        return 0
    chunk = units_per_call(v, batch, free, total)
    return chunk * batch.patches * 2 * v.tower.position_embedding_size * ONE_HOT_BYTES


def replicated_bytes(v: VisionProfile | None, tp: int) -> int:
    """The tower's weights every rank holds whole (vLLM does not shard it)."""
    if v is None or v.tower.sharded or tp == 1:
        return 0
    return v.tower_bytes
