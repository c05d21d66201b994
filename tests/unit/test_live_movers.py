"""A game's new events go to its movers first and to its other channels after the move's answer
(`gateway.live_movers`), with real `Riding`s and channels that record what they are handed."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from gameplatform.chain import Event
from gameserver.gateway import live_answers
from gameserver.gateway.live_answers import Riding
from gameserver.gateway.live_movers import Item, MoversFirst

HANDED: list[tuple[str, Item]] = []
"""Every channel's hand-overs, in order (each test starts it empty)."""


class Channel:
    def __init__(self, name: str, riding: Riding | None = None) -> None:
        self.name = name
        self.riding = riding

    def offer(self, item: Item) -> None:
        HANDED.append((self.name, item))


class Cause(msgspec.Struct, frozen=True):
    command_id: str | None


def caused_by(command_id: str, version: int) -> Event:
    """The first event of a batch, which names the command that caused it."""
    return Event(game_id="g", version=version, seat=0, cause=Cause(command_id))


def item(version: int) -> Item:
    return version, b"event %d" % version


@pytest.fixture(autouse=True)
def _fresh() -> None:
    HANDED.clear()


def game(*channels: Channel) -> MoversFirst:
    return MoversFirst({"g": set(channels)})


def to(name: str) -> list[Item]:
    return [handed for who, handed in HANDED if who == name]


async def test_without_a_mover_every_channel_is_handed_the_event_at_once() -> None:
    movers = game(Channel("a", Riding()), Channel("b", Riding()), Channel("watcher"))
    movers.hand("g", item(5))
    assert sorted(who for who, _ in HANDED) == ["a", "b", "watcher"]


async def test_the_others_wait_for_the_movers_answer_then_get_every_event_in_order() -> None:
    riding = Riding(4)
    movers = game(Channel("mover", riding), Channel("other", Riding(4)), Channel("watcher"))
    riding.expect("c1")
    movers.hand("g", item(5))
    movers.hand("g", item(6))  # the move's next event, and its last
    assert to("mover") == [item(5), item(6)]
    assert to("other") == to("watcher") == []
    handing = asyncio.create_task(riding.hand_over("answer", 6))  # the answer comes
    await asyncio.sleep(0)
    assert to("mover") == [item(5), item(6)]
    assert to("other") == to("watcher") == [item(5), item(6)]
    assert await riding.along([caused_by("c1", 5), Event(game_id="g", version=6)]) == "answer"
    assert await handing


async def test_an_answer_handed_over_releases_the_others_after_the_pushes_that_waited() -> None:
    riding = Riding(4)
    movers = game(Channel("mover", riding), Channel("watcher"))
    riding.expect("c1")
    movers.hand("g", item(5))
    pushes = asyncio.create_task(riding.along([caused_by("c1", 5)]))
    await asyncio.sleep(0)  # the pushes wait for the answer
    assert to("watcher") == []
    assert await riding.hand_over("answer", 5)  # the pushes take it along
    assert await pushes == "answer"
    assert to("watcher") == [item(5)]


async def test_the_others_wait_no_longer_than_the_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live_answers, "HOLD_S", 0.01)
    riding = Riding(4)
    movers = game(Channel("mover", riding), Channel("watcher"))
    riding.expect("c1")
    movers.hand("g", item(5))
    await asyncio.sleep(0.05)  # no answer came
    assert to("watcher") == [item(5)]
    riding.failed()  # a late end of the command releases nothing twice
    assert to("watcher") == [item(5)]


async def test_an_answer_waiting_for_its_pushes_makes_its_socket_first_and_holds_nobody() -> None:
    riding = Riding(4)
    movers = game(Channel("other"), Channel("mover", riding), Channel("watcher"))
    riding.expect("c1")
    answer = asyncio.create_task(riding.hand_over("answer", 5))  # the answer came first
    await asyncio.sleep(0)
    assert riding.moving()
    assert not riding.in_flight()
    movers.hand("g", item(5))
    assert HANDED[0] == ("mover", item(5))
    assert sorted(who for who, _ in HANDED[1:]) == ["other", "watcher"]
    assert await riding.along([caused_by("c1", 5)]) == "answer"
    assert await answer


async def test_a_failed_command_releases_the_others() -> None:
    riding = Riding(4)
    movers = game(Channel("mover", riding), Channel("watcher"))
    riding.expect("c1")
    movers.hand("g", item(5))
    riding.failed()
    assert to("watcher") == [item(5)]


async def test_a_channel_that_follows_the_game_meanwhile_gets_the_held_events_too() -> None:
    riding = Riding(4)
    followers = {"g": {Channel("mover", riding)}}
    movers = MoversFirst(followers)
    riding.expect("c1")
    movers.hand("g", item(5))  # nobody else: nothing is held
    followers["g"].add(Channel("late"))
    movers.hand("g", item(6))
    riding.failed()
    assert to("late") == [item(6)]


async def test_a_failed_reader_drops_its_holds() -> None:
    riding = Riding(4)
    movers = game(Channel("mover", riding), Channel("watcher"))
    riding.expect("c1")
    movers.hand("g", item(5))
    movers.drop()  # its channels read the stream instead
    riding.failed()
    assert to("watcher") == []
    movers.hand("g", item(6))  # the next event: no mover in flight any more
    assert to("watcher") == [item(6)]


async def test_other_games_are_never_held() -> None:
    riding = Riding(4)
    movers = MoversFirst({"g": {Channel("mover", riding), Channel("o")}, "h": {Channel("x")}})
    riding.expect("c1")
    movers.hand("g", item(5))
    movers.hand("h", item(9))
    assert to("x") == [item(9)]
    assert to("o") == []
