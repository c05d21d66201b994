"""Properties of whole Renaissance games, checked after every event of many bot games.

Seeded loops, not hypothesis: a game is a pure function of its seed and bots, so a failing seed
is its own reproduction. ``make test`` plays ``RENAISSANCE_GAMES`` games (default 120) with every
invariant checked at every event; ``RENAISSANCE_GAMES=3000 uv run --frozen pytest -q
tests/unit/renaissance/test_renaissance_properties.py`` is the long run (docs/rules-renaissance.md
gives its last count and time). ``decide`` is held to ``legal_actions`` over every candidate
command of a kind on sampled positions of fewer games (it is a hundred times dearer).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from functools import cache
from typing import get_args

import msgspec
import pytest

from renaissance import commands as c
from renaissance import events as e
from renaissance.audit import audit
from renaissance.components import (
    CENTRE,
    EMPTY,
    MONOMINO,
    Direction,
    components,
    placement_set,
    placements,
)
from renaissance.errors import RuleError
from renaissance.game import play, replay
from renaissance.rules import decide, evolve, legal_actions
from renaissance.scoring import penalty, phase1_points
from renaissance.state import GameState
from renaissance.view import view

GAMES = int(os.environ.get("RENAISSANCE_GAMES", "120"))
EXACT_GAMES = int(os.environ.get("RENAISSANCE_EXACT_GAMES", "12"))
BOTS = (("random", "random"), ("random", "greedy"), ("greedy", "random"), ("greedy", "greedy"))
# Greedy bots cost about four random ones: three games in four are random-random.
PAIRINGS = (BOTS[0], BOTS[0], BOTS[0], BOTS[1], BOTS[0], BOTS[0], BOTS[0], BOTS[2], BOTS[3])


def piece_index(piece_id: str) -> int:
    piece = components().piece(piece_id)
    assert piece is not None, piece_id
    return piece.index


def games(count: int, prefix: str) -> Iterator[tuple[str, tuple[str, str], int]]:
    for number in range(count):
        sets = 2 if number % 10 == 9 else 1
        yield f"{prefix}-{number}", PAIRINGS[number % len(PAIRINGS)], sets


def check_position(state: GameState, penalised: bool = False) -> None:
    """Markers and pieces conserved; the score adds up from the pieces."""
    comps = components()
    if state.phase == "lobby":
        return
    cover = state.cover
    assert cover.count(CENTRE) == 1
    on_board = [p for p in set(cover) if p >= 0 and p != MONOMINO]
    for piece in on_board:  # a piece lies whole, in one of its shapes
        squares = tuple(sq for sq, p in enumerate(cover) if p == piece)
        assert squares in placement_set(comps.pieces[piece].shape_index)
    everything = sorted(p.index for p in comps.pieces)
    acquired = [*state.acquired[0], *state.acquired[1]]
    hands = [*state.hands[0], *state.hands[1]]
    if state.phase in ("setup", "setup_lift"):
        assert sorted([*on_board, *state.pool]) == everything
        assert not any(m >= 0 for m in state.markers)
        assert cover.count(MONOMINO) == 0
    elif state.phase in ("phase1", "phase1_answer"):
        assert sorted([*on_board, *acquired]) == everything
        assert EMPTY not in cover  # monominoes fill every free square
        assert cover.count(MONOMINO) <= comps.monominoes
        for colour in (0, 1):
            assert state.supply[colour] + state.markers.count(colour) == comps.markers
            assert state.supply[colour] >= 0
    elif state.phase != "finished":
        assert sorted([*on_board, *hands]) == sorted(acquired)
        assert sorted([*acquired, *state.removed]) == everything
        for colour in (0, 1):
            _, markers = state.to_prepare[colour]
            assert markers + state.markers.count(colour) == comps.phase2_markers
        assert cover.count(MONOMINO) + sum(m for m, _ in state.to_prepare) == 2
        for sq, marker in enumerate(state.markers):
            assert marker < 0 or cover[sq] == EMPTY  # markers never under a piece
    if state.phase in ("phase2", "phase2_move") and not penalised:
        for seat in (0, 1):
            colour = state.colour_of(seat)
            points = phase1_points(state.acquired[colour])
            earlier = sum(r[seat] for r in state.set_results)
            assert state.scores[seat] == earlier + points


def check_game(log: list[e.Event], state: GameState) -> None:
    live: GameState | None = None
    totals = [0, 0]
    penalised = False  # between Phase2Ended and the next set: the penalties are being scored
    for event in log:
        live = evolve(live, event)
        penalised = isinstance(event, e.Phase2Ended | e.PointsScored | e.SetEnded) and (
            penalised or isinstance(event, e.Phase2Ended)
        )
        check_position(live, penalised)
        for seat, points, _ in e.points_awarded(event):
            totals[seat] += points
        if isinstance(event, e.SetEnded):
            for seat in (0, 1):  # Phase 1 points minus Phase 2 penalties, recounted
                colour = live.colour_of(seat)
                recount = phase1_points(live.acquired[colour]) - penalty(live.hands[colour])
                assert event.scores[seat] == recount == live.set_results[-1][seat]
    assert live == state == replay(log)
    assert state.is_over
    assert list(state.scores) == totals  # scores equal a recount of the points awarded
    for seat in (0, 1):
        assert state.scores[seat] == sum(r[seat] for r in state.set_results)
    report = audit(log)
    assert report.ok, report.first_bad
    msgspec.json.encode(view(state, 0))


@pytest.mark.parametrize("pairing", BOTS, ids="-".join)
def test_every_pairing_of_bots_finishes_with_every_invariant(pairing: tuple[str, str]) -> None:
    log, state = play(f"pairing-{'-'.join(pairing)}", list(pairing))
    check_game(log, state)


def test_many_games_keep_markers_and_pieces_conserved_and_scores_equal_to_a_recount() -> None:
    played = 0
    phase_ends: set[str] = set()
    for seed, bots, sets in games(GAMES, "property"):
        log, state = play(seed, list(bots), sets=sets)
        check_game(log, state)
        played += 1
        phase_ends |= {ev.reason for ev in log if isinstance(ev, e.Phase1Ended)}
        for event in log:
            if isinstance(event, e.Phase2Ended):
                unplaced = sum(
                    penalty([piece_index(p) for p in ps]) for ps in event.unplaced.values()
                )
                assert unplaced >= 0
    assert played == GAMES
    assert "all polyominoes taken" in phase_ends


@cache
def _all_placements() -> tuple[tuple[str, tuple[int, ...]], ...]:
    comps = components()
    return tuple(
        (piece.id, squares) for piece in comps.pieces for squares in placements(piece.shape_index)
    )


def candidates(state: GameState, seat: int) -> list[c.Command]:
    """Every command of the kinds this step takes, legal or not."""
    comps = components()
    squares = [c.Square(*comps.xy(sq)) for sq in range(comps.squares)]
    out: list[c.Command] = []
    if state.phase in ("setup", "phase2"):
        out += [
            c.PlacePiece(seat, piece, [c.Square(*comps.xy(sq)) for sq in cells])
            for piece, cells in _all_placements()
        ]
    elif state.phase == "setup_lift":
        out += [c.LiftPiece(seat, p.id) for p in comps.pieces]
    elif state.phase in ("phase1", "phase2_prep"):
        out += [c.PlaceMarker(seat, s) for s in squares]
        if state.phase == "phase1":
            out += [c.PushMarker(seat, s, d) for s in squares for d in get_args(Direction)]
            out += [c.ProposeEnd(seat)]
            out += [
                c.ProposeAward(seat, p.id, to) for p in comps.pieces for to in ("silver", "gold")
            ]
        else:
            out += [c.PlaceMonomino(seat, s) for s in squares]
    elif state.phase == "phase1_answer":
        out += [c.AcceptProposal(seat), c.DeclineProposal(seat)]
    elif state.phase == "phase2_move":
        out += [
            c.MoveMarker(seat, a, b)
            for a in squares
            for b in squares
            if abs(a.x - b.x) + abs(a.y - b.y) == 1
        ]
    return out


def accepted(state: GameState, command: c.Command) -> bool:
    try:
        decide(state, command)
    except RuleError:
        return False
    return True


def test_decide_accepts_exactly_the_legal_actions() -> None:
    checked = 0
    for seed, bots, _ in games(EXACT_GAMES, "exact"):
        log, _ = play(seed, list(bots))
        state: GameState | None = None
        for number, event in enumerate(log):
            state = evolve(state, event)
            if event.cause is None and number + 1 < len(log) and log[number + 1].cause is None:
                continue  # only positions a player meets: after a whole batch
            if state.phase in ("lobby", "finished") or number % 5:
                continue
            seat = state.current
            legal = legal_actions(state, seat)
            # setup placements are ~2,000 a position: sample them, check the rest whole
            pool = candidates(state, seat)
            if state.phase == "setup":
                pool = pool[number % 7 :: 7] + legal[:: max(1, len(legal) // 40)]
            wanted = {msgspec.json.encode(a) for a in legal}
            for command in pool:
                key = msgspec.json.encode(command)
                assert accepted(state, command) == (key in wanted), (seed, number, command)
            for command in legal if state.phase != "setup" else legal[:: max(1, len(legal) // 40)]:
                assert accepted(state, command), (seed, number, command)
            other = 1 - seat
            assert legal_actions(state, other) == []
            for command in legal[:5]:
                moved = msgspec.structs.replace(command, seat=other)
                assert not accepted(state, moved)
            checked += 1
    assert checked > EXACT_GAMES * 20
