"""The rules of Renaissance: ``decide`` validates a command and returns events, ``evolve`` applies
an event without checks, ``legal_actions`` lists every command a seat may give now.

Quotes in docstrings are from the English rule text (shared seeds, ``renaissance-rules-en``);
"ruling N" points at docs/rules-renaissance.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import msgspec
from msgspec.structs import replace

from gameplatform import execution
from gameplatform.sealed import Sealed, SealedChoice, salt_problem
from renaissance import commands as c
from renaissance import events as e
from renaissance import timing
from renaissance.components import (
    CENTRE,
    COLOURS,
    EMPTY,
    MONOMINO,
    Direction,
    around_centre,
    components,
    diagonals,
    inward,
    is_outer,
    mask,
    neighbours,
    placement_set,
    placements,
    ring_neighbours,
    step,
)
from renaissance.errors import (
    GameOver,
    IllegalChoice,
    IllegalMarker,
    IllegalMove,
    IllegalPreparation,
    IllegalProposal,
    IllegalPush,
    InvalidCommand,
    NotYourTurn,
    PieceDoesNotFit,
    RelocationRule,
    RuleError,
    WrongPhase,
)
from renaissance.figures import extra_hands_made
from renaissance.packing import can_pack, shape_counts
from renaissance.state import GameState, Proposal

# --- small helpers -----------------------------------------------------------------------------


def at(square: int) -> e.At:
    return e.At(*components().xy(square))


def square_of(cell: c.Square | e.At) -> int:
    return components().square(cell.x, cell.y)


def _set(values: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    return (*values[:index], value, *values[index + 1 :])


def piece_index(piece_id: str) -> int:
    piece = components().piece(piece_id)
    if piece is None:
        names = ", ".join(p.id for p in components().pieces)
        raise InvalidCommand(f"There is no piece {piece_id!r}; the pieces are {names}.")
    return piece.index


def piece_name(piece: int) -> str:
    return components().pieces[piece].id


def squares_of_piece(state: GameState, piece: int) -> tuple[int, ...]:
    return tuple(sq for sq, p in enumerate(state.cover) if p == piece)


def pieces_on_board(state: GameState) -> list[int]:
    """The polyominoes lying on the board (monominoes are not pieces anyone takes: ruling 2)."""
    return sorted({p for p in state.cover if p >= 0 and p != MONOMINO})


def free_mask(state: GameState) -> int:
    """Squares with neither a piece nor a marker on them."""
    return mask([sq for sq, p in enumerate(state.cover) if p == EMPTY and state.markers[sq] < 0])


def _board_square(cell: c.Square, broken: type[RuleError], what: str) -> int:
    comps = components()
    if not comps.on_board(cell.x, cell.y):
        raise broken(f"({cell.x}, {cell.y}) is off the board: {what} goes on the 7x7 board.")
    return comps.square(cell.x, cell.y)


# --- evolve ------------------------------------------------------------------------------------


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
    return replace(s, names=_set(s.names, ev.seat, ev.name))


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
    hands = _set(s.hands, colour, tuple(hand))
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
    markers = _set(s.markers, square, colour)
    if ev.stage == "phase1":
        return replace(s, markers=markers, supply=_set(s.supply, colour, s.supply[colour] - 1))
    monos, left = s.to_prepare[colour]
    return replace(s, markers=markers, to_prepare=_set(s.to_prepare, colour, (monos, left - 1)))


def _monomino_placed(s: GameState, ev: e.MonominoPlaced) -> GameState:
    colour = COLOURS.index(ev.colour)
    square = components().square(ev.x, ev.y)
    monos, left = s.to_prepare[colour]
    return replace(
        s,
        cover=_set(s.cover, square, MONOMINO),
        to_prepare=_set(s.to_prepare, colour, (monos - 1, left)),
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
    return replace(s, markers=tuple(markers), supply=_set(s.supply, colour, s.supply[colour] - 1))


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
    acquired = _set(s.acquired, colour, (*s.acquired[colour], piece))
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
        hands=_set(s.hands, colour, (*s.hands[colour], piece)),
        picks=s.picks + 1,
    )


def _distribution_completed(s: GameState, _: e.DistributionCompleted) -> GameState:
    return replace(_phase2_board(s, s.hands), janken=None)


def _points(s: GameState, ev: e.PointsScored) -> GameState:
    assert ev.seat is not None
    return replace(
        s,
        scores=_set(s.scores, ev.seat, s.scores[ev.seat] + ev.points),
        set_points=_set(s.set_points, ev.seat, s.set_points[ev.seat] + ev.points),
    )


def _prepared(s: GameState, ev: e.PreparationCompleted) -> GameState:
    return replace(s, phase="phase2", current=ev.first_seat, move=None, last_move=None)


def _moved(s: GameState, ev: e.MarkerMoved) -> GameState:
    origin, target = square_of(ev.origin), square_of(ev.target)
    markers = _set(_set(s.markers, target, s.markers[origin]), origin, -1)
    return replace(s, markers=markers, move=(origin, target))


def _move_skipped(s: GameState, _: e.MarkerMoveSkipped) -> GameState:
    return replace(s, move=None)


def _phase2_ended(s: GameState, _: e.Phase2Ended) -> GameState:
    return s


def _set_ended(s: GameState, ev: e.SetEnded) -> GameState:
    won = s.sets_won
    if len(ev.winners) == 1:
        won = _set(won, ev.winners[0], won[ev.winners[0]] + 1)
    return replace(s, set_results=(*s.set_results, (ev.scores[0], ev.scores[1])), sets_won=won)


def _game_ended(s: GameState, ev: e.GameEnded) -> GameState:
    return replace(
        s, phase="finished", current=-1, ranking=tuple(ev.ranking), winners=tuple(ev.winners)
    )


def _left(s: GameState, ev: e.PlayerLeft) -> GameState:
    assert ev.seat is not None
    return replace(s, names=_set(s.names, ev.seat, None))


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


# --- what the position allows ------------------------------------------------------------------


def free_placements(state: GameState, piece: int) -> Iterator[tuple[int, ...]]:
    """Placements of ``piece`` on squares with no piece and no marker."""
    free = free_mask(state)
    for squares in placements(components().pieces[piece].shape_index):
        if mask(squares) & free == mask(squares):
            yield squares


def fits_somewhere(state: GameState, pieces: tuple[int, ...]) -> bool:
    return any(next(free_placements(state, p), None) is not None for p in pieces)


def pieces_fit(state: GameState, pieces: tuple[int, ...], taken: tuple[int, ...] = ()) -> bool:
    """Can all ``pieces`` still be laid on the free squares, ``taken`` squares aside?"""
    return can_pack(free_mask(state) & ~mask(taken), shape_counts(pieces))


def setup_placements(state: GameState) -> list[tuple[int, tuple[int, ...]]]:
    """(piece, squares) the seat to move may place in the set-up. During the relocation every
    placement must leave the pieces after it room to fit (ruling 4)."""
    out = []
    for piece in state.pool:
        if piece in state.lifted:
            continue
        rest = tuple(p for p in state.pool if p != piece)
        for squares in free_placements(state, piece):
            if not state.adjusting or pieces_fit(state, rest, squares):
                out.append((piece, squares))
    return out


def liftable(state: GameState) -> list[int]:
    return [p for p in pieces_on_board(state) if p not in state.protected]


def may_place_marker_on(state: GameState, colour: int, square: int) -> bool:
    """The "Instructions in placing Markers" for a free square (supply aside)."""
    if square in around_centre():
        return True
    own = state.markers
    if any(own[d] == colour for d in diagonals(square)):
        return True
    return any(own[n] == colour for n in ring_neighbours(square))


def marker_squares(state: GameState, colour: int) -> list[int]:
    if state.supply[colour] <= 0:
        return []
    return [
        sq
        for sq, p in enumerate(state.cover)
        if p != CENTRE and state.markers[sq] < 0 and may_place_marker_on(state, colour, sq)
    ]


def push_run(state: GameState, square: int, direction: str) -> list[int] | None:
    """The markers a push-in at ``square`` moves (from ``square`` on), or None when it would push
    one off the board or into the centre."""
    run = []
    at_square: int | None = square
    while at_square is not None and state.markers[at_square] >= 0:
        run.append(at_square)
        at_square = step(at_square, direction)
    if at_square is None or state.cover[at_square] == CENTRE:
        return None
    return run


def may_push_at(state: GameState, colour: int, square: int) -> bool:
    """Push-in at one's own marker on the outer ring, or at the outer squares next to it."""
    if not is_outer(square) or state.markers[square] < 0:
        return False
    if state.markers[square] == colour:
        return True
    return any(state.markers[n] == colour for n in ring_neighbours(square))


