"""What a profile's Kubernetes pods will run: the same script, run with the pod's environment.

The environment is the tunables ConfigMap overlaid with the container's own variables (as
the kubelet builds it); a scenario edits the ConfigMap. An optional Secret that is absent
leaves its variable unset. A LeaderWorkerSet pod also gets the variables LWS injects.
"""

from __future__ import annotations

from ..errors import UsageError, suggest
from ..model import Profile
from ..registry import Registry
from ..render.targets.k8s import RenderedK8s
from ..render.targets.k8s_patches import SCRIPTS_DIR
from .boxscripts import RECORDERS
from .core import ENV_NAME, Explanation, Scenario, _explanation
from .layout import IMAGE_ENV, lay_out_weights
from .sandbox import Job, Launch, Layout, Mount, run_jobs, stub_path

ROLES = {"server": "entrypoint.sh", "leader": "leader.sh", "worker": "worker.sh"}


def pod_env(rendered: RenderedK8s, role: str, scenario: Scenario) -> dict[str, str]:
    """The container's environment at start-up, with the scenario's ConfigMap edits."""
    known = set(rendered.tunables)
    fixed = {item["name"] for item in rendered.container_env(role)}
    for name, value in scenario.env:
        if not ENV_NAME.fullmatch(name) or "\0" in value:
            raise UsageError(f"-e {name}: not a variable name and value")
        if name in fixed:
            raise UsageError(f"-e {name}: the manifest sets it on the container, not a tunable")
        if name not in known:
            close = suggest(name, sorted(known))
            hint = f"did you mean {close}?" if close else "see the tunables ConfigMap"
            raise UsageError(f"-e {name}: the tunables ConfigMap has no {name} ({hint})")
    env = {**rendered.tunables, **dict(scenario.env)}
    for item in rendered.container_env(role):
        if "value" in item:
            env[item["name"]] = item["value"].replace("$$", "$")
    if rendered.layout.multi_node:
        env.update(
            {
                "LWS_LEADER_ADDRESS": f"{rendered.name}-0.{rendered.name}",
                "LWS_GROUP_SIZE": str(rendered.layout.nodes),
                "LWS_WORKER_INDEX": "0" if role == "leader" else "1",
            }
        )
    return env


def pod_layout(rendered: RenderedK8s) -> Layout:
    """The pod's files: the scripts ConfigMap at its mount, each patch file at its target, and
    stand-ins for the weights the loader puts on the model volume."""
    files = {f"scripts/{name}": text.encode() for name, text in rendered.scripts.items()}
    files["scripts/helpers.sh"] += RECORDERS.encode()
    mounts = [Mount("scripts", SCRIPTS_DIR)]
    for index, patch in enumerate(rendered.plan.ctx.manifest.patches):
        for f in patch.files:
            files[f"patches/{index}/{f.path}"] = b""
        if patch.mount_file:
            mounts.append(Mount(f"patches/{index}/{patch.files[0].path}", patch.mount_target))
        else:
            mounts.append(Mount(f"patches/{index}", patch.mount_target))
    lay_out_weights(files, mounts, rendered.scripts.values())
    return Layout(files, (), tuple(mounts))


def explain_k8s(
    registry: Registry, profile: Profile, rendered: RenderedK8s, role: str, scenario: Scenario
) -> Explanation:
    """Runs one role's script (`server`, `leader` or `worker`) under the stub engines."""
    if ROLES.get(role) not in rendered.scripts:
        raise UsageError(
            f"{profile.id} has no {role} pod here (roles: {', '.join(_roles(rendered))})"
        )
    engine = registry.engines[profile.engine]
    binary = "ray" if role == "worker" else engine.binary
    env = {**IMAGE_ENV, **pod_env(rendered, role, scenario)}
    gpus = scenario.gpus or rendered.layout.gpus_per_pod
    argv = ("/bin/bash", "-p", f"{SCRIPTS_DIR}/{ROLES[role]}")
    launch = Launch(argv, tuple(sorted(env.items())), gpus, scenario.nvlink)
    # A leader starts the Ray head and waits for its group (Python, with Ray) before the
    # engine: stubs too, whose records the engine's own replaces.
    helpers = {"ray", "python3"} if role == "leader" else {"ray"}
    engines = tuple(sorted(stub_path(b) for b in {binary, *helpers}))
    ((run,),) = run_jobs([Job(pod_layout(rendered), (launch,), engines)])
    return _explanation(profile, scenario, gpus, engine.kind, run)


def _roles(rendered: RenderedK8s) -> list[str]:
    return [role for role, key in ROLES.items() if key in rendered.scripts]
