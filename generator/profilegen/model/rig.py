"""A rig: N GPUs (identical, or listed card by card), how they are connected, the host, its policy."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from .common import Fraction, Id, Size, Strict, Text
from .kubernetes import RigKubernetes


class Interconnect(Strict):
    kind: Literal["pcie", "nvlink", "single"] = "pcie"
    # PCIe lanes each card gets, in card order (asymmetric x16/x4 desktops are common).
    pcie_lanes: list[Annotated[int, Field(ge=1, le=16)]] = Field(default_factory=list)
    pcie_gen: Annotated[int, Field(ge=1, le=6)] | None = None
    nvlink: bool = False


class RigPolicy(Strict):
    max_gpu_memory_utilization: Fraction | None = None
    reason: Text | None = None


class Rig(Strict):
    id: Id
    name: Text
    # The cards' GPU; for a rig of mixed cards, the one with the least memory.
    gpu: Id
    # GPUs in the rig: a host, or a few nodes of one (explain lists each, and fit sizes each).
    count: Annotated[int, Field(gt=0, le=256)]
    # Mixed rigs (a 3090 Ti next to a 3090): each card's GPU, in card order.
    cards: list[Id] = Field(default_factory=list)
    interconnect: Interconnect = Interconnect()
    host_os: Literal["linux", "wsl2", "windows"] = "linux"
    # Index of a card that also drives a desktop: its compositor holds VRAM.
    desktop_gpu: Annotated[int, Field(ge=0)] | None = None
    desktop_reserve: Size | None = None
    power_limit_w: list[Annotated[float, Field(gt=0)]] = Field(default_factory=list)
    policy: RigPolicy = RigPolicy()
    kubernetes: RigKubernetes | None = None
    notes: Text | None = None

    @model_validator(mode="after")
    def _cards(self) -> Rig:
        if self.desktop_gpu is not None and self.desktop_gpu >= self.count:
            raise ValueError(
                f"desktop_gpu: desktop_gpu {self.desktop_gpu} is not one of the {self.count} cards"
            )
        if self.cards and len(self.cards) != self.count:
            raise ValueError(f"cards: cards lists {len(self.cards)} GPUs, rig has {self.count}")
        lanes = self.interconnect.pcie_lanes
        if lanes and len(lanes) != self.count:
            raise ValueError(
                f"interconnect.pcie_lanes: interconnect.pcie_lanes lists {len(lanes)} cards, rig has {self.count}"
            )
        per_node = self.kubernetes.gpus_per_node if self.kubernetes else None
        if per_node is not None and self.count % per_node:
            raise ValueError(
                f"kubernetes.gpus_per_node: {per_node} GPUs per node do not divide the rig's {self.count} cards"
            )
        return self

    @property
    def gpus_per_node(self) -> int:
        """GPUs one node of the rig offers (the whole rig unless it says otherwise)."""
        per_node = self.kubernetes.gpus_per_node if self.kubernetes else None
        return per_node or self.count
