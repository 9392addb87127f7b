"""Registry-wide settings (`registry/settings.yaml`): what the maintainers opted into."""

from __future__ import annotations

from typing import Literal

from .common import Strict
from .kubernetes import ImageRef

# optional: a server takes API_KEY (or API_KEY_FILE) when given and serves anyone without;
# required: it refuses to boot without one.
ApiKeyPolicy = Literal["optional", "required"]


class KubernetesSettings(Strict):
    # True: `render --all` also writes k8s/<id>/ for every profile and `check` keeps it
    # fresh, like compose/. False (the default): Kubernetes output is rendered on demand.
    checked_in: bool = False
    # The image that downloads and verifies a profile's weights on a cluster when the engine's
    # own image carries no Python with huggingface_hub (llama.cpp's); vLLM and SGLang images
    # do, and load their own.
    loader_image: ImageRef | None = None


class ServingSettings(Strict):
    # The API-key policy of every profile that does not set serve.api_key itself.
    api_key: ApiKeyPolicy = "optional"


class Settings(Strict):
    kubernetes: KubernetesSettings = KubernetesSettings()
    serving: ServingSettings = ServingSettings()