def pushes(state: GameState, colour: int) -> list[tuple[int, Direction]]:
    if state.supply[colour] <= 0:
        return []
    return [
        (sq, direction)
        for sq in range(len(state.markers))
        if may_push_at(state, colour, sq)
        for direction in inward(sq)
        if push_run(state, sq, direction) is not None
    ]


def can_place_marker(state: GameState, seat: int) -> bool:
    colour = state.colour_of(seat)
    return bool(marker_squares(state, colour) or pushes(state, colour))


def phase2_placements(state: GameState, colour: int) -> list[tuple[int, tuple[int, ...]]]:
    """(piece, squares): "placed on squares which have at least one common adjacent sides with
    the squares where his/her own Markers are placed"."""
    own = {sq for sq, m in enumerate(state.markers) if m == colour}
    beside = {n for sq in own for n in neighbours(sq)}
    out = []
    for piece in sorted(set(state.hands[colour])):
        for squares in free_placements(state, piece):
            if beside.intersection(squares):
                out.append((piece, squares))
    return out


def can_place_piece(state: GameState, seat: int) -> bool:
    return bool(phase2_placements(state, state.colour_of(seat)))


def marker_moves(state: GameState) -> list[tuple[int, int]]:
    """Every marker step: one square across a side onto a free square, and not back to where the
    same marker stood the turn before ("Undo" cannot be done)."""
    out = []
    for origin, colour in enumerate(state.markers):
        if colour < 0:
            continue
        for target in neighbours(origin):
            if state.cover[target] != EMPTY or state.markers[target] >= 0:
                continue
            if state.last_move == (target, origin):
                continue
            out.append((origin, target))
    return out


def preparation_squares(state: GameState) -> list[int]:
    """Free squares sharing no side with a marker or monomino (fig17)."""
    return [
        sq
        for sq, p in enumerate(state.cover)
        if p == EMPTY
        and state.markers[sq] < 0
        and not any(state.markers[n] >= 0 or state.cover[n] == MONOMINO for n in neighbours(sq))
    ]


