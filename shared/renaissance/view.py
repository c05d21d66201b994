"""What a seat (or a spectator) may see: everything but a Janken hand not yet revealed.

The rules as written hide nothing: the pieces lie open on the board, both supplies of markers
and both collections of pieces are in front of the players, and nothing is dealt by chance. So
every viewer gets the same view (only ``viewer`` differs) and events are shown as stored, less
the hash chain (views never carry it, as in Renature). The one secret is a Janken's sealed hand
(Play only Phase 2, ruling 15): until both seats have shown, a hand and its salt are shown to
their own seat alone, in the view, the state a seat reads (`masked_state`) and the events.
"""

from __future__ import annotations

from typing import TypeVar, cast

import msgspec
from msgspec.structs import replace

from gameplatform.sealed import Sealed
from renaissance import events as e
from renaissance.components import CENTRE, COLOURS, EMPTY, MONOMINO, components
from renaissance.placement import covered_pieces
from renaissance.position import piece_name
from renaissance.scoring import hands_made, penalty, phase1_points
from renaissance.state import GameState

E = TypeVar("E", bound=e.Event)


class SquareView(msgspec.Struct, frozen=True):
    """One square: ``piece`` is a polyomino id, ``monomino``, ``centre`` or None (free)."""

    x: int
    y: int
    piece: str | None
    marker: str | None


class SeatView(msgspec.Struct, frozen=True):
    seat: int
    name: str | None
    colour: str
    score: int
    set_points: int
    markers_in_hand: int
    acquired: list[str]
    phase1_points: int
    hands: list[tuple[str, int]]
    pieces_in_hand: list[str]
    penalty_now: int
    to_prepare: tuple[int, int]


class ProposalView(msgspec.Struct, frozen=True):
    seat: int
    kind: str
    piece: str | None
    to: str | None


class JankenView(msgspec.Struct, frozen=True):
    """The Janken under way (or just played): each seat's commitment (empty: not shown yet)
    and its hand, None while it is sealed to this viewer."""

    round: int
    commitments: list[str]
    hands: list[str | None]


class GameView(msgspec.Struct, frozen=True):
    game_id: str
    game: str
    version: int
    viewer: int | None
    phase: str
    current_seat: int | None
    set_number: int
    sets: int
    competition: str
    seats: list[SeatView]
    board: list[SquareView]
    supply: list[str]
    """Set-up: the polyominoes not yet on the board; Play only Phase 2: those not yet
    distributed."""
    lifted: list[str]
    protected: list[str]
    tied: list[str]
    """Fully covered polyominoes waiting for a majority."""
    removed: list[str]
    proposal: ProposalView | None
    last_move: tuple[tuple[int, int], tuple[int, int]] | None
    set_results: list[list[int]]
    sets_won: list[int]
    ranking: list[int]
    winners: list[int]
    hidden_information: bool = False
    play: str = "both"
    extra_hands: list[str] = []
    distribution: str | None = None
    phase2_agreement: bool = False
    janken: JankenView | None = None


def _square(state: GameState, square: int) -> SquareView:
    comps = components()
    x, y = comps.xy(square)
    cover = state.cover[square] if state.cover else EMPTY
    piece: str | None
    if cover == CENTRE:
        piece = "centre"
    elif cover == MONOMINO:
        piece = "monomino"
    elif cover == EMPTY:
        piece = None
    else:
        piece = piece_name(cover)
    marker = state.markers[square] if state.markers else -1
    return SquareView(x, y, piece, COLOURS[marker] if marker >= 0 else None)


def _seat(state: GameState, seat: int) -> SeatView:
    colour = state.colour_of(seat)
    acquired = state.acquired[colour]
    hand = state.hands[colour]
    return SeatView(
        seat=seat,
        name=state.names[seat],
        colour=COLOURS[colour],
        score=state.scores[seat],
        set_points=state.set_points[seat],
        markers_in_hand=state.supply[colour],
        acquired=[piece_name(p) for p in acquired],
        phase1_points=phase1_points(acquired),
        hands=hands_made(acquired),
        pieces_in_hand=[piece_name(p) for p in hand],
        penalty_now=penalty(hand),
        to_prepare=state.to_prepare[colour],
    )


def view(state: GameState, viewer: int | None) -> GameView:
    """What ``viewer`` (a seat, or None for a spectator) sees: the whole game."""
    comps = components()
    proposal = state.proposal
    xy = comps.xy
    return GameView(
        game_id=state.game_id,
        game="renaissance",
        version=state.version,
        viewer=viewer,
        phase=state.phase,
        current_seat=state.current if state.current >= 0 else None,
        set_number=state.set_number,
        sets=state.sets,
        competition=state.competition,
        seats=[_seat(state, seat) for seat in (0, 1)],
        board=[_square(state, sq) for sq in range(comps.squares)] if state.cover else [],
        supply=[piece_name(p) for p in state.pool],
        lifted=[piece_name(p) for p in state.lifted],
        protected=[piece_name(p) for p in state.protected],
        tied=[piece_name(p) for p, s, g in covered_pieces(state) if s == g] if state.cover else [],
        removed=[piece_name(p) for p in state.removed],
        proposal=ProposalView(
            proposal.seat,
            proposal.kind,
            piece_name(proposal.piece) if proposal.piece >= 0 else None,
            COLOURS[proposal.to] if proposal.to >= 0 else None,
        )
        if proposal
        else None,
        last_move=(xy(state.last_move[0]), xy(state.last_move[1])) if state.last_move else None,
        set_results=[list(r) for r in state.set_results],
        sets_won=list(state.sets_won),
        ranking=list(state.ranking),
        winners=list(state.winners),
        play=state.play,
        extra_hands=list(state.extra_hands),
        distribution=state.distribution or None,
        phase2_agreement=state.phase2_agreement,
        janken=_janken(state.janken, state.janken_round, viewer),
    )


def _janken(janken: Sealed | None, number: int, viewer: int | None) -> JankenView | None:
    if janken is None:
        return None
    seen = janken.masked(viewer)
    return JankenView(
        round=number,
        commitments=[slot.commitment for slot in seen.slots],
        hands=[slot.choice or None for slot in seen.slots],
    )


def masked_state(state: GameState, viewer: int | None) -> GameState:
    """The whole state as ``viewer`` may read it: a sealed hand of another seat blanked."""
    if state.janken is None or state.janken.is_complete:
        return state
    return replace(state, janken=state.janken.masked(viewer))


def visible_event(event: E, viewer: int | None) -> E:
    """The event as ``viewer`` sees it: as stored, without the hash chain; another seat's
    sealed hand shows its commitment only (``JankenPlayed`` reveals both hands)."""
    return cast(E, _visible_event(event, viewer))  # the event keeps its type


def _visible_event(event: e.Event, viewer: int | None) -> e.Event:
    if isinstance(event, e.HandShown) and event.seat != viewer:
        event = replace(event, hand="", salt="", cause=None)
    return replace(event, hash="", prev_hash="")
