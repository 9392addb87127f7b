"""A gateway: one OpenAI-compatible endpoint (the LiteLLM proxy) in front of several profiles."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field, StringConstraints, model_validator

from .common import Id, ServedName, Strict, Text
from .profile import IpAddress

Port = Annotated[int, Field(ge=1, le=65535)]


def _dotted_quad(host: str) -> str:
    """A name whose last label is all digits is an IPv4 address (no DNS name ends in a
    number), so its four parts must each be 0 to 255."""
    labels = host.split(".")
    if labels[-1].isdigit() and not (
        len(labels) == 4 and all(x.isdigit() and int(x) <= 255 for x in labels)
    ):
        raise ValueError(f"{host!r} is neither a host name nor an IPv4 address (a.b.c.d, 0-255)")
    if labels[-1].isdigit() and any(len(x) > 1 and x.startswith("0") for x in labels):
        raise ValueError(
            f"{host!r}: an IPv4 address is written without leading zeros (resolvers read 010 "
            "as the octal 8, others as 10)"
        )
    if any(not label for label in labels):
        raise ValueError(f"{host!r} has an empty label (two dots in a row)")
    if any(len(label) > 63 for label in labels):
        raise ValueError(f"{host!r} has a label longer than 63 characters (DNS allows 63)")
    return host


# A DNS name or an IPv4 address: it becomes the host part of an http:// URL.
Hostname = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$"),
    AfterValidator(_dotted_quad),
]
ImageName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._/-]*[a-z0-9]$")]
ImageTag = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")]
Digest = Annotated[str, StringConstraints(pattern=r"^sha256:[0-9a-f]{64}$")]


class ImagePin(Strict):
    """A container image pinned by tag, digest or both."""

    image: ImageName
    tag: ImageTag | None = None
    digest: Digest | None = None

    @model_validator(mode="after")
    def _pinned(self) -> ImagePin:
        if self.tag is None and self.digest is None:
            raise ValueError("tag: an image needs a tag, a digest or both")
        return self

    @property
    def ref(self) -> str:
        ref = self.image if self.tag is None else f"{self.image}:{self.tag}"
        return f"{ref}@{self.digest}" if self.digest else ref


# The LiteLLM proxy release the gateway runs (its linux/amd64 image, by digest); the tests
# run the same release from PyPI (litellm[proxy] in the dev extra).
LITELLM_IMAGE = ImagePin(
    image="ghcr.io/berriai/litellm",
    tag="v1.80.11-stable.1",
    digest="sha256:753ff09ed2df3f47fe157faa54171e121d0b1adfeb8c06e5c112179aec4db55a",
)
# Open WebUI, pinned by tag: its database migrations are one-way, so a bump is deliberate.
WEBUI_IMAGE = ImagePin(image="ghcr.io/open-webui/open-webui", tag="v0.11.0")


class GatewayMember(Strict):
    profile: Id
    # The names this member answers to through the gateway, each one the profile's engine
    # serves or one of its gateway aliases; unset: all of them.
    routes: list[ServedName] | None = Field(default=None, min_length=1)
    # Where the member's host port is reached from the gateway when it runs on another host;
    # unset: the gateway's engine_host.
    host: Hostname | None = None


class WebUi(Strict):
    """Open WebUI, connected to the gateway."""

    port: Port = 3000
    bind_host: IpAddress = "0.0.0.0"
    image: ImagePin = WEBUI_IMAGE


class Gateway(Strict):
    id: Id
    title: Text
    members: list[GatewayMember] = Field(min_length=1)
    port: Port = 4000
    bind_host: IpAddress = "0.0.0.0"
    # How the proxy container reaches the engines' host ports on its own host.
    engine_host: Hostname = "host.docker.internal"
    image: ImagePin = LITELLM_IMAGE
    webui: WebUi | None = None
    notes: Text | None = None
