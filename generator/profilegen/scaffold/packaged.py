"""The starting files profilegen ships (data/), and the release and repository they name."""

from __future__ import annotations

from importlib import metadata, resources
from string import Template

from ..errors import ProfilegenError

# Where profilegen is published: the pre-commit hooks and the reusable workflow live there.
REPOSITORY = "profilegen/profilegen"
WORKFLOW = ".github/workflows/profilegen.yml"
PRE_COMMIT = ".pre-commit-config.yaml"


def packaged(*parts: str) -> bytes:
    """A file under data/, from the installed package."""
    return resources.files(__name__.rpartition(".")[0]).joinpath("data", *parts).read_bytes()


def release() -> str:
    """The installed profilegen's version: what the workflow and the hooks pin."""
    try:
        return metadata.version("profilegen")
    except metadata.PackageNotFoundError:
        raise ProfilegenError(
            "profilegen is not installed as a package (no version to pin): "
            "install it with pip, then run `profilegen init` again"
        ) from None


def adoption_files(version: str) -> dict[str, bytes]:
    """The CI workflow and the pre-commit config, pinned to `version`."""
    names = {WORKFLOW: "profilegen.yml", PRE_COMMIT: "pre-commit-config.yaml"}
    values = {"version": version, "repository": REPOSITORY}
    return {
        rel: Template(packaged(name).decode()).substitute(values).encode()
        for rel, name in names.items()
    }
