"""`profilegen explain`: text and JSON output, refusals, and bad -e input."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import Invoke


def test_text_output_lists_one_flag_per_line(invoke: Invoke) -> None:
    run = invoke("explain", "qwen38-27b-dual-fast", "-e", "SPEC=off")
    assert run.code == 0, run.text
    lines = run.out.splitlines()
    assert lines[0] == "qwen38-27b-dual-fast [SPEC=off] on 2 GPU(s), no NVLink"
    assert lines[1] == "runs: vllm"
    assert "  --tensor-parallel-size 2" in lines
    assert "  --disable-custom-all-reduce" in lines
    assert not any("--speculative-config" in line for line in lines)
    assert "  VLLM_MARLIN_INPUT_DTYPE=int8" in lines
    assert "patch steps (each file found at its mount; applied only in the container):" in lines
    assert "  script pr48375 install.sh bash required=1" in lines


def test_json_keys(invoke: Invoke) -> None:
    run = invoke("explain", "qwen38-27b-dual-max", "--format", "json", "-e", "SPEC_N=5")
    assert run.code == 0, run.text
    data = json.loads(run.out)
    assert {"argv", "env", "patches", "exe", "launched"} <= set(data)
    spec = data["argv"][data["argv"].index("--speculative-config") + 1]
    assert json.loads(spec) == {"method": "mtp", "num_speculative_tokens": 5}
    assert data["env"]["NCCL_P2P_DISABLE"] == "1"
    assert data["patches"][0][:3] == ["verify", "pr48375", "install.sh"]


def test_nvlink_changes_the_environment(invoke: Invoke) -> None:
    run = invoke("explain", "qwen38-27b-dual-max", "--nvlink", "--format", "json")
    data = json.loads(run.out)
    assert data["env"]["NCCL_P2P_LEVEL"] == "NVL" and "NCCL_P2P_DISABLE" not in data["env"]
    assert data["env"]["PYTORCH_CUDA_ALLOC_CONF"] == "max_split_size_mb:512"
    assert "--disable-custom-all-reduce" not in data["argv"]


def test_a_refusal_names_exit_code_and_message(invoke: Invoke) -> None:
    run = invoke("explain", "qwen38-27b-dual-dflash15-fast", "-e", "GPU_MEMORY_UTILIZATION=0.95",
                 "--format", "json")  # fmt: skip
    assert run.code == 1
    data = json.loads(run.out)
    assert data["launched"] is False and data["exit_code"] == 2
    assert data["message"] == (
        "GPU_MEMORY_UTILIZATION=0.95 exceeds 0.85 on rig 2x3090-pcie-x16x4-wsl2; refusing to boot"
    )
    assert data["deviations"] and "argv" not in data


@pytest.mark.parametrize(
    ("profile", "engine", "exe"),
    [
        ("qwen38-27b-single-iq4xs", "llama.cpp", "llama-server"),
        ("qwen36-27b-dual-eagle3", "sglang", "python3"),
    ],
)
def test_every_engine_explains(invoke: Invoke, profile: str, engine: str, exe: str) -> None:
    run = invoke("explain", profile, "--format", "json")
    data = json.loads(run.out)
    assert (data["engine"], data["exe"]) == (engine, exe), run.text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-e", "SPEC"], "error: -e SPEC: expected VAR=VALUE"),
        (["-e", "1X=2"], "error: -e 1X=2: '1X' is not a variable name"),
        (
            ["-e", "SPEC_M=3"],
            "error: -e SPEC_M: qwen38-27b-dual-fast reads no variable SPEC_M (did you mean SPEC_N?)",
        ),
        (
            ["-e", "FOO=1"],
            "error: -e FOO: qwen38-27b-dual-fast reads no variable FOO (see `profilegen show`)",
        ),
    ],
)
def test_bad_variables_are_usage_errors(invoke: Invoke, args: list[str], message: str) -> None:
    run = invoke("explain", "qwen38-27b-dual-fast", *args)
    assert run.code == 2
    assert run.err.strip() == message


# What a script hands its engine through `exec`, awkward values included, as the stub records it.
_HAND_OVER = r"""set -euo pipefail
export PG_MULTI=$'one\ntwo' PG_EQ='a=b=c' PG_EMPTY=
export PG_DECLARED_ONLY
unset PG_DROPPED
gpus=$(nvidia-smi -L | wc -l)
topo=$(nvidia-smi topo -m)
p2p=$(nvidia-smi topo -p2p r)
export PG_GPUS=$gpus PG_TOPO=$topo PG_P2P=$p2p
{launch} vllm serve 'two words' $'tab\there' ''
"""


@pytest.mark.parametrize("nvlink", [False, True])
def test_the_engine_stub_records_what_exec_hands_over(nvlink: bool) -> None:
    from profilegen.explain.sandbox import Job, Launch, Layout, Mount, run_jobs

    script = _HAND_OVER.replace("{launch}", "exec").encode()
    layout = Layout({"t/run.sh": script}, (), (Mount("t", "/t"),))
    env = (("PATH", "/usr/local/bin:/usr/bin:/bin"), ("PG_DROPPED", "x"), ("PG_KEPT", "kept"))
    launch = Launch(("/bin/bash", "-p", "/t/run.sh"), env, 3, nvlink)
    ((result,),) = run_jobs([Job(layout, (launch,), ("/usr/local/bin/vllm",))])
    assert result.exit_code == 0, result.stderr
    env_seen = dict(result.env)
    assert (result.exe, result.argv) == ("vllm", ("serve", "two words", "tab\there", ""))
    assert env_seen["PG_MULTI"] == "one\ntwo" and env_seen["PG_EQ"] == "a=b=c"
    assert env_seen["PG_KEPT"] == "kept"
    assert "PG_DROPPED" not in env_seen and "PG_DECLARED_ONLY" not in env_seen
    assert env_seen["PG_GPUS"] == "3" and ("NV4" in env_seen["PG_TOPO"]) is nvlink


def test_a_mount_inside_an_earlier_one_shadows_it_in_order() -> None:
    """Mounts that land inside an earlier mount are applied one by one, as Compose does."""
    from profilegen.explain.sandbox import Job, Launch, Layout, Mount, run_jobs

    script = b'read -r word </t/inner/word.txt\nexec vllm serve "$word" "$(cat /t/kept.txt)"\n'
    files = {"d/run.sh": script, "d/kept.txt": b"kept\n", "d/inner/word.txt": b"under\n"}
    files["word.txt"] = b"over\n"
    mounts = (Mount("d", "/t"), Mount("word.txt", "/t/inner/word.txt"))
    launch = Launch(
        ("/bin/bash", "-p", "/t/run.sh"), (("PATH", "/usr/local/bin:/usr/bin"),), 1, False
    )
    ((result,),) = run_jobs([Job(Layout(files, (), mounts), (launch,), ("/usr/local/bin/vllm",))])
    assert (result.exe, result.argv) == ("vllm", ("serve", "over", "kept")), result.stderr


_LOOK = b"""for at in /etc/pg-leak/x/f.txt /models/pg-leak /srv/pg-leak/t/inner/w.txt /srv/pg-leak; do
  [[ ! -e $at ]] || echo "sees $at" >&2
