"""The one way profilegen builds a Jinja environment: sandboxed, strict, cached."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from jinja2 import BytecodeCache, FileSystemBytecodeCache, StrictUndefined
from jinja2.bccache import Bucket
from jinja2.sandbox import SandboxedEnvironment

from ..cache import enabled, read_sealed, write_sealed
from ..resources import cache_root
from .loader import InsideLoader


class _ByName(FileSystemBytecodeCache):
    """Entries keyed by template name, not file path: a copy of the registry elsewhere reuses
    them. Each entry still carries its source's checksum, so a changed template recompiles.

    Compiled code is run when it is loaded: entries are signed like every cache entry
    (`cache/entry.py`), so one this user's profilegen did not write is never loaded, and only
    regular files are read."""

    def get_cache_key(self, name: str, filename: str | None = None) -> str:
        return super().get_cache_key(name)

    def load_bytecode(self, bucket: Bucket) -> None:
        payload = read_sealed("jinja", Path(self._get_cache_filename(bucket)))
        if payload is not None:
            bucket.bytecode_from_string(payload)

    def dump_bytecode(self, bucket: Bucket) -> None:
        write_sealed("jinja", Path(self._get_cache_filename(bucket)), bucket.bytecode_to_string())


def _bytecode_cache() -> BytecodeCache | None:
    """Compiled templates are cached like .pyc files (keyed by source checksum).

    Compiling the templates costs more than rendering all profiles; a read-only or
    missing cache folder only means compiling again, and --no-cache compiles them anew.
    """
    if not enabled():
        return None
    folder = cache_root() / "jinja"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return _ByName(str(folder)) if os.access(folder, os.W_OK) else None


def make_environment(
    dirs: Sequence[Path], finalize: Callable[[object], object]
) -> SandboxedEnvironment:
    """Registry values reach templates only through `finalize`, which quotes or escapes."""
    return SandboxedEnvironment(
        loader=InsideLoader([str(d) for d in dirs]),  # no template read through a link out
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        # Bash uses `{#` (${#array[@]}); template comments are `{%# … #%}` instead.
        comment_start_string="{%#",
        comment_end_string="#%}",
        finalize=finalize,
        bytecode_cache=_bytecode_cache(),
    )
