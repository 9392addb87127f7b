"""The Hub library's own log lines with a URL's credentials hidden: huggingface_hub logs the
URL it downloads from ("Error while downloading from http://user:password@host/..."), and
HF_ENDPOINT may carry user:password@ that must never reach a terminal or a CI log."""

from __future__ import annotations

import logging

from ..errors import hide_credentials

LIBRARY = "huggingface_hub"


class HideCredentials(logging.Filter):
    """Rewrites a record whose message holds a credential; never drops one."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return True
        hidden = hide_credentials(message)
        if hidden != message:
            record.msg, record.args = hidden, None
        return True


def hide_in_library_logs() -> None:
    """Puts the filter on the library's logger and on every handler it writes through (a
    logger's own filter does not see the records of its children; a handler's does)."""
    logger = logging.getLogger(LIBRARY)
    for target in (logger, *logger.handlers):
        if not any(isinstance(f, HideCredentials) for f in target.filters):
            target.addFilter(HideCredentials())
