"""What a family of engines is, as data: each stage reads the field it needs, never the kind."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

# How a family's memory is fitted (fit/): a KV pool sized from the memory utilization
# (vLLM), a static fraction for weights and pool (SGLang), or one context buffer over the
# layers each card holds (llama.cpp). None: no memory model; `fit` says so.
FitModel = Literal["pool", "static-fraction", "layer-split"]


@dataclass(frozen=True)
class Family:
    """One kind of engine server, and how every stage treats it."""

    kind: str  # the engines' `kind:` in the registry
    label: str  # how people name it: vLLM, llama.cpp, SGLang
    # entrypoint/engines/<template>.sh.j2: the boot script's engine-specific blocks.
    template: str
    container_prefix: str  # a compose service's container_name is <prefix>-<profile>
    # "module:function" that builds the engine's command line from a render context.
    dialect: str
    # How the server takes its API key off its command line: from an environment variable
    # (api_key_env), from a file only its user can read, or not at all.
    api_key_via: Literal["env", "file"] | None
    api_key_env: str | None = None
    server: str = ""  # its server program, where that is what people name (llama-server)
    # How many names it answers to (one: only the first served name reaches it), the flag
    # that gives them, and what it answers to when the profile names none.
    served_names: Literal["many", "one"] = "many"
    served_name_flag: str = "--served-model-name"
    default_served: Literal["model", "weights-path"] = "model"
    weights_format: Literal["safetensors", "gguf"] = "safetensors"
    # Where the image expects the model folder, unless an engine says otherwise.
    model_mount: str = "/root/.cache/huggingface"
    # How a command line names its drafter: one JSON config (vLLM), --spec-type words
    # (llama.cpp), or flags of their own (SGLang).
    spec_style: Literal["json", "types", "flags"] = "json"
    # Prefix of the variables the server reads as flags (llama-server's LLAMA_ARG_*).
    env_flag_prefix: str | None = None
    # Without a context flag the server sizes its context itself (llama-server's -c 0).
    auto_context: bool = False
    # One process over every GPU (layers split between cards): no NCCL, no custom all-reduce,
    # no tensor-parallel constraint from the attention heads.
    single_process: bool = False
    fit: FitModel | None = None
    default_kv_dtype: str = "auto"
    # KV dtypes a first profile tries, best first (None: the engine's default), and whether
    # the GPU's attention-backend table limits them (vLLM's backends).
    first_kv_dtypes: tuple[str | None, ...] = (None,)
    kv_by_attention_backend: bool = False
    # What a first profile (`new --model`) starts from beyond the common envelope.
    first_envelope: tuple[tuple[str, Any], ...] = ()
    first_serve: tuple[tuple[str, Any], ...] = ()
    offload_modes: tuple[str, ...] = ()  # weights kept off the GPUs that fit models
    # Whether its image runs profilegen's weights loader (Python with huggingface_hub).
    image_has_hub_client: bool = True
    # None: a group of nodes can serve it (Kubernetes LeaderWorkerSet); else why not.
    multinode: str | None = None
    # runtime: fields (model/runtime.py) that only this family reads.
    runtime_options: frozenset[str] = field(default_factory=frozenset)
    # Text only this family's boot log holds (how `fit log` tells logs apart).
    log_markers: tuple[str, ...] = ()
    # drafter: placement fields only this family reads.
    drafter_options: frozenset[str] = field(default_factory=frozenset)
    # What turns a model's tool call into `tool_calls`: the engine's tool parser (a profile's
    # tool_call_parser), or its chat template (llama-server's --jinja).
    tools_by: Literal["parser", "template"] = "parser"
    # The chat request's field that holds a regular expression the answer must match, as a
    # dotted path (vLLM: structured_outputs.regex); None: not one `verify --serving` uses.
    output_regex: str | None = None

    def call(self, name: str, *args: Any) -> Any:
        """Calls one of the family's hooks (`dialect`) with `args`."""
        return hook(getattr(self, name))(*args)


def hook(path: str) -> Callable[..., Any]:
    """The function a "module:function" path names, imported when first used."""
    module, _, name = path.partition(":")
    found: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return found
