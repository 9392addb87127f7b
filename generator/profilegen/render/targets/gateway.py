"""The gateway target: a compose project with the LiteLLM proxy (and Open WebUI), its whole
`config.yaml` (one route per name), and `.env.example` (pure)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from jinja2.sandbox import SandboxedEnvironment

from ...errors import RegistryError
from ...registry import Registry
from ...resources import template_dirs
from ..context import RenderError, environments
from ..estate import DOCKER_HOST, Estate
from ..quoting import Interp, RawYaml, comment_lines
from ..verify import verify_document

PROXY_PORT = 4000  # inside the container
WEBUI_PORT = 8080
CONFIG_PATH = "/app/config.yaml"
# The key the proxy sends every engine: ENGINE_API_KEY (the API_KEY the engines were started
# with), else "none", which an engine without a key ignores (LiteLLM needs one to send).
ENGINE_KEY_ENV = "ENGINE_API_KEY"
ENGINE_KEY = f"os.environ/{ENGINE_KEY_ENV}"
WEBUI_VOLUME = "open-webui-data"


@dataclass(frozen=True)
class RenderedGateway:
    gateway_id: str
    compose: bytes
    config: bytes
    env_example: bytes

    def files(self) -> dict[str, bytes]:
        """Files of gateways/<id>/ (and of `gateway -o DIR`), by name."""
        return {
            "compose.yaml": self.compose,
            "config.yaml": self.config,
            ".env.example": self.env_example,
        }


def _name(text: str) -> str:
    return re.sub(r"[^a-z0-9_-]", "-", text)


def _labels(estate: Estate, role: str) -> dict[str, str]:
    return {
        "io.profilegen.gateway": estate.gateway.id,
        "io.profilegen.role": role,
        "io.profilegen.title": estate.gateway.title,
    }


def _proxy(estate: Estate) -> dict[str, Any]:
    g = estate.gateway
    service: dict[str, Any] = {
        "image": g.image.ref,
        "container_name": f"litellm-{_name(g.id)}",
        "restart": "unless-stopped",
        "command": [
            *("--config", CONFIG_PATH, "--port", str(PROXY_PORT)),
            *("--host", "0.0.0.0", "--num_workers", "1"),
        ],
        "ports": [
            Interp(
                f"${{GATEWAY_BIND_HOST:-{g.bind_host}}}:${{GATEWAY_PORT:-{g.port}}}:{PROXY_PORT}"
            )
        ],
        "environment": {
            # Passed through from the host: unset, the proxy asks no key of its clients.
            "LITELLM_MASTER_KEY": None,
            # The price list packaged with the release; never fetched at start-up.
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            ENGINE_KEY_ENV: Interp(f"${{{ENGINE_KEY_ENV}:-none}}"),
        },
        "volumes": [
            {"type": "bind", "source": "./config.yaml", "target": CONFIG_PATH, "read_only": True}
        ],
    }
    if any(r.host == DOCKER_HOST for r in estate.routes):
        service["extra_hosts"] = [f"{DOCKER_HOST}:host-gateway"]
    service["labels"] = _labels(estate, "gateway")
    return service


def webui_connections(estate: Estate) -> list[tuple[str, Interp]]:
    """Open WebUI's OpenAI connections, (base URL, key) pairs: the gateway, reached by its
    service name inside the project."""
    return [(f"http://litellm:{PROXY_PORT}/v1", Interp("${LITELLM_MASTER_KEY:-none}"))]


def _webui(estate: Estate) -> dict[str, Any]:
    g = estate.gateway
    assert g.webui is not None
    connections = webui_connections(estate)
    return {
        "image": g.webui.image.ref,
        "container_name": f"open-webui-{_name(g.id)}",
        "restart": "unless-stopped",
        "depends_on": ["litellm"],
        "ports": [
            Interp(
                f"${{WEBUI_BIND_HOST:-{g.webui.bind_host}}}:"
                f"${{WEBUI_PORT:-{g.webui.port}}}:{WEBUI_PORT}"
            )
        ],
        "environment": {
            # Positional pairs, `;`-separated: both lists come from one list of connections.
            "OPENAI_API_BASE_URLS": ";".join(url for url, _ in connections),
            "OPENAI_API_KEYS": Interp(";".join(key.text for _, key in connections)),
            "ENABLE_OLLAMA_API": "false",
            "WEBUI_SECRET_KEY": None,
        },
        "volumes": [{"type": "volume", "source": WEBUI_VOLUME, "target": "/app/backend/data"}],
        "labels": _labels(estate, "webui"),
    }


def _compose(estate: Estate) -> dict[str, Any]:
    services = {"litellm": _proxy(estate)}
    if estate.gateway.webui is not None:
        services["open-webui"] = _webui(estate)
    name = _name(estate.gateway.id)
    project = name if name.startswith("gateway") else f"gateway-{name}"
    doc: dict[str, Any] = {"name": project, "services": services}
    if estate.gateway.webui is not None:
        doc["volumes"] = {WEBUI_VOLUME: {}}
    return doc


def _config(estate: Estate) -> dict[str, Any]:
    return {
        "model_list": [
            {
                "model_name": r.name,
                "litellm_params": {
                    "model": f"openai/{r.served}",
                    "api_base": r.api_base,
                    "api_key": ENGINE_KEY,
                },
            }
            for r in estate.routes
        ]
    }


def _published(config: dict[str, Any]) -> list[str]:
    """Every string of the proxy's config that LiteLLM may hand to a client (all but the
    engine key it resolves for itself)."""
    out = []
    for model in config["model_list"]:
        out.append(model["model_name"])
        out += [v for k, v in model["litellm_params"].items() if k != "api_key"]
    return out


def _header(estate: Estate, envs: dict[str, SandboxedEnvironment]) -> RawYaml:
    text = (
        envs["text"].get_template("gateway/header.txt.j2").render(estate=estate, g=estate.gateway)
    )
    return RawYaml(comment_lines(text.rstrip("\n")))


def render_gateway(registry: Registry, estate: Estate) -> RenderedGateway:
    """Renders a planned estate; refuses one with errors (pure: the registry in, bytes out)."""
    if estate.errors:
        raise RegistryError(estate.errors)
    if not estate.routes:
        raise RenderError(f"gateway {estate.gateway.id}: no route to render")
    envs = environments(tuple(template_dirs(registry.root)))
    header = _header(estate, envs)
    compose_doc = _compose(estate)
    compose = (
        envs["yaml"]
        .get_template("gateway/compose.yaml.j2")
        .render(
            header=header,
            project=compose_doc["name"],
            services=compose_doc["services"],
            volumes=list(compose_doc.get("volumes", {})),
        )
        .encode()
    )
    config = (
        envs["config"]
        .get_template("gateway/config.yaml.j2")
        .render(header=header, estate=estate, api_key=ENGINE_KEY)
        .encode()
    )
    label = f"gateway {estate.gateway.id}"
    # LiteLLM reads a string that starts with os.environ/ as that variable's value; no string
    # it publishes (model names, routes) may be one, whatever the registry said.
    leaked = [s for s in _published(_config(estate)) if "os.environ" in s.lower()]
    if leaked:
        raise RenderError(f"{label}: {leaked[0]!r} would publish an environment variable")
    verify_document(f"{label}: compose.yaml", compose, compose_doc, compose=True)
    verify_document(f"{label}: config.yaml", config, _config(estate), compose=False)
    env_example = (
        envs["text"].get_template("gateway/env.example.j2").render(g=estate.gateway).encode()
    )
    return RenderedGateway(estate.gateway.id, compose, config, env_example)
