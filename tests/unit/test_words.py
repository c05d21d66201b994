"""Every game's commands and events in words (``gameplatform.words``): what the web client
lists as a seat's moves and shows as the log, for a game it knows nothing about."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from gameplatform import game_names, get_game
from gameplatform.words import plain_words, words
from renaissance import commands as c

GAMES = list(game_names())


def _played(name: str) -> tuple[Any, list[Any], list[str]]:
    game = get_game(name)
    events, state, _ = game.simulate("words", list(game.bot_names[:1]) * game.player_counts[0])
    return game, events, list(game.table(state).colours)


@pytest.mark.parametrize("name", GAMES)
def test_every_event_of_a_whole_game_is_told_in_words(name: str) -> None:
    game, events, seats = _played(name)
    for event in events:
        text = words(game, event, seats)
        assert text.endswith(".")
        assert text[0].isupper()
        assert "None" not in text
        assert "hash" not in text  # the chain is no part of what happened


@pytest.mark.parametrize("name", GAMES)
def test_the_moves_of_every_turn_read_differently(name: str) -> None:
    """A player choosing from the words alone can tell every legal move from every other."""
    game, events, seats = _played(name)
    state = None
    for event in events:
        state = game.evolve(state, event)
        seat = game.to_move(state)
        if seat is None:
            continue
        legal = game.legal_actions(state, seat)
        texts = [words(game, command, seats) for command in legal]
        assert len(set(texts)) == len(texts), [t for t in texts if texts.count(t) > 1][:3]


class Square(msgspec.Struct, frozen=True):
    x: int
    y: int


class TakeSquares(msgspec.Struct, frozen=True, tag_field="type"):
    seat: int
    squares: list[Square]
    boxed: bool
    note: str | None = None
    hash: str = "abc"


def test_a_game_without_words_of_its_own_is_told_from_its_fields() -> None:
    move = TakeSquares(1, [Square(0, 1), Square(2, 3)], True)
    assert plain_words(move, ["red", "blue"]) == (
        "Blue: Take squares: squares (0, 1), (2, 3), boxed yes."
    )
    assert plain_words(move, ["red"]) == "Seat 1: Take squares: squares (0, 1), (2, 3), boxed yes."
    assert words(object(), move, ["red", "blue"]) == plain_words(move, ["red", "blue"])


def test_a_seat_taken_back_from_its_bot_is_told_in_words() -> None:
    game = get_game("renature")
    command = game.reclaim_command(1)
    assert command is not None
    assert words(game, command, ["orange", "blue"]) == "Blue: Reclaim seat."
    event = game.decode_event(b'{"type": "SeatReclaimed", "game_id": "g", "version": 9, "seat": 1}')
    assert words(game, event, ["orange", "blue"]) == "Blue: Seat reclaimed."


def test_renaissance_says_its_moves_in_its_own_words() -> None:
    game = get_game("renaissance")
    seats = ["silver", "gold"]
    place = c.PlacePiece(seat=0, piece="tetra-L", squares=[c.Square(x=1, y=2), c.Square(x=1, y=3)])
    assert words(game, place, seats) == "Place tetra-L on (1, 2), (1, 3)."
    push = c.PushMarker(seat=1, square=c.Square(x=3, y=0), direction="south")
    assert words(game, push, seats) == "Push the markers at (3, 0) south."
