"""A seat's own-perspective game state: the full ``GameState`` with every secret the seat may
not know replaced by a stand-in, so a bot (or any client using the pure core) can decide on
exactly what a player at that seat knows.

Why it exists: the bots of ``renature.bots`` decide on a ``GameState``. To make a bot playing
through the HTTP API choose the same commands as the in-process bot, it needs a state that
agrees with the real one on everything a seat may see. The secrets are masked as follows, and
none of them affects the legal actions of the acting seat or the bots' choices:

* another seat's hand: every domino id becomes ``-1`` (the hand size stays visible);
* every reserve (face down, even for its owner) and the box: ids become ``-1``, counts stay;
* an area token still lying in an area, and a token another seat collected (until the end):
  its id becomes the first token id with the same front (size and minor points), so the
  points a closing would bring are right while its identity and back stay unknown;
* the hash of the last stored event (``last_hash``) becomes empty: a hash of the unredacted
  stream lets a seat test every candidate for a value blanked in the events it sees (a drawn
  domino, a collected token), as the views' events carry no hash chain for the same reason.

Fields this module does not know pass through unchanged: a new secret added to ``GameState``
must be masked here too (``tests/unit/test_perspective.py`` and
``tests/integration/test_gateway.py`` check the known ones).

This is the core's policy of what a seat may know, beside ``renature.view`` (``view``,
``visible_event``) and ``renature.events.public_command``; the gateway serves it as
``GET /games/{id}/state`` with `encode_state`, and clients read it back with `decode_state`.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec

from renature.board import Board, load_board
from renature.state import GameState

HIDDEN = -1  # stands for a domino id the seat may not know


def perspective(state: GameState, seat: int) -> GameState:
    """``state`` as ``seat`` knows it (see the module docstring for what is masked)."""
    board = load_board(state.board_id)
    seats = tuple(
        msgspec.structs.replace(
            s,
            hand=s.hand if number == seat else _hidden(s.hand),
            reserve=_hidden(s.reserve),
            tokens=(
                s.tokens
                if number == seat or state.is_over
                else tuple(_stand_in(board, t) for t in s.tokens)
            ),
        )
        for number, s in enumerate(state.seats)
    )
    return msgspec.structs.replace(
        state,
        seats=seats,
        area_tokens=tuple(None if t is None else _stand_in(board, t) for t in state.area_tokens),
        box_dominoes=_hidden(state.box_dominoes),
        last_hash="",
    )


def encode_state(state: GameState) -> bytes:
    """JSON of every field of the state except the static board data (found by ``board_id``)."""
    fields = {
        name: value
        for name, value in msgspec.structs.asdict(state).items()
        if not isinstance(value, Board)
    }
    return msgspec.json.encode(fields)


def decode_state(data: bytes | str) -> GameState:
    """The inverse of `encode_state`: convert each field to its declared type, and load the
    static board by id for a field that holds one."""
    raw: dict[str, Any] = msgspec.json.decode(data)
    values: dict[str, Any] = {}
    for field in msgspec.structs.fields(GameState):
        if field.name in raw:
            values[field.name] = msgspec.convert(raw[field.name], field.type)
        elif field.type is Board or field.name == "board":
            values[field.name] = load_board(raw["board_id"])
    return GameState(**values)


def _hidden(dominoes: tuple[int, ...]) -> tuple[int, ...]:
    return (HIDDEN,) * len(dominoes)


def _stand_in(board: Board, token_id: str) -> str:
    """The first token id (sorted) whose front equals that of ``token_id``."""
    return _stand_ins(board.id)[token_id]


@cache
def _stand_ins(board_id: str) -> dict[str, str]:
    """Each token's stand-in on the board ``board_id`` (boards are static data)."""
    tokens = load_board(board_id).tokens
    return {
        token.id: min(t.id for t in tokens if (t.main, t.minor) == (token.main, token.minor))
        for token in tokens
    }


def state_json(state: GameState, seat: int | None) -> bytes:
    """The state as ``seat`` may hold it (a spectator: no seat's secrets), encoded."""
    return encode_state(perspective(state, -1 if seat is None else seat))
