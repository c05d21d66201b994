"""A move's answer rides with its pushes (`gateway.live_answers.Riding`, any game's events),
whichever of them comes first: the one that comes first waits for the other, briefly, and
they go in one write, the events first (made by the answering task where the pushes waited).
Every other answer is sent by its maker at once. No answer or push is lost or sent twice,
whatever the order, whatever is cancelled, however long a write takes."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from gameplatform.chain import Event
from gameserver.gateway import live_answers
from gameserver.gateway.live_answers import Riding

SOON = 0.01  # s: what waits no longer than a loop turn is done by then


class Cause(msgspec.Struct, frozen=True):
    """What every hosted game's cause carries that the gateway reads: the command's id."""

    command_id: str | None


def caused_by(command_id: str | None, version: int = 5) -> Event:
    """An event whose cause carries ``command_id`` (a batch's first event), of any game."""
    return Event(game_id="g", version=version, seat=0, cause=Cause(command_id))


def follows(version: int = 6) -> Event:
    """An event after a batch's first: it carries no cause."""
    return Event(game_id="g", version=version, seat=0)


class Socket:
    """One live socket's two writers and what it was sent: each write's frames, in order."""

    def __init__(self, write_s: float = 0.0, fails: bool = False) -> None:
        self.writes: list[list[str]] = []
        self.write_s = write_s  # a write that waits (the socket's flow control)
        self.fails = fails  # a write that fails (the client went away)

    async def write(self, texts: list[str]) -> None:
        if self.write_s:
            await asyncio.sleep(self.write_s)
        if self.fails:
            raise ConnectionError("the client went away")
        self.writes.append(texts)

    async def push(self, riding: Riding, events: list[Event]) -> None:
        """The pump: the events' frames (``e<version>``), with the answer where it rides."""
        texts = [f"e{event.version}" for event in events]
        if not await riding.along(events, texts):
            await self.write(texts)

    async def answer(self, riding: Riding, text: str, last_version: int | None) -> None:
        """The task that answers the socket's command: the answer, alone where it rides with
        no pushes."""
        if not await riding.hand_over(text, last_version, self.write):
            await self.write([text])


async def test_pushes_that_come_first_are_written_with_the_answer_by_its_maker() -> None:
    riding, socket = Riding(), Socket()
    riding.expect("seat0:m1")
    pushing = asyncio.create_task(socket.push(riding, [caused_by("seat0:m1"), follows()]))
    await asyncio.sleep(0)
    assert socket.writes == []  # the pushes wait
    await socket.answer(riding, "answer", 6)
    assert socket.writes == [["e5", "e6", "answer"]]  # written before the pump ran again
    await pushing
    assert socket.writes == [["e5", "e6", "answer"]]


async def test_an_answer_that_comes_first_waits_for_the_pushes_of_its_events() -> None:
    riding, socket = Riding(after=4), Socket()
    riding.expect("seat0:m1")
    answering = asyncio.create_task(socket.answer(riding, "answer", 6))
    await asyncio.sleep(0)  # the answer waits
    await socket.push(riding, [caused_by("seat0:m1"), follows(6)])
    await answering
    assert socket.writes == [["e5", "e6", "answer"]]


async def test_an_answer_waits_for_its_last_event_not_for_earlier_pushes() -> None:
    riding, socket = Riding(after=3), Socket()
    riding.expect("seat0:m1")
    answering = asyncio.create_task(socket.answer(riding, "answer", 6))
    await asyncio.sleep(0)
    await asyncio.wait_for(socket.push(riding, [caused_by("seat1:x", 4)]), SOON)
    assert not answering.done()
    await socket.push(riding, [caused_by("seat0:m1", 5), follows(6)])
    await answering
    assert socket.writes == [["e4"], ["e5", "e6", "answer"]]


async def test_a_refusal_or_an_answer_whose_events_went_is_sent_by_its_maker() -> None:
    riding, socket = Riding(after=2), Socket()
    riding.expect("seat0:m1")
    await asyncio.wait_for(socket.answer(riding, "refused", None), SOON)
    riding.expect("seat0:m2")  # accepted before: its events are older than the socket's
    await asyncio.wait_for(socket.answer(riding, "again", 2), SOON)
    riding.expect("seat0:m3")
    await asyncio.wait_for(socket.push(riding, [caused_by("seat9:m3", 3)]), SOON)
    await asyncio.wait_for(socket.answer(riding, "pushed", 3), SOON)
    assert socket.writes == [["refused"], ["again"], ["e3"], ["pushed"]]


async def test_pushes_another_command_caused_never_wait() -> None:
    riding, socket = Riding(), Socket()
    riding.expect("seat0:m1")
    for events in ([caused_by("seat1:m1")], [caused_by(None)], [follows()]):
        await asyncio.wait_for(socket.push(riding, events), SOON)
    assert socket.writes == [["e5"], ["e5"], ["e6"]]


async def test_without_a_command_in_flight_nothing_waits() -> None:
    riding, socket = Riding(), Socket()
    await asyncio.wait_for(socket.push(riding, [caused_by("seat0:m1")]), SOON)
    assert socket.writes == [["e5"]]


@pytest.fixture
def briefly(monkeypatch: pytest.MonkeyPatch) -> Riding:
    """A socket with a command in flight (``seat0:m1``), whose waits run out after `SOON`."""
    monkeypatch.setattr(live_answers, "HOLD_S", SOON)
    riding = Riding()
    riding.expect("seat0:m1")
    return riding


async def test_pushes_stop_waiting_and_a_late_answer_goes_alone(briefly: Riding) -> None:
    socket = Socket()
    await socket.push(briefly, [caused_by("seat0:m1")])  # the wait ran out: they go alone
    await socket.answer(briefly, "answer", 5)  # so its maker sends it alone
    assert socket.writes == [["e5"], ["answer"]]


async def test_an_answer_stops_waiting_and_late_pushes_go_alone(briefly: Riding) -> None:
    socket = Socket()
    await socket.answer(briefly, "answer", 5)  # the wait ran out: its maker sends it
    await asyncio.wait_for(socket.push(briefly, [caused_by("seat0:m1")]), SOON)
    assert socket.writes == [["answer"], ["e5"]]


async def test_pushes_wait_for_their_answers_write_however_long_it_takes(
    briefly: Riding,
) -> None:
    socket = Socket(write_s=3 * SOON)  # the socket's buffer is full: the write waits
    pushing = asyncio.create_task(socket.push(briefly, [caused_by("seat0:m1")]))
    await asyncio.sleep(0)
    await socket.answer(briefly, "answer", 5)
    await pushing
    assert socket.writes == [["e5", "answer"]]  # once, though the write outlasted the wait


async def test_an_answers_write_goes_on_when_the_pushes_stop_waiting_under_it(
    briefly: Riding,
) -> None:
    socket = Socket(write_s=3 * SOON)
    pushing = asyncio.create_task(socket.push(briefly, [caused_by("seat0:m1")]))
    await asyncio.sleep(0)
    answering = asyncio.create_task(socket.answer(briefly, "answer", 5))
    await asyncio.sleep(SOON)  # the write waits
    pushing.cancel()  # the channel closes under it
    await asyncio.wait_for(answering, 1.0)  # and the answering task ends as its write does
    assert socket.writes == [["e5", "answer"]]


async def test_pushes_whose_write_with_the_answer_failed_are_not_sent_again() -> None:
    riding, socket = Riding(), Socket(fails=True)
    riding.expect("seat0:m1")
    pushing = asyncio.create_task(socket.push(riding, [caused_by("seat0:m1")]))
    await asyncio.sleep(0)
    with pytest.raises(ConnectionError):  # the answering task learns the client is gone
        await socket.answer(riding, "answer", 5)
    await asyncio.wait_for(pushing, SOON)  # and the pump does not write them again
    assert socket.writes == []


async def test_a_failed_command_releases_the_waiting_pushes() -> None:
    riding, socket = Riding(), Socket()
    riding.expect("seat0:m1")
    pushing = asyncio.create_task(socket.push(riding, [caused_by("seat0:m1")]))
    await asyncio.sleep(0)
    riding.failed()
    await pushing
    assert socket.writes == [["e5"]]


async def test_an_answer_is_not_kept_by_pushes_cancelled_while_waiting() -> None:
    riding, socket = Riding(), Socket()
    riding.expect("seat0:m1")
    pushing = asyncio.create_task(socket.push(riding, [caused_by("seat0:m1")]))
    await asyncio.sleep(0)
    pushing.cancel()  # the channel closes
    with pytest.raises(asyncio.CancelledError):
        await pushing
    await asyncio.wait_for(socket.answer(riding, "answer", 5), SOON)
    assert socket.writes == [["answer"]]


async def test_pushes_do_not_take_an_answer_whose_wait_was_cancelled() -> None:
    riding, socket = Riding(), Socket()
    riding.expect("seat0:m1")
    answering = asyncio.create_task(socket.answer(riding, "answer", 5))
    await asyncio.sleep(0)
    answering.cancel()
    with pytest.raises(asyncio.CancelledError):
        await answering
    await asyncio.wait_for(socket.push(riding, [caused_by("seat0:m1")]), SOON)
    assert socket.writes == [["e5"]]


async def test_each_command_is_its_own() -> None:
    riding, socket = Riding(), Socket()
    riding.expect("seat0:m1")
    pushing = asyncio.create_task(socket.push(riding, [caused_by("seat0:m1", 5)]))
    await asyncio.sleep(0)
    await socket.answer(riding, "first", 5)
    await pushing
    riding.expect("seat0:m2")
    await asyncio.wait_for(socket.push(riding, [caused_by("seat0:m1", 6)]), SOON)
    pushing = asyncio.create_task(socket.push(riding, [caused_by("seat0:m2", 7)]))
    await asyncio.sleep(0)
    await socket.answer(riding, "second", 7)
    await pushing
    assert socket.writes == [["e5", "first"], ["e6"], ["e7", "second"]]


async def test_a_closing_channel_waits_for_the_message_in_hand_to_be_answered() -> None:
    riding = Riding()
    await asyncio.wait_for(riding.settled(5.0), SOON)  # nothing in hand: at once
    answered = asyncio.Event()

    async def answering() -> None:
        with riding.answering():
            await asyncio.sleep(SOON)
            answered.set()

    task = asyncio.create_task(answering())
    await asyncio.sleep(0)
    await riding.settled(5.0)
    assert answered.is_set()
    await task


async def test_a_closing_channel_waits_for_an_answer_a_bounded_time() -> None:
    riding = Riding()
    with riding.answering():
        started = asyncio.get_running_loop().time()
        await riding.settled(SOON)  # the answer never comes: the wait ends all the same
        assert asyncio.get_running_loop().time() - started < 1.0
