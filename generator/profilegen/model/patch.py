"""A boot-time engine patch: where its files come from and how it applies, fail-closed."""

from __future__ import annotations

import re
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import Field, StringConstraints, model_validator

from .common import EnvName, Id, PositiveInt, Requirements, Sha256, Strict, Text

PatchFileName = Annotated[
    str, StringConstraints(pattern=r"^(?!\.)(?!.*\.\.)[A-Za-z0-9_][A-Za-z0-9._/-]{0,127}$")
]
TargetPath = Annotated[str, StringConstraints(pattern=r"^(?!/)(?!.*\.\.)[A-Za-z0-9_./-]{1,255}$")]
Url = Annotated[
    str, StringConstraints(pattern=r"^https://[A-Za-z0-9.-]+(:[0-9]+)?/[A-Za-z0-9._~%/+-]*$")
]


# prefer-padding-sliding-window-groups: hybrid KV groups pad the cheap sliding-window
# layers instead of the per-token ones; v2-cudagraph-memory-reserve: the V2 model
# runner's CUDA graphs are reserved (VLLM_V2_CUDAGRAPH_MEM_MIB) inside the budget.
PatchEffect = Literal["prefer-padding-sliding-window-groups", "v2-cudagraph-memory-reserve"]


_LABEL = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")


def url_problem(url: str) -> str | None:
    """Why an https URL (already matching `Url`) names no host and port a client can reach."""
    netloc = urlsplit(url).netloc
    host, colon, port = netloc.rpartition(":") if ":" in netloc else (netloc, "", "")
    if colon and (len(port) > 5 or not 1 <= int(port) <= 65535):
        shown = port if len(port) <= 8 else f"{port[:5]}… ({len(port)} digits)"
        return f"port {shown} is not a port (1-65535)"
    labels = host.split(".")
    if len(host) > 253 or not all(_LABEL.match(label) for label in labels):
        return f"{host!r} is not a host name"
    return None


class PatchFile(Strict):
    path: PatchFileName
    sha256: Sha256
    size: PositiveInt


class PatchSource(Strict):
    # vendored: files live in the registry under patches/files/<patch-id>/.
    # remote: files are fetched from base_url + path and pinned by sha256 and size.
    kind: Literal["vendored", "remote"]
    base_url: Url | None = None
    files: list[PatchFile] = Field(min_length=1)

    @model_validator(mode="after")
    def _where(self) -> PatchSource:
        if self.kind == "remote" and self.base_url is None:
            raise ValueError("kind: a remote source needs base_url")
        if self.kind == "vendored" and self.base_url is not None:
            raise ValueError("base_url: a vendored source takes no base_url")
        if self.base_url is not None and not self.base_url.endswith("/"):
            raise ValueError("base_url: base_url must end with '/'")
        if self.base_url is not None and (problem := url_problem(self.base_url)):
            raise ValueError(f"base_url: {problem}")
        names = [f.path for f in self.files]
        if len(set(names)) != len(names):
            raise ValueError("files: a file is listed twice")
        return self

    def url(self, file: PatchFile) -> str | None:
        return None if self.base_url is None else self.base_url + file.path


class DiffStep(Strict):
    """`patch -p1 --forward` inside the engine's package dir, skipped when marked."""

    method: Literal["diff"]
    file: PatchFileName
    strip: Annotated[int, Field(ge=0, le=9)] = 1
    # File (relative to the package dir) whose content proves the diff is applied.
    target: TargetPath
    marker: Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^[^\n\r]+$")]


class ScriptStep(Strict):
    """An installer script shipped with the patch, run with the engine's interpreter."""

    method: Literal["script"]
    file: PatchFileName
    interpreter: Literal["bash", "sh", "python3"] = "bash"
    target: TargetPath | None = None
    marker: (
        Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^[^\n\r]+$")]
        | None
    ) = None


class Activation(Strict):
    """A patch switched by a tunable: on means fail-closed with extra exports."""

    env: EnvName
    default: bool
    help: Text
    exports: dict[EnvName, Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.:-]+$")]] = (
        Field(default_factory=dict)
    )


class Patch(Strict):
    id: Id
    title: Text
    engine: Id
    # Folder name under the engine's patch mount root; installers may hard-code it.
    mount_dir: Id | None = None
    source: PatchSource
    # A single file mounted at exactly this path (a chat template), instead of a folder under
    # the engine's patch root; such a patch has no steps. A folder patch without steps is
    # only delivered (and verified): the engine finds it by path (PYTHONPATH, a flag).
    mount_file: Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9_.@+/-]*$")] | None = None
    steps: list[Annotated[DiffStep | ScriptStep, Field(discriminator="method")]] = Field(
        default_factory=list
    )
    fail_closed: bool = True
    # The folder joins PYTHONPATH at boot, ahead of what the container had (a sitecustomize.py
    # or a module the engine imports): how a folder patch without steps takes effect.
    python_path: bool = False
    activation: Activation | None = None
    requires: Requirements = Requirements()
    capability: Text
    foundational: bool = False
    upstream_ref: Text | None = None
    drop_when: Text
    # How the patch changes the engine's memory sizing, for `profilegen fit`.
    effects: list[PatchEffect] = Field(default_factory=list)

    @model_validator(mode="after")
    def _steps_use_files(self) -> Patch:
        if self.mount_file is not None and (self.steps or len(self.source.files) != 1):
            raise ValueError("mount_file: a mounted file is one source file and no steps")
        if self.mount_file is not None and self.python_path:
            raise ValueError("python_path: only a patch folder joins PYTHONPATH, not one file")
        names = {f.path for f in self.source.files}
        for step in self.steps:
            if step.file not in names:
                raise ValueError(f"steps: step file {step.file!r} is not among the source files")
        return self

    @property
    def vendored_dir(self) -> str:
        """Where a vendored patch's files live, relative to the registry root."""
        return f"registry/patches/files/{self.id}"

    @property
    def mount_name(self) -> str:
        return self.mount_dir or self.id
