"""Corpus: what a registry puts in the container (issue: hardening round 2, items 1-6, 15).

Reserved variables, mounts over the engine's paths, engine binaries that are not commands, a
secret the gateway would publish, a SPEC typo, and text that would forge or hide output. The
cases that name a marker file prove nothing a registry derives ran on the host: the marker
(beside the case's registry) must not exist after the run.
"""

from __future__ import annotations

from pathlib import Path

from tests.hostile.build import PROFILE, Case, Setup, edit, rerender

ENGINE = "registry/engines/vllm-test.yaml"
CHILD = "registry/profiles/tiny-chat-long.yaml"
MARKER = "host-was-written"
RESERVED_HINT = "remove it from env"


def marker_env(name: str) -> Setup:
    """`env: {NAME: "$(touch <marker>)"}` on the profile, the marker beside the registry."""

    def apply(root: Path) -> None:
        command = f"$(touch {root.parent / MARKER})"
        text = (root / PROFILE).read_text()
        (root / PROFILE).write_text(text + f'env:\n  {name}: "{command}"\n')

    return apply


def env_line(name: str, value: str) -> Setup:
    return edit(PROFILE, "bind_host: 127.0.0.1", f"bind_host: 127.0.0.1\nenv:\n  {name}: {value}")


INHERITED = " (inherited by tiny-chat-long)"


def reserved(name: str, line: int, reason: str, path: str = PROFILE) -> str:
    inherited = INHERITED if path == PROFILE else ""
    return (
        f"{path}:{line}: error: [reserved-env] env: {name} is reserved: {reason}{inherited} "
        f"({RESERVED_HINT})"
    )


BASH = "bash reads it as it starts or runs the entrypoint"
LOADER = "the dynamic loader reads it (it can load code into every process)"
PYTHON = "Python reads it as it starts (it can run code in the engine)"
SECRET = (
    "it carries the API key, a secret: the rig owner sets API_KEY or API_KEY_FILE on the "
    "host, never the registry"
)
STEERS = "it steers the entrypoint itself (where patches are found and applied)"


def _env_cases() -> list[Case]:
    simple = [
        ("SHELLOPTS", "xtrace", BASH),
        ("PS4", "'$(id)'", BASH),
        ("IFS", "x", BASH),
        ("PATH", "/nonexistent", BASH),
        ("PROMPT_COMMAND", "id", BASH),
        ("ENV", "/x", BASH),
        ("LD_PRELOAD", "/x.so", LOADER),
        ("GCONV_PATH", "/x", LOADER),
        ("PYTHONSTARTUP", "/x.py", PYTHON),
        ("API_KEY", "hunter2", SECRET),
        ("VLLM_API_KEY", "hunter2", SECRET),
        ("PROFILEGEN_PATCH_ROOT", "/nowhere", STEERS),
        ("TP", '"4"', "the entrypoint sets it from `envelope.tp`: set that instead"),
        ("SPEC_N", '"9"', "the entrypoint sets it from `drafter.width`: set that instead"),
        ("SPEC", "off", "the entrypoint sets it itself, so a value here would be replaced at boot"),
    ]
    return [
        Case(
            f"reserved-env-{name.lower().replace('_', '-')}",
            setup=(env_line(name, value), rerender),
            findings=(reserved(name, 22, reason),),
        )
        for name, value, reason in simple
    ]


def _host_cases() -> list[Case]:
    bash_env = reserved("BASH_ENV", 26, BASH)  # env: goes after the base profile's 24 lines
    alone = bash_env.replace(INHERITED, "")  # `render PROFILE` looks at that profile only
    return [
        # The trial's critical case: every command that renders or explains the profile.
        *(
            Case(
                f"bash-env-never-runs-{'-'.join(a.strip('{}') for a in args)}",
                setup=(marker_env("BASH_ENV"),),
                args=args,
                findings={"check": (bash_env,), "render": (alone,)}.get(args[0], ()),
                code=0 if args[0] == "explain" else 1,
                absent=(MARKER,),
            )
            for args in (
                ("check",),
                ("render", "tiny-chat"),
                ("render", "tiny-chat", "-o", "{out}"),
                ("explain", "tiny-chat"),
                ("explain", "tiny-chat", "--target", "k8s"),
            )
        ),
        Case(
            "bash-env-never-runs-render-all",
            setup=(marker_env("BASH_ENV"),),
            args=("render", "--all"),
            findings=(bash_env,),
            absent=(MARKER,),
        ),
        Case(
            "bash-env-on-an-engine",
            setup=(
                edit(ENGINE, "binary: vllm", 'binary: vllm\nenv:\n  BASH_ENV: "$(id)"'),
                rerender,
            ),
            findings=(reserved("BASH_ENV", 9, BASH, ENGINE),),
        ),
    ]


def _mount(key: str, container: str) -> Setup:
    return edit(
        PROFILE,
        "bind_host: 127.0.0.1",
        f"bind_host: 127.0.0.1\nmounts:\n  {key}:\n    host: ./cache/x\n    container: {container}",
    )


def _mount_cases() -> list[Case]:
    def finding(key: str, container: str, what: str) -> str:
        return (
            f"{PROFILE}:24: error: [reserved-mount] mounts.{key}: {container} lands on {what}, "
            f"which would hide it{INHERITED} (mount somewhere else)"
        )

    rows = [
        ("models", "/root/.cache/huggingface", "the model mount"),
        ("inside-models", "/root/.cache/huggingface/tiny", "the model mount"),
        ("above-models", "/root/.cache", "the model mount"),
        ("scripts", "/profilegen", "the entrypoint's folder"),
        ("patch", "/etc/profilegen/patches/tiny-fix", "the mount of patch tiny-fix"),
        ("usr", "/usr", "a system folder of the image"),
    ]
    return [
        Case(
            f"mount-onto-{key}",
            setup=(_mount(key, target), rerender),
            findings=(finding(key, target, what),),
        )
        for key, target, what in rows
    ]