def hands_made(pieces: tuple[int, ...] | list[int]) -> list[tuple[str, int]]:
    """(hand, points) for every hand the pieces make ("The points are accumulated")."""
    comps = components()
    tags: dict[str, int] = {}
    for piece in pieces:
        for tag in comps.pieces[piece].tags:
            tags[tag] = tags.get(tag, 0) + 1
    out = []
    for hand in comps.hands:
        if all(tags.get(tag, 0) >= n for tag, n in hand.needs):
            points = hand.points + hand.per_piece * tags.get(hand.counted, 0)
            out.append((hand.name, points))
    return out


def phase1_points(pieces: tuple[int, ...] | list[int]) -> int:
    """1 point per polyomino plus the hands."""
    return len(pieces) + sum(points for _, points in hands_made(pieces))


def penalty(pieces: tuple[int, ...] | list[int]) -> int:
    """Phase 2: 2 per domino, 3 per triomino, 4 per tetromino left unplaced."""
    return sum(components().pieces[p].size for p in pieces)


# --- decide ------------------------------------------------------------------------------------


_Batch = execution.Batch[GameState, e.Event]
"""Events of one command (the platform's batch): ``emit(Kind, **fields)`` makes, applies and
seals each."""


def _create(cmd: c.CreateGame) -> e.GameCreated:
    if cmd.players != 2:
        raise InvalidCommand("Renaissance is a game for 2 players.")
    if not cmd.game_id or len(cmd.game_id) > 64:
        raise InvalidCommand("A game id must have 1 to 64 characters.")
    if not cmd.seed:
        raise InvalidCommand("A game needs a seed (it seeds the bots).")
    if isinstance(cmd.variant, c.Variant) and (problem := variant_problem(cmd.variant)):
        raise InvalidCommand(problem)
    return e.GameCreated(
        game_id=cmd.game_id,
        version=1,
        seed=cmd.seed,
        players=2,
        sets=cmd.sets,
        competition=cmd.competition,
        pieces=[
            e.PieceInfo(p.id, [e.At(x, y) for x, y in p.shape], list(p.tags))
            for p in components().pieces
        ],
        clock=timing.checked_control(cmd.clock),
        variant=cmd.variant,
    )


def variant_problem(variant: c.Variant) -> str | None:
    """Why a variant cannot be played (None when it can): each option belongs to its variant."""
    if variant.extra_hands and variant.play != "phase1":
        return "Extra hands are for a game of Phase 1 only (play: phase1)."
    if len(set(variant.extra_hands)) != len(variant.extra_hands):
        return "Name each extra hand once."
    if variant.distribution is not None and variant.play != "phase2":
        return "A distribution of the pieces is for a game of Phase 2 only (play: phase2)."
    if variant.phase2_agreement and variant.play == "phase1":
        return "A game of Phase 1 only has no Phase 2 to end by agreement."
    return None


def _join(b: _Batch, cmd: c.JoinGame) -> None:
    s = b.state
    if s.phase != "lobby":
        raise WrongPhase("The game has started; no more players can join.")
    if s.names[cmd.seat] is not None:
        raise InvalidCommand(f"Seat {cmd.seat} is taken already.")
    if not cmd.name or len(cmd.name) > 64:
        raise InvalidCommand("A player's name must have 1 to 64 characters.")
    b.emit(e.PlayerJoined, seat=cmd.seat, name=cmd.name)


def _lobby_seat(s: GameState, seat: int) -> None:
    if s.phase != "lobby":
        raise WrongPhase("The game has started: resign instead of leaving.")
    if s.names[seat] is None:
        raise InvalidCommand(f"Nobody sits on seat {seat}.")


def _leave(b: _Batch, cmd: c.LeaveGame) -> None:
    _lobby_seat(b.state, cmd.seat)
    b.emit(e.PlayerLeft, seat=cmd.seat, reason="left")


def _remove_player(b: _Batch, cmd: c.RemovePlayer) -> None:
    _lobby_seat(b.state, cmd.seat)
    b.emit(e.PlayerLeft, seat=cmd.seat, reason="removed")


def _cancel(b: _Batch, _: c.CancelGame) -> None:
    s = b.state
    if s.phase in ("cancelled", "finished"):
        raise GameOver("The game is over.")
    if s.phase != "lobby":
        raise WrongPhase("Only a game that has not started can be cancelled.")
    b.emit(e.GameCancelled)


def _resign(b: _Batch, cmd: c.Resign) -> None:
    """The seat gives up: the other seat wins the game, whatever the scores (rulings,
    "Resigning"); the scores stand as they are."""
    s = b.state
    if s.phase == "lobby":
        raise WrongPhase("The game has not started: leave the lobby instead.")
    if s.phase in ("cancelled", "finished"):
        raise GameOver("The game is over.")
    _concede(b, cmd.seat, "resigned")


def _claim_timeout(b: _Batch, cmd: c.ClaimTimeout) -> None:
    """The seat whose time ran out loses, as if it resigned (ruling 18); refused before the
    deadline by the batch's recorded time."""
    s = b.state
    if s.phase == "lobby":
        raise WrongPhase("The game has not started: no clock runs.")
    if s.phase in ("cancelled", "finished"):
        raise GameOver("The game is over.")
    deadline = timing.deadline_passed(s, cmd.seat, b.cause.time if b.cause else None)
    b.emit(e.SeatTimedOut, seat=cmd.seat, deadline=deadline, on_timeout="remove")
    _concede(b, cmd.seat, "timeout")


