"""``evolve``: an event applied to a state without checks (the event was decided already), one
evolver per event kind."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec.structs import replace

from gameplatform.sealed import Sealed, SealedChoice
from renaissance import commands as c
from renaissance import events as e
from renaissance import timing
from renaissance.components import (
    CENTRE,
    COLOURS,
    EMPTY,
    MONOMINO,
    components,
)
from renaissance.position import piece_index, set_at, square_of
from renaissance.state import GameState, Proposal


def _created(_: GameState | None, ev: e.GameCreated) -> GameState:
    state = GameState(
        game_id=ev.game_id,
        seed=ev.seed,
        sets=ev.sets,
        competition=ev.competition,
        clock=timing.started(ev.clock),
    )
    if isinstance(ev.variant, c.Variant):
        state = replace(
            state,
            play=ev.variant.play,
            extra_hands=tuple(ev.variant.extra_hands),
            distribution=ev.variant.distribution or "",
            phase2_agreement=ev.variant.phase2_agreement,
        )
    return state


def _joined(s: GameState, ev: e.PlayerJoined) -> GameState:
    assert ev.seat is not None
    return replace(s, names=set_at(s.names, ev.seat, ev.name))


def _set_started(s: GameState, ev: e.SetStarted) -> GameState:
    comps = components()
    cover = [EMPTY] * comps.squares
    for square in comps.blocked:
        cover[square] = CENTRE
    return replace(
        s,
        phase="setup",
        set_number=ev.set_number,
        silver_seat=ev.silver_seat,
        current=ev.silver_seat,
        cover=tuple(cover),
        markers=(-1,) * comps.squares,
        pool=tuple(range(len(comps.pieces))),
        lifted=(),
        protected=(),
        adjusting=False,
        supply=(0, 0),
        acquired=((), ()),
        removed=(),
        proposal=None,
        proposed=False,
        hands=((), ()),
        to_prepare=((0, 0), (0, 0)),
        move=None,
        last_move=None,
        set_points=(0, 0),
    )


def _piece_placed(s: GameState, ev: e.PiecePlaced) -> GameState:
    piece = piece_index(ev.piece)
    cover = list(s.cover)
    for cell in ev.squares:
        cover[square_of(cell)] = piece
    if ev.stage == "setup":
        protected = (*s.protected, piece) if s.lifted else s.protected
        pool = tuple(p for p in s.pool if p != piece)
        return replace(s, cover=tuple(cover), pool=pool, protected=protected)
    colour = COLOURS.index(ev.colour)
    hand = list(s.hands[colour])
    hand.remove(piece)
    hands = set_at(s.hands, colour, tuple(hand))
    return replace(s, cover=tuple(cover), hands=hands, phase="phase2_move")


def _relocation_required(s: GameState, _: e.RelocationRequired) -> GameState:
    return replace(s, phase="setup_lift", adjusting=True)


def _lifted(s: GameState, ev: e.PieceLifted) -> GameState:
    piece = piece_index(ev.piece)
    cover = tuple(EMPTY if p == piece else p for p in s.cover)
    return replace(
        s,
        cover=cover,
        pool=tuple(sorted((*s.pool, piece))),
        lifted=(*s.lifted, piece),
        phase="setup_lift" if ev.still_blocked else "setup",
    )


def _setup_completed(s: GameState, ev: e.SetupCompleted) -> GameState:
    cover = list(s.cover)
    for cell in ev.monominoes:
        cover[square_of(cell)] = MONOMINO
    markers = components().markers
    return replace(
        s,
        cover=tuple(cover),
        phase="phase1",
        current=ev.first_seat,
        supply=(markers, markers),
        pool=(),
        lifted=(),
    )


def _marker_placed(s: GameState, ev: e.MarkerPlaced) -> GameState:
    colour = COLOURS.index(ev.colour)
    square = components().square(ev.x, ev.y)
    markers = set_at(s.markers, square, colour)
    if ev.stage == "phase1":
        return replace(s, markers=markers, supply=set_at(s.supply, colour, s.supply[colour] - 1))
    monos, left = s.to_prepare[colour]
    return replace(s, markers=markers, to_prepare=set_at(s.to_prepare, colour, (monos, left - 1)))


def _monomino_placed(s: GameState, ev: e.MonominoPlaced) -> GameState:
    colour = COLOURS.index(ev.colour)
    square = components().square(ev.x, ev.y)
    monos, left = s.to_prepare[colour]
    return replace(
        s,
        cover=set_at(s.cover, square, MONOMINO),
        to_prepare=set_at(s.to_prepare, colour, (monos - 1, left)),
    )


def _pushed(s: GameState, ev: e.MarkersPushed) -> GameState:
    colour = COLOURS.index(ev.colour)
    markers = list(s.markers)
    moving = [(square_of(m.origin), square_of(m.target)) for m in ev.moved]
    colours = [markers[origin] for origin, _ in moving]
    for origin, _ in moving:
        markers[origin] = -1
    for (_, target), moved in zip(moving, colours, strict=True):
        markers[target] = moved
    markers[components().square(ev.x, ev.y)] = colour
    return replace(s, markers=tuple(markers), supply=set_at(s.supply, colour, s.supply[colour] - 1))


def _acquired(s: GameState, ev: e.PieceAcquired) -> GameState:
    piece = piece_index(ev.piece)
    colour = COLOURS.index(ev.colour)
    cover = list(s.cover)
    markers = list(s.markers)
    for cell in ev.squares:
        square = square_of(cell)
        cover[square] = MONOMINO
        markers[square] = -1
    supply = (s.supply[0] + ev.silver, s.supply[1] + ev.gold)
    acquired = set_at(s.acquired, colour, (*s.acquired[colour], piece))
    return replace(s, cover=tuple(cover), markers=tuple(markers), supply=supply, acquired=acquired)


def _proposed(s: GameState, ev: e.ProposalMade) -> GameState:
    assert ev.seat is not None
    proposal = Proposal(
        seat=ev.seat,
        kind=ev.kind,
        piece=piece_index(ev.piece) if ev.piece else -1,
        to=COLOURS.index(ev.to) if ev.to else -1,
    )
    phase = "phase2_answer" if s.phase == "phase2" else "phase1_answer"
    return replace(s, proposal=proposal, phase=phase, current=1 - ev.seat)


def _answered(s: GameState, _: e.ProposalAccepted | e.ProposalDeclined) -> GameState:
    assert s.proposal is not None
    phase = "phase2" if s.phase == "phase2_answer" else "phase1"
    return replace(s, proposal=None, phase=phase, current=s.proposal.seat, proposed=True)


def _turn_ended(s: GameState, ev: e.TurnEnded) -> GameState:
    phase = s.phase
    if phase in ("setup", "setup_lift"):
        phase = "setup"
    elif phase in ("phase2", "phase2_move"):
        phase = "phase2"
    return replace(
        s,
        phase=phase,
        current=ev.next_seat,
        proposed=False,
        lifted=(),
        last_move=None if ev.skipped else s.move,
        move=None,
    )


def _phase2_board(s: GameState, hands: tuple[tuple[int, ...], tuple[int, ...]]) -> GameState:
    """The Phase 2 "Cleanup": an empty board, ``hands`` in front of the players, Gold first."""
    comps = components()
    cover = tuple(CENTRE if sq in comps.blocked else EMPTY for sq in range(comps.squares))
    prepare = (comps.phase2_monominoes, comps.phase2_markers)
    return replace(
        s,
        phase="phase2_prep",
        current=s.gold_seat,
        cover=cover,
        markers=(-1,) * comps.squares,
        hands=hands,
        to_prepare=(prepare, prepare),
        supply=(0, 0),
        proposal=None,
        proposed=False,
    )


def _phase1_ended(s: GameState, ev: e.Phase1Ended) -> GameState:
    removed = tuple(piece_index(p) for p in ev.removed)
    hands = ((), ()) if s.play == "phase1" else s.acquired  # no Phase 2 to place them in
    return replace(_phase2_board(s, hands), removed=removed)


def _janken_started(s: GameState, ev: e.JankenStarted) -> GameState:
    return replace(
        s, phase="janken", current=s.gold_seat, janken=Sealed.open(2), janken_round=ev.round
    )


def _hand_shown(s: GameState, ev: e.HandShown) -> GameState:
    assert ev.seat is not None
    assert s.janken is not None
    janken = s.janken.put(ev.seat, SealedChoice(ev.commitment, ev.hand, ev.salt))
    waiting = janken.waiting_for()
    return replace(s, janken=janken, current=waiting[0] if waiting else s.current)


def _janken_played(s: GameState, ev: e.JankenPlayed) -> GameState:
    if ev.winner is None:
        return s
    return replace(s, phase="distribution", current=ev.winner, picks=0)


def _distributed(s: GameState, ev: e.PieceDistributed) -> GameState:
    piece, colour = piece_index(ev.piece), COLOURS.index(ev.colour)
    return replace(
        s,
        pool=tuple(p for p in s.pool if p != piece),
        hands=set_at(s.hands, colour, (*s.hands[colour], piece)),
        picks=s.picks + 1,
    )


def _distribution_completed(s: GameState, _: e.DistributionCompleted) -> GameState:
    return replace(_phase2_board(s, s.hands), janken=None)


def _points(s: GameState, ev: e.PointsScored) -> GameState:
    assert ev.seat is not None
    return replace(
        s,
        scores=set_at(s.scores, ev.seat, s.scores[ev.seat] + ev.points),
        set_points=set_at(s.set_points, ev.seat, s.set_points[ev.seat] + ev.points),
    )


def _prepared(s: GameState, ev: e.PreparationCompleted) -> GameState:
    return replace(s, phase="phase2", current=ev.first_seat, move=None, last_move=None)


def _moved(s: GameState, ev: e.MarkerMoved) -> GameState:
    origin, target = square_of(ev.origin), square_of(ev.target)
    markers = set_at(set_at(s.markers, target, s.markers[origin]), origin, -1)
    return replace(s, markers=markers, move=(origin, target))


def _move_skipped(s: GameState, _: e.MarkerMoveSkipped) -> GameState:
    return replace(s, move=None)


def _phase2_ended(s: GameState, _: e.Phase2Ended) -> GameState:
    return s


def _set_ended(s: GameState, ev: e.SetEnded) -> GameState:
    won = s.sets_won
    if len(ev.winners) == 1:
        won = set_at(won, ev.winners[0], won[ev.winners[0]] + 1)
    return replace(s, set_results=(*s.set_results, (ev.scores[0], ev.scores[1])), sets_won=won)


def _game_ended(s: GameState, ev: e.GameEnded) -> GameState:
    return replace(
        s, phase="finished", current=-1, ranking=tuple(ev.ranking), winners=tuple(ev.winners)
    )


def _left(s: GameState, ev: e.PlayerLeft) -> GameState:
    assert ev.seat is not None
    return replace(s, names=set_at(s.names, ev.seat, None))


def _cancelled(s: GameState, _: e.GameCancelled) -> GameState:
    return replace(s, phase="cancelled", current=-1)


def _timed_out(s: GameState, _: e.SeatTimedOut) -> GameState:
    return s  # the SeatResigned that follows puts the seat out


def _resigned(s: GameState, ev: e.SeatResigned) -> GameState:
    assert ev.seat is not None
    status = "resigned" if ev.reason == "resigned" else "removed"
    return replace(s, resigned=ev.seat, out_status=status)


_EVOLVERS: dict[type[e.Event], Callable[[Any, Any], GameState]] = {
    e.PlayerLeft: _left,
    e.GameCancelled: _cancelled,
    e.SeatResigned: _resigned,
    e.SeatTimedOut: _timed_out,
    e.GameCreated: _created,
    e.PlayerJoined: _joined,
    e.SetStarted: _set_started,
    e.PiecePlaced: _piece_placed,
    e.RelocationRequired: _relocation_required,
    e.PieceLifted: _lifted,
    e.SetupCompleted: _setup_completed,
    e.MarkerPlaced: _marker_placed,
    e.MonominoPlaced: _monomino_placed,
    e.MarkersPushed: _pushed,
    e.PieceAcquired: _acquired,
    e.ProposalMade: _proposed,
    e.ProposalAccepted: _answered,
    e.ProposalDeclined: _answered,
    e.TurnEnded: _turn_ended,
    e.Phase1Ended: _phase1_ended,
    e.PointsScored: _points,
    e.PreparationCompleted: _prepared,
    e.MarkerMoved: _moved,
    e.MarkerMoveSkipped: _move_skipped,
    e.Phase2Ended: _phase2_ended,
    e.SetEnded: _set_ended,
    e.GameEnded: _game_ended,
    e.JankenStarted: _janken_started,
    e.HandShown: _hand_shown,
    e.JankenPlayed: _janken_played,
    e.PieceDistributed: _distributed,
    e.DistributionCompleted: _distribution_completed,
}


def evolve(state: GameState | None, event: e.Event) -> GameState:
    """Apply one event, without checks (the event was decided already)."""
    new = _EVOLVERS[type(event)](state, event)
    if new.clock is not None:
        new = timing.after_event(new, event)
    return replace(new, version=event.version, last_hash=event.hash)
