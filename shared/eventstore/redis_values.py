"""Values as redis-py returns them: ``bytes`` from a bytes client, ``str`` from a decoding one.

The store and every service read hashes, ids and versions from Redis; `text` is the one way to
turn such a value into a ``str`` whichever client handed it over.
"""

from __future__ import annotations


def text(value: object) -> str:
    """``value`` as text: bytes decoded as UTF-8, anything else as ``str`` gives it."""
    return value.decode() if isinstance(value, bytes) else str(value)