def _concede(b: _Batch, seat: int, reason: str) -> None:
    """``seat`` is out: the other seat wins, the scores stand as they are."""
    s = b.state
    other = 1 - seat
    b.emit(e.SeatResigned, seat=seat, reason=reason)
    b.emit(
        e.GameEnded,
        scores=list(s.scores),
        sets_won=list(s.sets_won),
        competition=s.competition,
        ranking=[other, seat],
        winners=[other],
    )


def _start(b: _Batch, _: c.StartGame) -> None:
    s = b.state
    if s.phase != "lobby":
        raise WrongPhase("The game has started already.")
    if None in s.names:
        raise WrongPhase("Renaissance needs both seats taken before it starts.")
    _begin_set(b, 1, 0)


def _begin_set(b: _Batch, number: int, silver: int) -> None:
    """A new set: the set-up, or in a game of Phase 2 only the first Janken (ruling 14)."""
    b.emit(e.SetStarted, set_number=number, silver_seat=silver, gold_seat=1 - silver)
    if b.state.play == "phase2":
        _call_janken(b)


def _call_janken(b: _Batch) -> None:
    s = b.state
    pieces = [piece_name(p) for p in s.pool]
    b.emit(e.JankenStarted, round=s.janken_round + 1, pieces_left=pieces)


def _check_turn(s: GameState, seat: int, *phases: str) -> None:
    if s.is_over:
        raise GameOver("The game is over.")
    if s.phase not in phases:
        raise WrongPhase(f"That is not a move of this step of the game ({_step_name(s)}).")
    if seat != s.current:
        raise NotYourTurn(f"It is seat {s.current}'s turn ({_step_name(s)}).")


def _step_name(s: GameState) -> str:
    return {
        "lobby": "waiting for players",
        "setup": "arranging the polyominoes",
        "setup_lift": "the relocation: a polyomino must be taken off the board",
        "phase1": "Phase 1: placing markers",
        "phase1_answer": "Phase 1: a proposal waits for an answer",
        "janken": "Janken: both players show a hand",
        "distribution": "distributing the polyominoes",
        "phase2_answer": "Phase 2: a proposal to end it waits for an answer",
        "phase2_prep": "Phase 2 preparation: placing the monomino and 3 markers",
        "phase2": "Phase 2: placing a polyomino",
        "phase2_move": "Phase 2: moving a marker",
        "finished": "the game is over",
    }[s.phase]


def _piece_squares(cmd: c.PlacePiece, piece: int) -> tuple[int, ...]:
    comps = components()
    squares = tuple(_board_square(cell, PieceDoesNotFit, "a polyomino") for cell in cmd.squares)
    if any(sq in comps.blocked for sq in squares):
        raise PieceDoesNotFit("No piece can enter the center square.")
    if list(squares) != sorted(set(squares)):
        raise InvalidCommand("List a piece's squares once each, in reading order (by y, then x).")
    if squares not in placement_set(comps.pieces[piece].shape_index):
        raise PieceDoesNotFit(
            f"Those squares do not form {comps.pieces[piece].id} (rotated or flipped)."
        )
    return squares


def _place_piece(b: _Batch, cmd: c.PlacePiece) -> None:
    s = b.state
    if s.phase == "setup_lift" and cmd.seat == s.current:
        raise RelocationRule(
            "The pieces left do not fit: take one of the polyominoes from the board first."
        )
    _check_turn(s, cmd.seat, "setup", "phase2")
    piece = piece_index(cmd.piece)
    colour = s.colour_of(cmd.seat)
    if s.phase == "setup":
        if piece not in s.pool:
            raise PieceDoesNotFit(f"{cmd.piece} is on the board already.")
        if piece in s.lifted:
            raise RelocationRule(
                "Polyominoes that are taken from the board cannot be placed back on the board "
                "in the same turn."
            )
    elif piece not in s.hands[colour]:
        raise PieceDoesNotFit(f"{cmd.piece} is not one of your pieces in hand.")
    squares = _piece_squares(cmd, piece)
    if any(s.cover[sq] != EMPTY for sq in squares):
        raise PieceDoesNotFit("Polyominoes cannot be placed on top of other Polyominoes.")
    if any(s.markers[sq] >= 0 for sq in squares):
        raise PieceDoesNotFit("Polyominoes cannot be placed on top of Markers.")
    cells = [at(sq) for sq in squares]
    if s.phase == "setup":
        rest = tuple(p for p in s.pool if p != piece)
        if s.adjusting and not pieces_fit(s, rest, squares):
            raise RelocationRule(
                "Placed there, the pieces left would no longer all fit: relocate so that all "
                "the pieces fit in."
            )
        b.emit(
            e.PiecePlaced,
            seat=cmd.seat,
            piece=cmd.piece,
            squares=cells,
            colour=COLOURS[colour],
            stage="setup",
        )
        _after_setup_placement(b, cmd.seat)
        return
    own = {sq for sq, m in enumerate(s.markers) if m == colour}
    if not any(n in own for sq in squares for n in neighbours(sq)):
        raise PieceDoesNotFit(
            "Polyominoes must be placed on squares which share a side with a square where one "
            "of your own Markers is."
        )
    b.emit(
        e.PiecePlaced,
        seat=cmd.seat,
        piece=cmd.piece,
        squares=cells,
        colour=COLOURS[colour],
        stage="phase2",
    )
    if not marker_moves(b.state):
        b.emit(e.MarkerMoveSkipped, seat=cmd.seat)
        _end_phase2_turn(b, cmd.seat)


