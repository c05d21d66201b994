"""Commands and events in a player's words, for any game: the game's own ``describe`` where it
has one (``interface.Describes``), otherwise plain words read from the struct's fields.

So a client can list the moves a seat may make and the log of a game it knows nothing about:
``Place piece: piece L4, squares (0, 1), (0, 2).`` The words are made of the item alone, so
pass only what the reader may see (a visible event, the reader's own legal commands).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from gameplatform.interface import Describes

CHAIN_FIELDS = frozenset({"type", "seat", "game_id", "version", "cause", "prev_hash", "hash"})
"""Fields that say where an item belongs rather than what it does: left out of the words."""


def words(game: object, item: msgspec.Struct, seats: Sequence[str]) -> str:
    """``item`` (a command or an event of ``game``) in words; ``seats`` names each seat
    (its colour, say) for the sentence's subject."""
    if isinstance(game, Describes):
        return game.describe(item, seats)
    return plain_words(item, seats)


def phrased(
    item: Any,
    seats: Sequence[str],
    phrases: Mapping[str, Callable[[Any, Sequence[str]], str]],
    subject: frozenset[str],
) -> str:
    """``item`` told by its game's ``phrases`` (by type name; plain words for the rest), a
    sentence with its seat as the subject where its kind is in ``subject``."""
    kind = type(item).__name__
    phrase = phrases.get(kind)
    if phrase is None:
        return plain_words(item, seats)
    who = seat_name(getattr(item, "seat", None), seats) if kind in subject else None
    sentence = f"{who} {phrase(item, seats)}" if who else phrase(item, seats)
    return f"{sentence[0].upper()}{sentence[1:]}."


def plain_words(item: msgspec.Struct, seats: Sequence[str]) -> str:
    """The item's kind spelled out, then its fields: what any struct says, in words."""
    data = msgspec.to_builtins(item)
    details = ", ".join(
        f"{spaced(key)} {value_words(value)}"
        for key, value in data.items()
        if key not in CHAIN_FIELDS and value not in (None, "", [], {})
    )
    action = spaced(type(item).__name__)
    text = f"{action.capitalize()}: {details}" if details else action.capitalize()
    who = seat_name(getattr(item, "seat", None), seats)
    return f"{who.capitalize()}: {text}." if who else f"{text}."


def seat_name(seat: object, seats: Sequence[str]) -> str | None:
    """A seat's name as ``seats`` gives it, ``seat N`` past its end, None for no seat."""
    if not isinstance(seat, int) or isinstance(seat, bool):
        return None
    return seats[seat] if 0 <= seat < len(seats) else f"seat {seat}"


def spaced(name: str) -> str:
    """``PlacePiece`` or ``set_points`` as ``place piece``, ``set points``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").lower()


def value_words(value: Any) -> str:
    """A field's value: a square as ``(x, y)``, a list joined by commas, true as ``yes``."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        if set(value) == {"x", "y"}:
            return f"({value['x']}, {value['y']})"
        return "; ".join(f"{spaced(str(k))} {value_words(v)}" for k, v in value.items()) or "none"
    if isinstance(value, list):
        return ", ".join(value_words(v) for v in value) or "none"
    return str(value)
