"""The catalogue at one revision, entry by entry, as registry entities of ours."""

from __future__ import annotations

from typing import Any

from ...errors import UsageError
from ...families import family as engine_family
from .catalog import Entry
from .compose import ComposeFile, parse_compose
from .engines import BUILDS, EngineBuild
from .entities import Catalogue, Entities
from .envmap import envelope_env
from .flags import DEFAULT_SPELLING, read_flags
from .profile import (
    STATUS,
    container,
    drafter_facts,
    envelope,
    environment,
    gpu_pin,
    mounts,
    profile_id,
    rig_id,
    runtime,
    serve,
)
from .script import ScriptFacts, read_script
from .source import Tree
from .words import default_value


class Importer:
    def __init__(
        self, tree: Tree, rev: str | None, pinned: dict[str, list[tuple[str, str]]] | None = None
    ) -> None:
        self.out = Catalogue(rev)
        self.refs = Entities(tree, self.out, pinned)
        self.tree = tree
        self.spellings: dict[str, dict[str, str]] = {}

    def add(self, entry: Entry) -> None:
        path = entry.compose_path
        text = self.tree.text(path) if path else None
        if text is None:
            raise UsageError(
                f"{entry.key}: compose file {path or '(none)'} is missing at {self.out.rev or 'the work tree'}"
            )
        compose = parse_compose(path, text)
        build_dir = path.split("/")[2] if path.startswith("models/") else ""
        if build_dir not in BUILDS:
            raise UsageError(
                f"{entry.key}: {path}: engine folder {build_dir!r} is not one profilegen imports"
            )
        pid = profile_id(entry.key, str(entry.get("model")), set(self.out.profiles))
        data, notes, spellings = self._profile(entry, compose, build_dir, pid)
        self.out.profiles[pid] = data
        self.spellings[pid] = spellings
        for message in notes:
            kind = "escape" if message.startswith(("not modelled", "conditional")) else "note"
            self.out.note(entry.key, kind, message)

    def finish(self) -> Catalogue:
        """Each profile spells a flag as its engine mostly does, or says how it differs."""
        for pid, spellings in self.spellings.items():
            data = self.out.profiles[pid]
            engine = self.out.engines[data["engine"]].entity().get("spellings", {})
            own = {
                f: s for f, s in spellings.items() if engine.get(f, DEFAULT_SPELLING.get(f)) != s
            }
            if own:
                data["spellings"] = dict(sorted(own.items()))
        return self.out

    def _profile(
        self, entry: Entry, compose: ComposeFile, build_dir: str, pid: str
    ) -> tuple[dict[str, Any], list[str], dict[str, str]]:
        family = BUILDS[build_dir][0]
        facts = read_flags(compose.words, family)
        script = read_script(compose.script)
        notes = list(facts.notes) + [
            f"script line not modelled: {line}" for line in script.not_modelled
        ]
        engine = self.refs.engine(build_dir, compose)
        model_id = str(entry.get("model"))
        data: dict[str, Any] = {"id": pid, "upstream_key": entry.key}
        if self.out.rev:
            data["upstream_rev"] = self.out.rev
        env = envelope(facts)
        data["title"] = self._title(entry, env, pid)
        data["status"] = STATUS.get(str(entry.get("status", "experimental")), "experimental")
        data["model"] = model_id
        data["weights"] = self.refs.weights(
            entry, model_id, facts.values.get("weights_path"), engine, notes
        )
        mmproj = facts.values.get("mmproj_path")
        if mmproj:
            data["mmproj"] = self.refs.file_artifact(model_id, str(mmproj), engine, "mmproj", notes)
        data["engine"] = engine.id
        data["rig"] = rig_id(entry, compose.path, int(env.get("tp", 1)))
        self.out.rigs.add(data["rig"])
        self._envelope_defaults(env, data, family, notes)
        self._placement(entry, env)
        drafter = self.refs.drafter(entry, facts, script, compose, engine, notes)
        placement = drafter_facts(facts)
        if drafter:
            data["drafter"] = {**drafter, **placement}
        else:
            for path in placement:  # a draft setting without a drafter: kept as it was
                words = facts.words[f"drafter.{path}"]
                facts.extra += words
                notes.append(
                    "not modelled, kept as extra arguments (no drafter): " + " ".join(words)
                )
        rt = runtime(facts)
        if script.lmcache:
            rt["lmcache"] = dict(script.lmcache)
        if rt:
            data["runtime"] = rt
        data["patches"] = self.refs.patches(compose, script, engine.id, notes)
        self._network(entry, data, compose, script)
        self._all_reduce(env, script, family)
        data["envelope"] = env
        self._serve(entry, data, facts, script, compose, family)
        self._switches(data, compose, script)
        self._environment(data, compose, engine, family, notes)
        self._declared(data, facts)
        data.update(container(compose))
        self.refs.engine_usage(engine, data, facts)
        self._drifts(entry, data, compose)
        return data, notes, dict(facts.spellings)

    @staticmethod
    def _declared(data: dict[str, Any], facts: Any) -> None:
        """Upstream tunable names kept as aliases, and what profilegen passes differently."""
        if facts.aliases:
            data["tunable_aliases"] = {k: list(v) for k, v in sorted(facts.aliases.items())}
        deviations = list(facts.deviations)
        missing = [flag for flag in ("host", "port") if flag not in facts.values]
        if missing:
            deviations.append({
                "what": "passes " + " and ".join(f"--{m}" for m in missing) + " explicitly",
                "reason": "the engine's defaults (all interfaces, its usual port), written out "
                "so that the published port is stated in one place",
            })  # fmt: skip
        if deviations:
            data["deviations"] = deviations

    @staticmethod
    def _placement(entry: Entry, env: dict[str, Any]) -> None:
        """Where weights live when the cards are not enough: offload mode and host RAM."""
        if entry.get("offload") == "n-cpu-moe":
            env["offload"] = "cpu-experts"
        elif entry.get("offload") in ("uva", "prefetch"):
            env["offload"] = entry.get("offload")
        if isinstance(entry.get("host_ram_gb"), int | float):
            env["host_ram"] = {"value": entry.get("host_ram_gb"), "unit": "GB"}

    @staticmethod
    def _network(
        entry: Entry, data: dict[str, Any], compose: ComposeFile, script: ScriptFacts
    ) -> None:
        host, port, _ = compose.port()
        data["port"] = port if port else entry.get("default_port", 8000)
        if host and host != "0.0.0.0":
            data["bind_host"] = host
        if script.nvlink_detection:
            raw = compose.env.get("NVLINK_MODE")
            data["nvlink_mode"] = (raw and default_value(raw)) or "auto"

    @staticmethod
    def _all_reduce(env: dict[str, Any], script: ScriptFacts, family: str) -> None:
        if script.custom_all_reduce == "off":
            env["custom_all_reduce"] = "off"
        elif (
            script.custom_all_reduce is None
            and not engine_family(family).single_process
            and not script.nvlink_detection
        ):
            env["custom_all_reduce"] = "on"

    @staticmethod
    def _serve(
        entry: Entry,
        data: dict[str, Any],
        facts: Any,
        script: ScriptFacts,
        compose: ComposeFile,
        family: str,
    ) -> None:
        data["serve"] = serve(facts, script, compose, family)
        if facts.extra:
            data["serve"]["extra_args"] = list(facts.extra)
        aliases = [str(a) for a in entry.get("serve_aliases", []) if a]
        if aliases:
            data["serve"]["gateway_aliases"] = aliases

    @staticmethod
    def _environment(
        data: dict[str, Any],
        compose: ComposeFile,
        engine: EngineBuild,
        family: str,
        notes: list[str],
    ) -> None:
        """Tunables, envelope facts set through env, and the container env left over."""
        tunables = gpu_pin(compose)
        if tunables:
            data["tunables"] = tunables
        own = {t["env"] for t in engine.data["tunables"]}
        data["envelope"].update(envelope_env(compose.env, engine.data["tunables"]))
        env_vars = {
            k: v
            for k, v in environment(compose, family, notes).items()
            if k not in own or k not in compose.env
        }
        engine_env = engine.data.get("env", {})
        for name in engine_env:
            # A variable the engine's profiles usually get but this compose does not set.
            env_vars.setdefault(name, None)
        data["env"] = {
            k: v for k, v in env_vars.items() if k not in engine_env or engine_env[k] != v
        }
        cache = mounts(compose)
        if cache:
            data["mounts"] = cache

    def _envelope_defaults(
        self, env: dict[str, Any], data: dict[str, Any], family: str, notes: list[str]
    ) -> None:
        """What the engine does when the command line is silent, written down as facts."""
        if "tp" not in env:
            env["tp"] = int(data["rig"].split("x", 1)[0])  # llama.cpp spreads over every card
        if "max_model_len" not in env:
            arch = self.out.models[data["model"]]["architecture"]
            env["max_model_len"] = arch["max_position_embeddings"]
            if engine_family(family).auto_context:
                env["auto_context"] = True  # the engine sizes it; no flag, as upstream
            else:
                notes.append("no context flag: the model's maximum, which profilegen passes")
        env.setdefault("max_num_seqs", 1)

    def _switches(self, data: dict[str, Any], compose: ComposeFile, script: Any) -> None:
        """W4A8 on only where the compose exports int8 activations by default."""
        if not any(p.startswith("w4a8") for p in data["patches"]):
            return
        raw = compose.env.get("W4A8")
        exported = script.w4a8 and (raw is None or default_value(raw) not in ("0", "false"))
        on = exported or compose.env.get("VLLM_MARLIN_INPUT_DTYPE") == "int8"
        if not on:
            data["switches"] = {"W4A8": False}

    def _title(self, entry: Entry, env: dict[str, Any], pid: str) -> str:
        model = self.refs.up_models.get(str(entry.get("model")), {})
        name = str(model.get("display_name") or entry.get("model"))
        parts = [name, str(entry.get("weights_variant"))]
        if entry.get("drafter"):
            parts.append(f"+ {entry.get('drafter')}")
        tp = env.get("tp")
        parts.append(f"TP{tp}" if tp else pid)
        return " ".join(parts)

    def _drifts(self, entry: Entry, data: dict[str, Any], compose: ComposeFile) -> None:
        """Where the upstream registry row and its compose disagree: the compose wins."""
        env = data["envelope"]
        for field_name, ours, theirs in (
            ("tp", env.get("tp"), entry.get("tp")),
            ("max_ctx", env.get("max_model_len"), entry.get("max_ctx")),
            ("max_num_seqs", env.get("max_num_seqs"), entry.get("max_num_seqs")),
            ("mem_util", env.get("gpu_memory_utilization"), entry.get("mem_util")),
            ("default_port", data.get("port"), entry.get("default_port")),
        ):
            if ours is not None and theirs is not None and _number(ours) != _number(theirs):
                self.out.note(entry.key, "drift",
                              f"registry {field_name} {theirs} vs compose {ours} ({compose.path}); imported the compose's")  # fmt: skip
        header_tp = compose.header.get("tensor-parallel")
        if header_tp and env.get("tp") is not None and _number(header_tp) != _number(env["tp"]):
            self.out.note(entry.key, "drift",
                          f"compose header says Tensor-parallel {header_tp}, its command runs TP {env['tp']} ({compose.path}); imported the command's")  # fmt: skip
        pinned = (
            self.refs.up_engines.get(str(entry.get("engine")), {}).get("install", {}).get("spec")
        )
        if pinned and compose.image and pinned != compose.image:
            self.out.note(entry.key, "drift",
                          f"engine {entry.get('engine')} pins {pinned}, the compose runs {compose.image}; imported the compose's")  # fmt: skip


def _number(value: Any) -> float | str:
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)