def _after_setup_placement(b: _Batch, seat: int) -> None:
    s = b.state
    if not s.pool:
        monominoes = [at(sq) for sq, p in enumerate(s.cover) if p == EMPTY]
        b.emit(e.SetupCompleted, monominoes=monominoes, first_seat=s.gold_seat)
        return
    b.emit(e.TurnEnded, next_seat=1 - seat)
    s = b.state
    if not s.adjusting and not fits_somewhere(s, s.pool):
        b.emit(
            e.RelocationRequired,
            seat=s.current,
            pieces_left=[piece_name(p) for p in s.pool],
        )


def _lift(b: _Batch, cmd: c.LiftPiece) -> None:
    s = b.state
    if s.phase == "setup" and cmd.seat == s.current:
        raise RelocationRule(
            "A polyomino is taken from the board only when some pieces left do not fit in."
        )
    _check_turn(s, cmd.seat, "setup_lift")
    piece = piece_index(cmd.piece)
    if piece not in pieces_on_board(s):
        raise RelocationRule(f"{cmd.piece} is not on the board.")
    if piece in s.protected:
        raise RelocationRule(
            "The Polyomino placed on the board right after another one was taken cannot be "
            "taken from the board."
        )
    squares = squares_of_piece(s, piece)
    pool = (*s.pool, piece)
    still = not can_pack(free_mask(s) | mask(squares), shape_counts(pool))
    b.emit(
        e.PieceLifted,
        seat=cmd.seat,
        piece=cmd.piece,
        squares=[at(sq) for sq in squares],
        still_blocked=still,
    )


def _place_marker(b: _Batch, cmd: c.PlaceMarker) -> None:
    s = b.state
    _check_turn(s, cmd.seat, "phase1", "phase2_prep")
    colour = s.colour_of(cmd.seat)
    if s.phase == "phase2_prep":
        if s.to_prepare[colour][1] <= 0:
            raise IllegalPreparation("You have placed your 3 markers already.")
        square = _preparation_square(s, cmd.square)
        b.emit(
            e.MarkerPlaced,
            seat=cmd.seat,
            x=cmd.square.x,
            y=cmd.square.y,
            colour=COLOURS[colour],
            stage="phase2_preparation",
        )
        _after_preparation(b, cmd.seat)
        return
    square = _board_square(cmd.square, IllegalMarker, "a marker")
    if s.cover[square] == CENTRE:
        raise IllegalMarker("No Markers can be placed on the center square.")
    if s.markers[square] >= 0:
        raise IllegalMarker(
            "Markers cannot be placed on top of other Markers (on the outmost squares, push in)."
        )
    if s.supply[colour] <= 0:
        raise IllegalMarker("You have no markers left in hand.")
    if not may_place_marker_on(s, colour, square):
        raise IllegalMarker(
            "A marker goes on a square diagonally adjacent to one of your markers, on the 8 "
            "squares around the center, or on the outmost row next to one of your markers there."
        )
    b.emit(
        e.MarkerPlaced,
        seat=cmd.seat,
        x=cmd.square.x,
        y=cmd.square.y,
        colour=COLOURS[colour],
        stage="phase1",
    )
    _after_marker(b, cmd.seat)


def _push(b: _Batch, cmd: c.PushMarker) -> None:
    s = b.state
    _check_turn(s, cmd.seat, "phase1")
    colour = s.colour_of(cmd.seat)
    square = _board_square(cmd.square, IllegalPush, "a marker")
    if not is_outer(square):
        raise IllegalPush("Markers are pushed in only from the outmost squares of the board.")
    if s.markers[square] < 0:
        raise IllegalPush("That square is free: place the marker there instead of pushing.")
    if not may_push_at(s, colour, square):
        raise IllegalPush(
            "Push in at one of your own markers on the outmost squares, or at the squares next "
            "to it on the outmost row."
        )
    if cmd.direction not in inward(square):
        raise IllegalPush("Markers are pushed into the board, across the edge the square is on.")
    if s.supply[colour] <= 0:
        raise IllegalPush("You have no markers left in hand.")
    run = push_run(s, square, cmd.direction)
    if run is None:
        raise IllegalPush(
            "No Markers are pushed out of the board or enter in the center square: the row is "
            "full up to the edge or the center."
        )
    moved = []
    for origin in reversed(run):
        target = step(origin, cmd.direction)
        assert target is not None
        moved.append(e.Step(at(origin), at(target)))
    b.emit(
        e.MarkersPushed,
        seat=cmd.seat,
        x=cmd.square.x,
        y=cmd.square.y,
        colour=COLOURS[colour],
        direction=cmd.direction,
        moved=moved,
    )
    _after_marker(b, cmd.seat)


def covered_pieces(state: GameState) -> list[tuple[int, int, int]]:
    """(piece, silver, gold) for every polyomino fully occupied with markers."""
    marks: dict[int, list[int]] = {}
    for square, piece in enumerate(state.cover):
        if piece >= 0 and piece != MONOMINO:
            marks.setdefault(piece, []).append(state.markers[square])
    return [
        (piece, found.count(0), found.count(1))
        for piece, found in sorted(marks.items())
        if -1 not in found
    ]


def _after_marker(b: _Batch, seat: int) -> None:
    """Acquisition of every fully occupied polyomino with a majority (several at once), then
    the next turn."""
    for piece, silver, gold in covered_pieces(b.state):
        if silver == gold:
            continue  # "the pieces are not taken until either color takes the majority"
        _acquire(b, seat, piece, 1 if gold > silver else 0, "majority")
    _next_phase1_turn(b, seat)


