"""Values as redis-py returns them: ``bytes`` from a bytes client, ``str`` from a decoding one.

Every service reads hashes, ids and versions from Redis; `text` is the one way to turn such a
value into a ``str`` whichever client handed it over.
"""

from __future__ import annotations


def text(value: bytes | str) -> str:
    """``value`` as text (UTF-8)."""
    return value.decode() if isinstance(value, bytes) else value
