"""What a seat (or a spectator) may see.

Secret: the order of the prize deck (until the seed is revealed at the end: the cards left are
known, not their order) and a sealed bid (until both seats have bid: the other seat and the
spectators see that a seat has bid, not what). Everything else is open: the cards a seat has
not yet shown are known to both, since every bid is revealed once both have bid.
"""

from __future__ import annotations

from typing import TypeVar, cast

import msgspec
from msgspec.structs import replace

from gameplatform.interface import Clock, platform_clock
from goofspiel import events as e
from goofspiel.state import NO_BID, SEALED, GameState

E = TypeVar("E", bound=e.Event)

COLOURS = ("spades", "hearts")
"""Each seat's suit (the prizes are diamonds)."""


class SeatView(msgspec.Struct, frozen=True):
    seat: int
    name: str | None
    suit: str
    score: int
    cards: list[int]
    """The cards this seat has not yet shown (a sealed bid among them)."""
    has_bid: bool
    bid: int | None
    """The sealed bid, to its own seat only (None to everyone else, and before it bids)."""
    won: list[int]
    shown: list[int]
    status: str = "playing"
    """``playing``, ``bot`` (a bot bids for it since its time ran out), ``resigned`` or
    ``removed`` (its time ran out in a game whose clock removes such seats)."""


class GameView(msgspec.Struct, frozen=True):
    game_id: str
    game: str
    version: int
    viewer: int | None
    phase: str
    current_seat: int | None
    turn: int
    turns: int
    ties: str
    prize: int | None
    pot: list[int]
    prizes_left: list[int]
    """The prizes still face down, in card order (their order is secret)."""
    seats: list[SeatView]
    discarded: list[int]
    last_bids: list[int]
    ranking: list[int]
    winners: list[int]
    seed: str
    seed_commitment: str
    resigned: int | None = None
    hidden_information: bool = True
    clock: Clock | None = None
    """The turn clock (rulings, 10), where the game has one: whose time runs, until when."""


def prizes_left(state: GameState) -> list[int]:
    return sorted(state.prizes[state.turn :])


def _seat(state: GameState, seat: int, viewer: int | None) -> SeatView:
    bid = state.bids[seat]
    return SeatView(
        seat=seat,
        name=state.names[seat],
        suit=COLOURS[seat],
        score=state.scores[seat],
        cards=sorted(state.hands[seat]),
        has_bid=bid != NO_BID,
        bid=bid if bid > SEALED and viewer == seat else None,
        won=list(state.won[seat]),
        shown=list(state.shown[seat]),
        status=state.statuses[seat],
    )


def view(state: GameState, viewer: int | None) -> GameView:
    """What ``viewer`` (None: a spectator) may see of the game."""
    return GameView(
        game_id=state.game_id,
        game="goofspiel",
        version=state.version,
        viewer=viewer,
        phase=state.phase,
        current_seat=state.to_move,
        turn=state.turn,
        turns=state.cards,
        ties=state.ties,
        prize=state.prize,
        pot=list(state.pot),
        prizes_left=prizes_left(state),
        seats=[_seat(state, seat, viewer) for seat in (0, 1)],
        discarded=list(state.discarded),
        last_bids=[shown[-1] for shown in state.shown] if state.shown[0] else [],
        ranking=list(state.ranking),
        winners=list(state.winners),
        seed=state.seed,
        seed_commitment=state.commitment,
        resigned=state.resigned,
        clock=platform_clock(state.clock),
    )


def visible_event(event: E, viewer: int | None) -> E:
    """The event as ``viewer`` may see it: secrets blanked, never dropped; no hash chain (a
    hash would let a viewer try the 13 cards a blanked bid could be)."""
    return cast(E, _visible_event(event, viewer))  # the event keeps its type


def _visible_event(event: e.Event, viewer: int | None) -> e.Event:
    event = replace(event, hash="", prev_hash="")
    if event.cause is not None and event.seat != viewer:
        event = replace(event, cause=None)  # a bid's command names its card
    match event:
        case e.GameCreated():
            return replace(event, prizes=[])
        case e.BidSealed(seat=seat) if seat != viewer:
            return replace(event, card=SEALED)
    return event


def perspective(state: GameState, viewer: int | None) -> GameState:
    """The whole state as ``viewer`` may know it: the prizes face down in card order and the
    other seat's sealed bid as ``SEALED``; the same table and the same legal actions."""
    if state.is_over:
        return state
    bids = tuple(
        SEALED if bid > SEALED and seat != viewer else bid for seat, bid in enumerate(state.bids)
    )
    prizes = (*state.prizes[: state.turn], *prizes_left(state))
    return replace(state, bids=bids, prizes=prizes)