def _acquire(b: _Batch, seat: int | None, piece: int, colour: int, by: str) -> None:
    s = b.state
    squares = squares_of_piece(s, piece)
    marks = [s.markers[sq] for sq in squares]
    b.emit(
        e.PieceAcquired,
        seat=seat,
        piece=piece_name(piece),
        colour=COLOURS[colour],
        by=by,
        silver=marks.count(0),
        gold=marks.count(1),
        squares=[at(sq) for sq in squares],
    )


def _next_phase1_turn(b: _Batch, seat: int) -> None:
    s = b.state
    if not pieces_on_board(s):
        _end_phase1(b, "all polyominoes taken")
        return
    other = 1 - seat
    if can_place_marker(s, other):
        b.emit(e.TurnEnded, next_seat=other)
    elif can_place_marker(s, seat):
        b.emit(e.TurnEnded, next_seat=seat, skipped=[other])
    else:
        _end_phase1(b, "no marker can be placed by either player")


def _propose(b: _Batch, cmd: c.ProposeEnd | c.ProposeAward) -> None:
    s = b.state
    _check_turn(s, cmd.seat, "phase1", "phase2")
    if s.phase == "phase2" and not s.phase2_agreement:
        raise IllegalProposal(
            "Phase 2 ends when no piece in hand can be placed; this game was not created to "
            "end it by agreement."
        )
    if s.proposed:
        thing = "a marker" if s.phase == "phase1" else "a piece"
        raise IllegalProposal(f"One proposal a turn: place {thing} now.")
    if s.phase == "phase2" and isinstance(cmd, c.ProposeAward):
        raise IllegalProposal("In Phase 2 the players may only agree to end it.")
    if isinstance(cmd, c.ProposeEnd):
        b.emit(e.ProposalMade, seat=cmd.seat, kind="end")
        return
    piece = piece_index(cmd.piece)
    if piece not in pieces_on_board(s):
        raise IllegalProposal(f"{cmd.piece} is not on the board.")
    b.emit(e.ProposalMade, seat=cmd.seat, kind="award", piece=cmd.piece, to=cmd.to)


def _answer(b: _Batch, cmd: c.AcceptProposal | c.DeclineProposal) -> None:
    s = b.state
    _check_turn(s, cmd.seat, "phase1_answer", "phase2_answer")
    proposal = s.proposal
    assert proposal is not None
    if isinstance(cmd, c.DeclineProposal):
        b.emit(e.ProposalDeclined, seat=cmd.seat)
        return
    b.emit(e.ProposalAccepted, seat=cmd.seat)
    if s.phase == "phase2_answer":
        _end_phase2(b, "agreement")  # ruling 16
        return
    if proposal.kind == "end":
        _end_phase1(b, "agreement")
        return
    _acquire(b, None, proposal.piece, proposal.to, "agreement")
    if not pieces_on_board(b.state):
        _end_phase1(b, "all polyominoes taken")
    elif not can_place_marker(b.state, proposal.seat):
        _next_phase1_turn(b, proposal.seat)


def _end_phase1(b: _Batch, reason: str) -> None:
    s = b.state
    left = [piece_name(p) for p in pieces_on_board(s)]
    b.emit(e.Phase1Ended, reason=reason, removed=left)
    for colour in (1, 0):  # Gold first, as in the turns
        seat = b.state.seat_of(colour)
        pieces = b.state.acquired[colour]
        names = ", ".join(piece_name(p) for p in pieces) or "none"
        b.emit(
            e.PointsScored,
            seat=seat,
            colour=COLOURS[colour],
            points=len(pieces),
            rule="polyominoes",
            detail=f"1 point for each polyomino acquired ({names})",
            phase=1,
        )
        extra = extra_hands_made(pieces, b.state.extra_hands)
        for hand, points in [*hands_made(pieces), *extra]:
            b.emit(
                e.PointsScored,
                seat=seat,
                colour=COLOURS[colour],
                points=points,
                rule=hand,
                detail=f"the hand {hand}",
                phase=1,
            )
    if b.state.play == "phase1":
        _end_set(b)  # ruling 13: the set is Phase 1 alone


def _preparation_square(s: GameState, cell: c.Square) -> int:
    square = _board_square(cell, IllegalPreparation, "it")
    if s.cover[square] == CENTRE:
        raise IllegalPreparation("Nothing can be placed on the center square.")
    if s.cover[square] != EMPTY or s.markers[square] >= 0:
        raise IllegalPreparation("That square is taken.")
    if square not in preparation_squares(s):
        raise IllegalPreparation(
            "Markers and Monominoes cannot be placed on squares which have common adjacent sides."
        )
    return square


def _place_monomino(b: _Batch, cmd: c.PlaceMonomino) -> None:
    s = b.state
    _check_turn(s, cmd.seat, "phase2_prep")
    colour = s.colour_of(cmd.seat)
    if s.to_prepare[colour][0] <= 0:
        raise IllegalPreparation("You have placed your monomino already.")
    _preparation_square(s, cmd.square)
    b.emit(
        e.MonominoPlaced,
        seat=cmd.seat,
        x=cmd.square.x,
        y=cmd.square.y,
        colour=COLOURS[colour],
    )
    _after_preparation(b, cmd.seat)


