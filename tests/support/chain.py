"""The events' hash chain, as a forger would redo it."""

from __future__ import annotations

from collections.abc import Sequence

from renature import events as e


def rechained(events: Sequence[e.Event]) -> list[e.Event]:
    """The events with the hash chain recomputed from the start: what a careful forger does."""
    out: list[e.Event] = []
    prev = ""
    for event in events:
        sealed = e.seal(event, prev)
        out.append(sealed)
        prev = sealed.hash
    return out