done
exec vllm serve looked
"""


@pytest.mark.parametrize("nested", [False, True], ids=["one-fstab", "one-by-one"])
def test_a_job_sees_none_of_the_mount_points_an_earlier_job_of_its_box_made(
    nested: bool,
) -> None:
    """Jobs share a box: what one mounted, and the folders and files made to mount it on,
    must be gone for the next, whose view is only its own mounts (as when it runs alone)."""
    from profilegen.explain.sandbox import Job, Launch, Layout, Mount, run_jobs

    files = {"e/run.sh": b"exec vllm serve first\n", "f.txt": b"patch\n", "d/w.txt": b"w\n"}
    mounts = [Mount("e", "/opt/pg-e"), Mount("f.txt", "/etc/pg-leak/x/f.txt")]
    mounts.append(Mount("d", "/models/pg-leak"))
    if nested:
        mounts += [
            Mount("d", "/srv/pg-leak/t", read_only=False),
            Mount("f.txt", "/srv/pg-leak/t/inner/w.txt"),
        ]
    first = Layout(files, ("d",), tuple(mounts))
    second = Layout({"e/run.sh": _LOOK}, (), (Mount("e", "/opt/pg-e"),))
    env = (("PATH", "/usr/local/bin:/usr/bin:/bin"),)
    launch = Launch(("/bin/bash", "-p", "/opt/pg-e/run.sh"), env, 1, False)
    jobs = [Job(layout, (launch,), ("/usr/local/bin/vllm",)) for layout in (first, second)]
    (ran,), (looked,) = run_jobs(jobs, workers=1)
    assert ran.argv == ("serve", "first"), ran.stderr
    assert (looked.argv, looked.stderr) == (("serve", "looked"), "")