def _after_preparation(b: _Batch, seat: int) -> None:
    s = b.state
    left = [sum(s.to_prepare[s.colour_of(t)]) for t in (0, 1)]
    if not any(left):
        b.emit(e.PreparationCompleted, first_seat=s.gold_seat)
        _start_phase2_turn(b, s.gold_seat)
        return
    b.emit(e.TurnEnded, next_seat=1 - seat if left[1 - seat] else seat)


def _start_phase2_turn(b: _Batch, seat: int) -> None:
    """``seat`` is to move: it plays if it can place a piece; else the other seat, if it can;
    else Phase 2 is over."""
    s = b.state
    if can_place_piece(s, seat):
        if s.current != seat:
            b.emit(e.TurnEnded, next_seat=seat)
    elif can_place_piece(s, 1 - seat):
        b.emit(e.TurnEnded, next_seat=1 - seat, skipped=[seat])
    else:
        _end_phase2(b)


def _end_phase2_turn(b: _Batch, seat: int) -> None:
    s = b.state
    other = 1 - seat
    if can_place_piece(s, other):
        b.emit(e.TurnEnded, next_seat=other)
    elif can_place_piece(s, seat):
        b.emit(e.TurnEnded, next_seat=seat, skipped=[other])
    else:
        _end_phase2(b)


def _move_marker(b: _Batch, cmd: c.MoveMarker) -> None:
    s = b.state
    _check_turn(s, cmd.seat, "phase2_move")
    origin = _board_square(cmd.origin, IllegalMove, "a marker")
    target = _board_square(cmd.target, IllegalMove, "a marker")
    if s.markers[origin] < 0:
        raise IllegalMove("There is no marker on that square.")
    if target not in neighbours(origin):
        raise IllegalMove("A marker moves by 1 square, horizontally or vertically.")
    if s.cover[target] != EMPTY or s.markers[target] >= 0:
        raise IllegalMove(
            "Markers cannot be placed on top of other Markers, Polyominoes or on the center square."
        )
    if s.last_move == (target, origin):
        raise IllegalMove(
            '"Undo" cannot be done: a marker cannot move back to the square it occupied in the '
            "last turn."
        )
    b.emit(
        e.MarkerMoved,
        seat=cmd.seat,
        origin=at(origin),
        target=at(target),
        colour=COLOURS[s.markers[origin]],
    )
    _end_phase2_turn(b, cmd.seat)


def _end_phase2(b: _Batch, by: str | None = None) -> None:
    s = b.state
    b.emit(
        e.Phase2Ended,
        unplaced={COLOURS[col]: [piece_name(p) for p in s.hands[col]] for col in (1, 0)},
        by=msgspec.UNSET if by is None else by,
    )
    comps = components()
    for colour in (1, 0):
        left = s.hands[colour]
        if not left:
            continue
        detail = ", ".join(f"{piece_name(p)} {comps.pieces[p].size}" for p in left)
        b.emit(
            e.PointsScored,
            seat=s.seat_of(colour),
            colour=COLOURS[colour],
            points=-penalty(left),
            rule="unplaced pieces",
            detail=f"penalty for each piece left unplaced, 1 per square ({detail})",
            phase=2,
        )
    _end_set(b)


def _end_set(b: _Batch) -> None:
    """The set's result; then the next set, or the game's end."""
    s = b.state
    points = list(s.set_points)
    best = max(points)
    b.emit(
        e.SetEnded,
        set_number=s.set_number,
        scores=points,
        winners=[seat for seat in (0, 1) if points[seat] == best],
    )
    s = b.state
    if s.set_number < s.sets:
        _begin_set(b, s.set_number + 1, 1 - s.silver_seat)  # ruling 12: colours change
        return
    keys = list(s.scores) if s.competition == "points" else list(s.sets_won)
    ranking = sorted((0, 1), key=lambda seat: -keys[seat])
    b.emit(
        e.GameEnded,
        scores=list(s.scores),
        sets_won=list(s.sets_won),
        competition=s.competition,
        ranking=ranking,
        winners=[seat for seat in (0, 1) if keys[seat] == max(keys)],
    )


JANKEN_HANDS: tuple[c.JankenHand, ...] = ("rock", "paper", "scissors")
JANKEN_BEATS = {"rock": "scissors", "scissors": "paper", "paper": "rock"}
"""Janken: rock breaks scissors, scissors cut paper, paper wraps rock."""


def janken_winner(hands: list[str]) -> int | None:
    """The seat whose hand beats the other's; None for a draw (the same hand twice)."""
    if hands[0] == hands[1]:
        return None
    return 0 if JANKEN_BEATS[hands[0]] == hands[1] else 1


def _show_hand(b: _Batch, cmd: c.ShowHand) -> None:
    """Both seats show a hand, in either order; each is sealed until both are in, then the
    rules reveal both at once (ruling 15)."""
    s = b.state
    if s.is_over:
        raise GameOver("The game is over.")
    if s.phase != "janken" or s.janken is None:
        raise WrongPhase(f"That is not a move of this step of the game ({_step_name(s)}).")
    if not cmd.hand:
        raise InvalidCommand("Show rock, paper or scissors.")
    if s.janken.has_chosen(cmd.seat):
        raise IllegalChoice("You have shown your hand for this Janken already.")
    if problem := salt_problem(cmd.salt):
        raise InvalidCommand(problem)
    sealed = SealedChoice.of(cmd.hand, cmd.salt)
    b.emit(
        e.HandShown,
        seat=cmd.seat,
        commitment=sealed.commitment,
        hand=cmd.hand,
        salt=cmd.salt,
    )
    janken = b.state.janken
    assert janken is not None
    if not janken.is_complete:
        return
    hands = [slot.choice for slot in janken.slots]
    winner = janken_winner(hands)
    b.emit(e.JankenPlayed, hands=hands, salts=[slot.salt for slot in janken.slots], winner=winner)
    if winner is None:
        _call_janken(b)  # a draw: Janken again


