"""A move's answer rides with its pushes (`gateway.live_answers.Riding`, any game's events),
whichever of them comes first: the one that comes first waits for the other, briefly, and
they go in one write, the events first. Every other answer is sent by its maker at once. No
answer is lost or sent twice, whatever the order and whatever is cancelled."""

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


async def test_pushes_that_come_first_wait_for_the_answer_and_take_it_along() -> None:
    riding = Riding()
    riding.expect("seat0:m1")
    along = asyncio.create_task(riding.along([caused_by("seat0:m1"), follows()]))
    await asyncio.sleep(0)  # the pushes wait
    assert await riding.hand_over("answer", 6) is True  # the pushes send it
    assert await along == "answer"


async def test_an_answer_that_comes_first_waits_for_the_pushes_of_its_events() -> None:
    riding = Riding(after=4)
    riding.expect("seat0:m1")
    handing = asyncio.create_task(riding.hand_over("answer", 6))
    await asyncio.sleep(0)  # the answer waits
    assert await riding.along([caused_by("seat0:m1"), follows(6)]) == "answer"
    assert await handing is True


async def test_an_answer_waits_for_its_last_event_not_for_earlier_pushes() -> None:
    riding = Riding(after=3)
    riding.expect("seat0:m1")
    handing = asyncio.create_task(riding.hand_over("answer", 6))
    await asyncio.sleep(0)
    assert await asyncio.wait_for(riding.along([caused_by("seat1:x", 4)]), SOON) is None
    assert not handing.done()
    assert await riding.along([caused_by("seat0:m1", 5), follows(6)]) == "answer"
    assert await handing is True


async def test_a_refusal_or_an_answer_whose_events_went_is_sent_by_its_maker() -> None:
    riding = Riding(after=2)
    riding.expect("seat0:m1")
    assert await asyncio.wait_for(riding.hand_over("refused", None), SOON) is False
    riding.expect("seat0:m2")  # accepted before: its events are older than the socket's
    assert await asyncio.wait_for(riding.hand_over("again", 2), SOON) is False
    riding.expect("seat0:m3")
    assert await asyncio.wait_for(riding.along([caused_by("seat9:m3", 3)]), SOON) is None
    assert await asyncio.wait_for(riding.hand_over("pushed", 3), SOON) is False


async def test_pushes_another_command_caused_never_wait() -> None:
    riding = Riding()
    riding.expect("seat0:m1")
    for events in ([caused_by("seat1:m1")], [caused_by(None)], [follows()]):
        assert await asyncio.wait_for(riding.along(events), SOON) is None


async def test_without_a_command_in_flight_nothing_waits() -> None:
    riding = Riding()
    assert await asyncio.wait_for(riding.along([caused_by("seat0:m1")]), SOON) is None


@pytest.fixture
def briefly(monkeypatch: pytest.MonkeyPatch) -> Riding:
    """A socket with a command in flight (``seat0:m1``), whose waits run out after `SOON`."""
    monkeypatch.setattr(live_answers, "HOLD_S", SOON)
    riding = Riding()
    riding.expect("seat0:m1")
    return riding


async def test_pushes_stop_waiting_and_a_late_answer_goes_alone(briefly: Riding) -> None:
    assert await briefly.along([caused_by("seat0:m1")]) is None  # the wait ran out
    assert await briefly.hand_over("answer", 5) is False  # so its maker sends it


async def test_an_answer_stops_waiting_and_late_pushes_go_alone(briefly: Riding) -> None:
    assert await briefly.hand_over("answer", 5) is False  # the wait ran out: its maker sends it
    assert await asyncio.wait_for(briefly.along([caused_by("seat0:m1")]), SOON) is None


async def test_a_failed_command_releases_the_waiting_pushes() -> None:
    riding = Riding()
    riding.expect("seat0:m1")
    along = asyncio.create_task(riding.along([caused_by("seat0:m1")]))
    await asyncio.sleep(0)
    riding.failed()
    assert await along is None


async def test_an_answer_is_not_kept_by_pushes_cancelled_while_waiting() -> None:
    riding = Riding()
    riding.expect("seat0:m1")
    along = asyncio.create_task(riding.along([caused_by("seat0:m1")]))
    await asyncio.sleep(0)
    along.cancel()  # the channel closes
    with pytest.raises(asyncio.CancelledError):
        await along
    assert await asyncio.wait_for(riding.hand_over("answer", 5), SOON) is False


async def test_pushes_do_not_take_an_answer_whose_wait_was_cancelled() -> None:
    riding = Riding()
    riding.expect("seat0:m1")
    handing = asyncio.create_task(riding.hand_over("answer", 5))
    await asyncio.sleep(0)
    handing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await handing
    assert await asyncio.wait_for(riding.along([caused_by("seat0:m1")]), SOON) is None


async def test_each_command_is_its_own() -> None:
    riding = Riding()
    riding.expect("seat0:m1")
    along = asyncio.create_task(riding.along([caused_by("seat0:m1", 5)]))
    await asyncio.sleep(0)
    assert await riding.hand_over("first", 5) is True
    assert await along == "first"
    riding.expect("seat0:m2")
    assert await asyncio.wait_for(riding.along([caused_by("seat0:m1", 6)]), SOON) is None
    along = asyncio.create_task(riding.along([caused_by("seat0:m2", 7)]))
    await asyncio.sleep(0)
    assert await riding.hand_over("second", 7) is True
    assert await along == "second"


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
