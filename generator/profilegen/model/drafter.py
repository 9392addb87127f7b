"""A speculative-decoding drafter: built into the model or its own artifact."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .common import Id, PositiveInt, Requirements, Strict, Text
from .model import Artifact


class DraftShape(Strict):
    """The attention shape of a drafter's own layers, for KV-pool sizing."""

    # Layers of the drafter that hold their own per-token KV cache.
    kv_layers: int = Field(ge=0)
    num_kv_heads: PositiveInt
    head_dim: PositiveInt
    hidden_size: PositiveInt | None = None
    # Tokens each drafter layer attends back over; None means full attention.
    sliding_window: PositiveInt | None = None
    # Target hidden states the drafter reads per token (DFlash taps several layers).
    hidden_taps: PositiveInt = 1


class Drafter(Strict):
    id: Id
    name: Text
    # draft_model: a separate small model vLLM recognises from its config (no method key).
    method: Literal["mtp", "dflash", "dspark", "eagle", "eagle3", "ngram", "draft_model"]
    # Built-in drafters (an embedded MTP head) have no artifact of their own.
    builtin: bool = False
    artifact: Artifact | None = None
    models: list[Id] = Field(default_factory=list)
    default_width: PositiveInt
    max_width: PositiveInt
    shape: DraftShape | None = None
    requires: Requirements = Requirements()
    notes: Text | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Drafter:
        if self.builtin == (self.artifact is not None):
            raise ValueError(
                "builtin: a drafter is either builtin or has an artifact, not both or neither"
            )
        if self.default_width > self.max_width:
            raise ValueError(
                f"default_width: default_width {self.default_width} exceeds max_width {self.max_width}"
            )
        if self.artifact is not None and self.artifact.kind != "draft":
            raise ValueError("artifact: a drafter's artifact must have kind 'draft'")
        return self
