"""Registry-wide settings (`registry/settings.yaml`): what the maintainers opted into."""

from __future__ import annotations

from .common import Strict


class KubernetesSettings(Strict):
    # True: `render --all` also writes k8s/<id>/ for every profile and `check` keeps it
    # fresh, like compose/. False (the default): Kubernetes output is rendered on demand.
    checked_in: bool = False


class Settings(Strict):
    kubernetes: KubernetesSettings = KubernetesSettings()
