"""`profilegen gateway`: what it writes (read back by the real Compose parser), what it refuses
(located findings, exit 1, nothing written) and its usage errors (exit 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.support.cli import Run, invoke_in
from tests.support.composego import compose_config
from tests.support.openai_stub import StubEngine
from tests.support.repo import REPO

ESTATE = "qwen38-dual-estate"
GATEWAY_FILE = f"registry/gateways/{ESTATE}.yaml"


def run(*args: str) -> Run:
    return invoke_in(REPO, *args)


def _yaml(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def _line(path: Path, text: str) -> int:
    hits = [n for n, ln in enumerate(path.read_text().splitlines(), 1) if text in ln]
    assert len(hits) == 1, hits
    return hits[0]


@pytest.fixture
def scratch(repo: Path) -> Path:
    """A scratch copy of the pristine registry (it checks clean); edits stay in registry/."""
    return repo


def _edit(root: Path, rel: str, old: str, new: str) -> Path:
    path = root / rel
    text = path.read_text()
    assert text.count(old) == 1, (rel, old)
    path.write_text(text.replace(old, new))
    return path


def test_the_registry_gateway_routes_every_name_its_engines_serve(tmp_path: Path) -> None:
    result = run("gateway", ESTATE, "-o", str(tmp_path / "out"))
    assert result.code == 0, result.text
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        ".env.example",
        "compose.yaml",
        "config.yaml",
    ]
    routes = [
        (m["model_name"], m["litellm_params"]["model"], m["litellm_params"]["api_base"])
        for m in _yaml(tmp_path / "out" / "config.yaml")["model_list"]
    ]
    base = "http://host.docker.internal"
    assert routes == [
        ("qwen3.8-27b", "openai/qwen3.8-27b", f"{base}:8091/v1"),
        ("qwen3.8-27b-fp8", "openai/qwen3.8-27b-fp8", f"{base}:8091/v1"),
        ("gemma-4-31b", "openai/gemma-4-31b", f"{base}:8032/v1"),
        ("gemma-4-31b-qat-awq-int4", "openai/gemma-4-31b-qat-awq-int4", f"{base}:8032/v1"),
        # The alias reaches the engine as a name it serves (the incumbent forwarded it as is).
        ("gemma-4-31b-autoround", "openai/gemma-4-31b", f"{base}:8032/v1"),
        ("deckard-40b", "openai/deckard-40b", f"{base}:8199/v1"),
    ]
    # Without -o the config goes to stdout: the same bytes as the checked-in gateways/ copy.
    printed = run("gateway", ESTATE)
    assert printed.code == 0
    assert printed.out == (REPO / "gateways" / ESTATE / "config.yaml").read_text()
    assert (tmp_path / "out" / "config.yaml").read_text() == printed.out


def test_compose_reads_the_proxy_and_open_webui_with_matching_connection_lists(
    tmp_path: Path,
) -> None:
    assert run("gateway", ESTATE, "-o", str(tmp_path)).code == 0
    config = compose_config(tmp_path / "compose.yaml")
    proxy, webui = config["services"]["litellm"], config["services"]["open-webui"]
    assert proxy["image"].startswith("ghcr.io/berriai/litellm:v1.80.11-stable.1@sha256:")
    assert [(p["published"], p["target"]) for p in proxy["ports"]] == [("4000", 4000)]
    assert proxy["volumes"][0]["source"] == str(tmp_path / "config.yaml")
    assert proxy["volumes"][0]["target"] == "/app/config.yaml"
    assert proxy["environment"] == {
        "LITELLM_MASTER_KEY": None,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "ENGINE_API_KEY": "none",
    }
    assert proxy["extra_hosts"] == ["host.docker.internal=host-gateway"]
    assert [(p["published"], p["target"]) for p in webui["ports"]] == [("3000", 8080)]
    env = webui["environment"]
    assert env["OPENAI_API_BASE_URLS"] == "http://litellm:4000/v1"
    assert env["OPENAI_API_KEYS"] == "none"
    # With a master key, the proxy asks for it and Open WebUI sends it: one key per URL.
    keyed = compose_config(tmp_path / "compose.yaml", env={"LITELLM_MASTER_KEY": "sk-estate"})
    keyed_env = keyed["services"]["open-webui"]["environment"]
    assert keyed["services"]["litellm"]["environment"]["LITELLM_MASTER_KEY"] == "sk-estate"
    urls = keyed_env["OPENAI_API_BASE_URLS"].split(";")
    assert keyed_env["OPENAI_API_KEYS"].split(";") == ["sk-estate"] * len(urls)


def test_a_wrong_alias_is_caught_by_check_before_any_request(scratch: Path) -> None:
    """The incumbent's route forwarded a name its engine did not serve: here the gateway names
    one its member neither serves nor aliases, and nothing is generated or sent."""
    wrong = "  - profile: gemma-31b-dual\n    routes: [gemma-4-31b, gemma-4-31b-awq]\n"
    path = _edit(scratch, GATEWAY_FILE, "  - profile: gemma-31b-dual\n", wrong)
    line = _line(path, "gemma-4-31b-awq")
    with StubEngine("gemma-31b-dual", ["gemma-4-31b", "gemma-4-31b-qat-awq-int4"]) as stub:
        checked = invoke_in(scratch, "check", "--quiet")
        assert checked.code == 1
        assert (
            f"{GATEWAY_FILE}:{line}: error: [gateway-routes] route 'gemma-4-31b-awq': "
            "gemma-31b-dual (vllm-v0.27.1) serves gemma-4-31b, gemma-4-31b-qat-awq-int4 and has "
            "the gateway aliases gemma-4-31b-autoround; it does not answer to 'gemma-4-31b-awq' "
            "(name one it serves, or add 'gemma-4-31b-awq' to its serve.gateway_aliases)"
        ) in checked.out.splitlines()
        out = scratch / "out"
        refused = invoke_in(scratch, "gateway", ESTATE, "-o", str(out))
        assert refused.code == 1
        assert f"{GATEWAY_FILE}:{line}: error: [gateway-routes]" in refused.err
        assert not out.exists()
        assert stub.calls == []


def test_a_rig_whose_profiles_clash_is_refused_with_located_findings(tmp_path: Path) -> None:
    result = run("gateway", "--rig", "2x3090-pcie", "-o", str(tmp_path / "out"))
    assert result.code == 1
    assert (
        "registry/profiles/qwen36-27b-dual.yaml:14: error: [gateway-ports] port 8010 of "
        "qwen36-27b-dual on host.docker.internal is also the port of qwen-27b-dual-fast "
        "(registry/profiles/qwen-27b-dual-fast.yaml:14): they cannot all listen (give one of "
        "them another port, or leave one out of the gateway)"
    ) in result.err.splitlines()
    assert "[gateway-routes] name 'qwen3.8-27b' of qwen38-27b-dual-max is also claimed by" in (
        result.err
    )
    assert not (tmp_path / "out").exists()


def test_a_llama_cpp_profile_without_a_name_cannot_join() -> None:
    result = run("gateway", "llamacpp-gemma-12b-single-q8kxl")
    assert result.code == 1
    assert (
        "error: [gateway-routes] llamacpp-gemma-12b-single-q8kxl has no served name: "
        "llama-server answers to the path of its weights file, and a gateway routes names "
        "(give the profile serve.served_names (its --alias))"
    ) in result.err


def test_profiles_of_one_rig_make_a_gateway(tmp_path: Path) -> None:
    result = run("gateway", "--rig", "1x5090", "--webui", "-o", str(tmp_path))
    assert result.code == 0, result.text
    config = compose_config(tmp_path / "compose.yaml")
    assert config["name"] == "gateway-1x5090"
    assert set(config["services"]) == {"litellm", "open-webui"}
    names = [m["model_name"] for m in _yaml(tmp_path / "config.yaml")["model_list"]]
    assert names and len(names) == len(set(names))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "error: name a gateway (registry/gateways/), PROFILEs or --rig RIG"),
        (("--rig", "2x3091-pcie"), "error: no rig '2x3091-pcie' (did you mean '2x3090-pcie'?)"),
        (
            ("qwen38-27b-dual-max", "--rig", "1x3090"),
            "error: profile 'qwen38-27b-dual-max' runs on 2x3090-pcie, not 1x3090",
        ),
        (
            (ESTATE, "gemma-31b-dual"),
            f"error: gateway '{ESTATE}' names its own members and Open WebUI; give it alone",
        ),
        (
            (ESTATE, "--engine-host", "not a host"),
            "error: --engine-host 'not a host' is not a host name or address",
        ),
        (("qwen38-27b-dual-mux",), "error: no profile 'qwen38-27b-dual-mux'"),
    ],
)
def test_usage_errors_exit_2(args: tuple[str, ...], message: str) -> None:
    result = run("gateway", *args)
    assert result.code == 2
    assert result.err.startswith(message), result.err


def test_registry_strings_reach_compose_and_config_quoted(scratch: Path, tmp_path: Path) -> None:
    path = scratch / GATEWAY_FILE
    title = 'Estate: ${HOME} "quoted" #not-a-comment'
    text = path.read_text().replace(
        'title: "One endpoint on a dual-3090 host: Qwen3.8-27B FP8, Gemma 4 31B and Deckard 40B"',
        'title: "Estate: ${HOME} \\"quoted\\" #not-a-comment"',
    )
    path.write_text(text)
    out = tmp_path / "out"
    assert invoke_in(scratch, "gateway", ESTATE, "-o", str(out)).code == 0
    config = compose_config(out / "compose.yaml", env={"HOME": "/nowhere"})
    assert config["services"]["litellm"]["labels"]["io.profilegen.title"] == title
    assert _yaml(out / "config.yaml")["model_list"][0]["model_name"] == "qwen3.8-27b"


@pytest.mark.parametrize(
    ("old", "new", "finding"),
    [
        (
            "  port: 3000\n",
            "  port: 4000\n",
            "error: [gateway-ports] Open WebUI's port 4000 is the gateway's own port "
            "(give it another port)",
        ),
        (
            "profile: gemma-31b-dual\n",
            "profile: gemma-31b-duel\n",
            "error: [reference] profile 'gemma-31b-duel' is not defined "
            "(did you mean 'gemma-31b-dual'?)",
        ),
        (
            "profile: deckard40b-dual-mtp\n",
            "profile: qwen3.8-27b-fp8-vllm-v0.27.1-base\n",
            "error: [reference] profile 'qwen3.8-27b-fp8-vllm-v0.27.1-base' is abstract: "
            "it never serves (name a profile that extends it)",
        ),
    ],
)
def test_a_broken_registry_gateway_is_refused_at_its_line(
    scratch: Path, old: str, new: str, finding: str
) -> None:
    line = _line(_edit(scratch, GATEWAY_FILE, old, new), new.rstrip("\n"))
    result = invoke_in(scratch, "gateway", ESTATE, "-o", str(scratch / "out"))
    assert result.code == 1
    assert f"{GATEWAY_FILE}:{line}: {finding}" in result.err.splitlines()
    assert not (scratch / "out").exists()


def test_render_all_refuses_a_broken_gateway_before_writing(scratch: Path) -> None:
    _edit(scratch, "registry/profiles/deckard40b-dual-mtp.yaml", "\nport: 8199\n", "\nport: 8091\n")
    before = (scratch / "gateways" / ESTATE / "config.yaml").read_bytes()
    result = invoke_in(scratch, "render", "--all")
    assert result.code == 1
    assert "[gateway-ports] port 8091 of deckard40b-dual-mtp" in result.err
    # The gateway's finding is the one about the port: port-clash (two models on one port)
    # says no more.
    assert "[port-clash]" not in result.err
    assert (scratch / "gateways" / ESTATE / "config.yaml").read_bytes() == before
    assert (
        "${PORT:-8199}"
        in (scratch / "compose" / "deckard40b-dual-mtp" / "compose.yaml").read_text()
    )
