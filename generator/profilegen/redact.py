"""Credentials in a URL (user:password@, a query's key or token) written as `***` wherever
profilegen echoes text it was given: a registry value in an error, a CI log, a bug report."""

from __future__ import annotations

import re

# scheme://user:password@host: everything from the scheme to the host's last `@`.
_USERINFO = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://)[^/?#\s]*@")
# ?key=..., &token=...: a query value named like a secret.
_QUERY_SECRET = re.compile(
    r"(?i)([?&;](?:api[_-]?key|key|token|access[_-]?token|auth|password|passwd|secret|sig"
    r"|signature)=)[^&#;\s'\"]*"
)


def hide_credentials(text: str) -> str:
    """`text` with the user information and secret query values of every URL in it hidden."""
    if "://" not in text:
        return text
    return _QUERY_SECRET.sub(r"\1***", _USERINFO.sub(r"\1***@", text))
