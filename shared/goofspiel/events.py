"""Events: what happened, past tense, frozen and tagged by ``type``.

Every event carries the game id, its version (1-based position in the stream), the acting seat
(None for the rules themselves) and the hash chain (``prev_hash``/``hash``, see
``gameplatform.chain``). Two fields are secret until the end or until both seats have bid:
``GameCreated.prizes`` (the shuffled prize deck) and ``BidSealed.card``; ``view.visible_event``
blanks them for whoever may not see them. New fields must get defaults.
"""

from __future__ import annotations

from typing import cast

import msgspec

from gameplatform import chain
from gameplatform.chain import encode as encode
from gameplatform.chain import seal as seal
from gameplatform.clock import TimeControl
from gameplatform.forms import decoder
from goofspiel.commands import AnyCommand


class Cause(msgspec.Struct, frozen=True):
    """The command that caused a batch (on its first event), the client's id and the time."""

    command: AnyCommand
    command_id: str | None = None
    time: str | None = None


class Event(chain.Event, frozen=True, kw_only=True):
    """The platform's event (see `gameplatform.chain`), its cause one of Goofspiel's commands."""

    cause: Cause | None = None


class GameCreated(Event, frozen=True):
    players: int
    cards: int
    ties: str
    seed_commitment: str
    prizes: list[int]
    """The prize deck top first (secret: blanked for every viewer until the end)."""
    chosen_seed: bool = False
    clock: TimeControl | msgspec.UnsetType = msgspec.UNSET
    """The turn clock, where the game has one (left out otherwise)."""


class PlayerJoined(Event, frozen=True):
    name: str


class GameStarted(Event, frozen=True):
    pass


class PrizeRevealed(Event, frozen=True):
    """The top prize turned up for ``turn``; ``pot``: every prize the turn's winner takes (the
    prizes carried over from tied turns, then this one)."""

    turn: int
    prize: int
    pot: list[int]


class BidSealed(Event, frozen=True):
    """``seat`` laid a card face down. ``card`` is secret until both have bid (0 when blanked)."""

    card: int


class BidsRevealed(Event, frozen=True):
    """Both bids turned up: ``winner`` takes the pot's ``points`` (None: a tie, the pot is
    ``discarded`` or carried over to the next turn)."""

    turn: int
    bids: list[int]
    pot: list[int]
    winner: int | None
    points: int
    discarded: bool


class PlayerResigned(Event, frozen=True):
    """``seat`` conceded: no more prizes are played; the other seat wins."""


class PlayerLeft(Event, frozen=True):
    """``seat``'s player left the lobby (``reason``: ``left``) or the host freed the seat
    (``removed``): the seat is open again."""

    reason: str


class GameCancelled(Event, frozen=True):
    """The host called the game off before its start: nothing follows."""


class SeatTimedOut(Event, frozen=True):
    """``seat``'s time ran out at ``deadline``. ``on_timeout``: ``bot`` (the rules bid for it
    from now on, the lowest card of its hand) or ``remove`` (it loses, as a resignation
    does: no more prizes are played)."""

    deadline: str
    on_timeout: str


class SeatReclaimed(Event, frozen=True):
    """The player of ``seat`` took it back from the bot: it bids for itself again."""


class GameEnded(Event, frozen=True):
    """The last prize is settled and the seed revealed: the final result."""

    seed: str
    salt: str
    scores: list[int]
    ranking: list[int]
    winners: list[int]
    discarded: list[int]
    """Every prize nobody won."""


AnyEvent = (
    GameCreated
    | PlayerJoined
    | GameStarted
    | PrizeRevealed
    | BidSealed
    | BidsRevealed
    | PlayerResigned
    | GameEnded
    | PlayerLeft
    | GameCancelled
    | SeatTimedOut
    | SeatReclaimed
)


def decode(data: bytes | str) -> Event:
    """An event from its JSON (the platform's cached decoder of the union)."""
    return cast("Event", decoder(AnyEvent).decode(data))


def points_awarded(event: Event) -> list[tuple[int, int, str]]:
    """Every (seat, points, reason) an event awards: the scores are the sum of these."""
    if isinstance(event, BidsRevealed) and event.winner is not None:
        cards = " + ".join(str(card) for card in event.pot)
        reason = f"turn {event.turn}: bid {event.bids[event.winner]} won the prize {cards}"
        return [(event.winner, event.points, reason)]
    return []
