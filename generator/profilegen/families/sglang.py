"""SGLang: `python3 -m sglang.launch_server`."""

from __future__ import annotations

from .base import Family

FAMILY = Family(
    kind="sglang",
    label="SGLang",
    template="sglang",
    container_prefix="sglang",
    dialect="profilegen.render.dialects.sglang:build",
    # SGLang takes a key only as --api-key, on its command line: it gets none.
    api_key_via=None,
    served_names="one",
    spec_style="flags",
    fit="static-fraction",
    log_markers=("KV Cache is allocated", "max_total_num_tokens"),
    multinode=(
        "SGLang's multi-node launch (--nnodes/--node-rank) is not rendered; serve it on one node"
    ),
)