def _schema_cases() -> list[Case]:
    not_a_command = (
        "{!r} is not a command: give a name the image's PATH finds (vllm) or an absolute path "
        "without . or .. steps (/app/llama-server), never an option"
    )
    secret_ref = (
        "'os.environ/ENGINE_API_KEY' names an environment variable the way LiteLLM reads one "
        "(os.environ/...): the gateway would publish its value"
    )
    return [
        *(
            Case(
                f"engine-binary-{label}",
                setup=(edit(ENGINE, "binary: vllm", f"binary: {value!r}"),),
                findings=(f"{ENGINE}:7: error: [schema] binary: " + not_a_command.format(value),),
            )
            for label, value in (("option", "-c"), ("dot-dot", "vllm/.."), ("relative", "bin/vllm"))
        ),
        Case(
            "gateway-alias-names-a-secret",
            setup=(
                edit(
                    PROFILE,
                    "bind_host: 127.0.0.1",
                    "bind_host: 127.0.0.1\nserve:\n  gateway_aliases: [os.environ/ENGINE_API_KEY]",
                ),
            ),
            # Its child is not checked again: the mistake is in this file alone.
            findings=(f"{PROFILE}:22: error: [schema] serve.gateway_aliases.0: {secret_ref}",),
        ),
    ]


def container_cases() -> list[Case]:
    return [
        *_env_cases(),
        *_host_cases(),
        *_mount_cases(),
        *_schema_cases(),
        *text_cases(),
        Case(
            "spec-typo-refuses",
            args=("explain", "tiny-chat", "-e", "SPEC=of"),
            says=("REFUSED with exit code 1: SPEC must be off (or on, or unset), got 'of'",),
        ),
        *boot_limit_cases(),
    ]


def boot_limit_cases() -> list[Case]:
    """What a rig owner sets that the entrypoint must refuse in words, not crash on or pass."""
    key = "sk-first\nsk-second"
    return [
        # ~100 KB made bash's pattern match overflow its stack: exit 139, nothing said.
        Case(
            "a-100-kb-tunable-is-refused-in-words",
            args=("explain", "tiny-chat", "-e", "MAX_MODEL_LEN=" + "9" * 100_000),
            says=(
                "REFUSED with exit code 1: MAX_MODEL_LEN must be at most 64 characters long, "
                "got 100000",
            ),
        ),
        Case(
            "a-number-past-float-range-is-refused",
            args=("explain", "tiny-chat", "-e", "MAX_MODEL_LEN=1" + "0" * 39),
            says=(
                "REFUSED with exit code 1: MAX_MODEL_LEN must be a finite number at most "
                f"9,007,199,254,740,992 in size, got '1{'0' * 39}'",
            ),
        ),
        Case(
            "an-api-key-of-two-lines-is-refused-unshown",
            args=("explain", "tiny-chat", "-e", f"API_KEY={key}"),
            says=(
                "REFUSED with exit code 1: API_KEY holds a control character (a line break, a "
                "tab or the like): a key is one line of printable characters; refusing to boot",
            ),
            never=("sk-first", "sk-second"),
        ),
    ]


BIDI = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: shows text reversed where it is printed raw
ZERO_WIDTH = "\u200b"


def text_cases() -> list[Case]:
    """Registry text that would forge a line of output or hide what it says."""
    forged = "a\nb.yaml:1: error: [schema] forged"
    shown = "registry/profiles/a\\x0ab.yaml:1: error: [schema] forged.yaml"
    modeline = "# yaml-language-server: $schema=../../schema/profile.schema.json"
    forged_findings = [
        f"[modeline] first line must be the schema modeline (it is missing) ({modeline})",
        f"[schema] id 'x' does not match the file name {forged + '.yaml'!r} (rename the file "
        "to x.yaml)",
        *(
            f"[schema] missing required key {key!r}"
            for key in ("engine", "envelope", "model", "port", "rig", "status", "title", "weights")
        ),
    ]
    return [
        Case(
            "parent-with-broken-yaml-is-one-finding",
            setup=(edit(PROFILE, "port: 8200", "port: [8200"),),
            findings=(
                f"{PROFILE}:12: error: [schema] malformed YAML at column 9: did not find expected "
                "',' or ']' (the [ at line 11 column 7 needs ',' between its items and a closing ])",
            ),
        ),
        Case(
            "newline-in-a-file-name-forges-nothing",
            files={f"registry/profiles/{forged}.yaml": "id: x\n"},
            # Each finding about it stays one line, the line break shown as an escape.
            findings=tuple(f"{shown}:1: error: {what}" for what in forged_findings),
            never=("\nb.yaml:1: error: [schema] forged",),
        ),
        Case(
            "bidi-and-zero-width-in-a-title-are-shown-escaped",
            setup=(
                edit(PROFILE, "title: Tiny-7B", f"title: Tiny{BIDI}7B{ZERO_WIDTH}"),
                rerender,
            ),
            args=("render", "tiny-chat"),
            code=0,
            says=("# tiny-chat: Tiny\\u202e7B\\u200b bf16 + EAGLE-3, TP2",),
            never=(BIDI, ZERO_WIDTH),
        ),
    ]
