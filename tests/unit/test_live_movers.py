"""A game's new events go to its mover's channels first and to its other channels once the
move's answer is on its way (`gateway.live_movers`): channels that record what they are
handed, the worker's `Moves` as the move paths hold them."""

from __future__ import annotations

import asyncio

import pytest

from gameserver.gateway import live_answers
from gameserver.gateway.live_movers import Item, Moves

HANDED: list[tuple[str, Item]] = []
"""Every channel's hand-overs, in order (each test starts it empty)."""


class Channel:
    def __init__(self, name: str, viewer: int | None = None) -> None:
        self.name = name
        self.viewer = viewer

    def offer(self, item: Item) -> None:
        HANDED.append((self.name, item))


def item(version: int) -> Item:
    return version, b"event %d" % version


@pytest.fixture(autouse=True)
def _fresh() -> None:
    HANDED.clear()


def to(name: str) -> list[Item]:
    return [handed for who, handed in HANDED if who == name]


class Game:
    """Game ``g``'s channels on a feed reader, handed its events through ``moves``."""

    def __init__(self, moves: Moves, *channels: Channel) -> None:
        self.moves = moves
        self.channels = set(channels)

    def hand(self, item: Item) -> None:
        self.moves.hand("g", self.channels, item)


SEATS = (Channel("seat 0", 0), Channel("seat 1", 1), Channel("watcher"))


async def test_with_no_move_in_flight_every_channel_is_handed_the_event_at_once() -> None:
    game = Game(Moves(), *SEATS)
    game.hand(item(5))
    assert sorted(who for who, _ in HANDED) == ["seat 0", "seat 1", "watcher"]


async def test_the_others_get_a_moves_events_in_order_once_its_answer_is_on_its_way() -> None:
    moves = Moves()
    game = Game(moves, *SEATS)
    with moves.moving("g", 1):
        game.hand(item(5))
        game.hand(item(6))  # the move's next event
        assert to("seat 1") == [item(5), item(6)]
        assert to("seat 0") == to("watcher") == []
    assert to("seat 0") == to("watcher") == [item(5), item(6)]
    assert to("seat 1") == [item(5), item(6)]


async def test_a_seats_every_channel_is_a_movers_channel() -> None:
    moves = Moves()
    game = Game(moves, Channel("socket", 0), Channel("stream", 0), Channel("watcher"))
    with moves.moving("g", 0):
        game.hand(item(5))
        assert sorted(who for who, _ in HANDED) == ["socket", "stream"]
    assert to("watcher") == [item(5)]


async def test_the_others_wait_no_longer_than_the_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live_answers, "HOLD_S", 0.01)
    moves = Moves()
    game = Game(moves, *SEATS)
    with moves.moving("g", 0):
        game.hand(item(5))
        await asyncio.sleep(0.05)  # no answer came
        assert to("watcher") == [item(5)]
        game.hand(item(6))  # a later event: held again for the move still in flight
        assert to("watcher") == [item(5)]
    assert to("watcher") == [item(5), item(6)]
    assert len(to("seat 1")) == 2


async def test_a_move_that_fails_releases_the_others() -> None:
    moves = Moves()
    game = Game(moves, *SEATS)

    def fails() -> None:
        with moves.moving("g", 0):
            game.hand(item(5))
            raise RuntimeError("the command failed")

    with pytest.raises(RuntimeError):
        fails()
    assert to("watcher") == [item(5)]
    assert moves.seats == {}


async def test_a_channel_that_follows_the_game_meanwhile_gets_the_held_events() -> None:
    moves = Moves()
    game = Game(moves, Channel("seat 0", 0), Channel("seat 1", 1))
    with moves.moving("g", 0):
        game.hand(item(5))
        game.channels.add(Channel("late"))
        game.hand(item(6))
    assert to("seat 1") == [item(5), item(6)]
    assert to("late") == [item(5), item(6)]  # its stream reader drops what it read already


async def test_a_failed_reader_drops_its_holds() -> None:
    moves = Moves()
    game = Game(moves, *SEATS)
    with moves.moving("g", 0):
        game.hand(item(5))
        moves.drop(["g"])  # its channels read the streams instead
    assert to("watcher") == []
    game.hand(item(6))  # the next event: no move in flight any more
    assert to("watcher") == [item(6)]


async def test_other_games_are_never_held() -> None:
    moves = Moves()
    with moves.moving("g", 0):
        moves.hand("h", {Channel("seat 0 of h", 0), Channel("x")}, item(9))
        assert to("x") == [item(9)]
        assert to("seat 0 of h") == [item(9)]


async def test_two_seats_moving_at_once_both_come_first() -> None:
    moves = Moves()
    game = Game(moves, *SEATS)
    with moves.moving("g", 0), moves.moving("g", 1):
        game.hand(item(5))
        assert sorted(who for who, _ in HANDED) == ["seat 0", "seat 1"]
    assert to("watcher") == [item(5)]
    assert moves.seats == {}