def _choose_piece(b: _Batch, cmd: c.ChoosePiece) -> None:
    """ "The winner of Janken takes one and the other takes another", or "chooses one piece for
    the opponent and the other does the same"; then another Janken (ruling 14)."""
    s = b.state
    _check_turn(s, cmd.seat, "distribution")
    piece = piece_index(cmd.piece)
    if piece not in s.pool:
        raise IllegalChoice(f"{cmd.piece} is not among the pieces left to distribute.")
    mine = s.colour_of(cmd.seat)
    colour = mine if s.distribution == "take" else 1 - mine
    b.emit(
        e.PieceDistributed,
        seat=cmd.seat,
        piece=cmd.piece,
        colour=COLOURS[colour],
        by=s.distribution,
    )
    s = b.state
    if not s.pool:
        hands = {COLOURS[col]: [piece_name(p) for p in s.hands[col]] for col in (1, 0)}
        b.emit(e.DistributionCompleted, hands=hands, first_seat=s.gold_seat)
    elif s.picks == 1:
        b.emit(e.TurnEnded, next_seat=1 - cmd.seat)
    else:
        _call_janken(b)


_DECIDERS: dict[type[c.Command], Callable[[_Batch, Any], None]] = {
    c.JoinGame: _join,
    c.LeaveGame: _leave,
    c.RemovePlayer: _remove_player,
    c.CancelGame: _cancel,
    c.Resign: _resign,
    c.ClaimTimeout: _claim_timeout,
    c.StartGame: _start,
    c.PlacePiece: _place_piece,
    c.LiftPiece: _lift,
    c.PlaceMarker: _place_marker,
    c.PushMarker: _push,
    c.ProposeEnd: _propose,
    c.ProposeAward: _propose,
    c.AcceptProposal: _answer,
    c.DeclineProposal: _answer,
    c.PlaceMonomino: _place_monomino,
    c.MoveMarker: _move_marker,
    c.ShowHand: _show_hand,
    c.ChoosePiece: _choose_piece,
}

RULES: execution.Rulebook[GameState, c.Command, e.Event] = execution.Rulebook(
    creation=c.CreateGame, create=_create, deciders=_DECIDERS, evolve=evolve, cause=e.Cause
)
execute = RULES.execute
"""Decide a command; its events and the state after them."""
decide = RULES.decide
"""Validate a command against a state; its events, or a ``RuleError``."""


# --- legal actions -----------------------------------------------------------------------------


def _sq(square: int) -> c.Square:
    return c.Square(*components().xy(square))


def _place(seat: int, piece: int, squares: tuple[int, ...]) -> c.PlacePiece:
    return c.PlacePiece(seat, piece_name(piece), [_sq(sq) for sq in squares])


def legal_actions(s: GameState, seat: int) -> list[c.Command]:
    """Every command ``seat`` may give now; ``decide`` accepts exactly these. A Janken's hand
    is listed without a salt (the service seals it; ruling 15), for either seat not yet in."""
    if s.phase == "janken" and s.janken is not None and not s.janken.has_chosen(seat):
        return [c.ShowHand(seat, hand) for hand in JANKEN_HANDS]
    if s.phase in ("lobby", "finished", "cancelled") or seat != s.current:
        return []
    colour = s.colour_of(seat)
    out: list[c.Command] = []
    if s.phase == "setup":
        out += [_place(seat, piece, squares) for piece, squares in setup_placements(s)]
    elif s.phase == "setup_lift":
        out += [c.LiftPiece(seat, piece_name(p)) for p in liftable(s)]
    elif s.phase == "phase1":
        out += [c.PlaceMarker(seat, _sq(sq)) for sq in marker_squares(s, colour)]
        out += [c.PushMarker(seat, _sq(sq), d) for sq, d in pushes(s, colour)]
        if not s.proposed:
            out.append(c.ProposeEnd(seat))
            out += [
                c.ProposeAward(seat, piece_name(p), to)
                for p in pieces_on_board(s)
                for to in COLOURS
            ]
    elif s.phase in ("phase1_answer", "phase2_answer"):
        out += [c.AcceptProposal(seat), c.DeclineProposal(seat)]
    elif s.phase == "distribution":
        out += [c.ChoosePiece(seat, piece_name(p)) for p in s.pool]
    elif s.phase == "phase2_prep":
        monos, markers = s.to_prepare[colour]
        squares = preparation_squares(s)
        if monos:
            out += [c.PlaceMonomino(seat, _sq(sq)) for sq in squares]
        if markers:
            out += [c.PlaceMarker(seat, _sq(sq)) for sq in squares]
    elif s.phase == "phase2":
        out += [_place(seat, piece, squares) for piece, squares in phase2_placements(s, colour)]
        if s.phase2_agreement and not s.proposed:
            out.append(c.ProposeEnd(seat))
    elif s.phase == "phase2_move":
        out += [c.MoveMarker(seat, _sq(a), _sq(b)) for a, b in marker_moves(s)]
    return out


def check(state: GameState | None, command: c.Command) -> RuleError | None:
    """The rule error ``command`` would raise, or None when it is legal."""
    try:
        decide(state, command)
    except RuleError as err:
        return err
    return None
