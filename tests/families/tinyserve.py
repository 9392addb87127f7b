"""A fourth engine family for the tests: `tinyserve`, registered by this one module.

Its dialect passes the model folder, the context and the port; its entrypoint template lives in
the test registry's own templates/ folder (`entrypoint/engines/tinyserve.sh.j2`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from profilegen.families import Family, register
from profilegen.render.command import Arg, EngineCommand

if TYPE_CHECKING:
    from profilegen.render.context import Context

FAMILY = Family(
    kind="tinyserve",
    label="TinyServe",
    template="tinyserve",
    container_prefix="tinyserve",
    dialect="tests.families.tinyserve:build",
    api_key_via="env",
    api_key_env="TINYSERVE_API_KEY",
    served_names="one",
    served_name_flag="--name",
)
TEMPLATE = """{% extends "entrypoint/base.sh.j2" %}
{% block engine_prelude %}
# TinyServe reads nothing beyond its flags.
{% endblock %}
"""


def build(ctx: Context) -> EngineCommand:
    env = ctx.profile.envelope
    path = ctx.model_path(ctx.weights.local_dir, subfolder=ctx.weights.subfolder)
    args = [
        Arg("--model", (path,), "model"),
        Arg("--name", (ctx.served_names[0],), "served_names"),
        Arg(
            "--context", (ctx.value("envelope.max_model_len", env.max_model_len),), "max_model_len"
        ),
        Arg("--port", (str(ctx.engine.container_port),), "port"),
    ]
    return EngineCommand(binary=(ctx.engine.binary,), args=tuple(args), spec_args=())


def registered() -> Family:
    register(FAMILY)
    return FAMILY
