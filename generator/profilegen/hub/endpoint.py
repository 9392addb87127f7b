"""HF_ENDPOINT as huggingface_hub reads it: the library parses it when it is imported, and an
unreadable one (`http://[::1`, a port past 65535) was a ValueError out of an import (exit 3).
It is checked before any command runs, as PROFILEGEN_CACHE is; its credentials are never
shown."""

from __future__ import annotations

import os
import urllib.parse

from ..errors import hide_credentials


def endpoint_problem() -> str | None:
    """Why HF_ENDPOINT cannot be read as a URL (None: unset, or readable)."""
    value = os.environ.get("HF_ENDPOINT")
    if not value:
        return None
    try:
        parts = urllib.parse.urlsplit(value)
        parts.port  # noqa: B018 (read to refuse a port that is no number or past 65535)
    except ValueError as exc:
        shown = hide_credentials(value) if "://" in value else "(its value)"
        return f"HF_ENDPOINT {shown!r} is not a URL ({exc})"
    return None
