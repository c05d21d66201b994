"""Properties of whole games of every variant, checked after every event of many bot games.

As ``test_renaissance_properties.py`` does for the standard rules: replay equals the live state,
the audit holds, the scores equal a recount from the pieces (Phase 1 points and the extra hands
for a game of Phase 1 only, penalties alone for one of Phase 2 only), the pieces are conserved
through the distribution, a sealed hand never reaches another seat or a spectator before both
are in, and ``decide`` accepts exactly the legal actions of sampled positions, for both seats.
``RENAISSANCE_VARIANT_GAMES`` games of each variant (default 8).
"""

from __future__ import annotations

import os

import msgspec
import pytest
from rn_variants import AGREEMENT, GIVE, PHASE1, TAKE
from test_renaissance_properties import accepted, candidates

from renaissance import commands as c
from renaissance import events as e
from renaissance.adapter import GAME
from renaissance.audit import audit
from renaissance.components import components
from renaissance.figures import extra_points
from renaissance.game import play, replay
from renaissance.rules import evolve, legal_actions
from renaissance.scoring import penalty, phase1_points
from renaissance.state import GameState
from renaissance.view import view, visible_event

GAMES = int(os.environ.get("RENAISSANCE_VARIANT_GAMES", "8"))
VARIANTS = {
    "phase1": PHASE1,
    "phase2-take": TAKE,
    "phase2-give-agreement": msgspec.structs.replace(GIVE, phase2_agreement=True),
    "both-agreement": AGREEMENT,
}
PAIRINGS = (("random", "random"), ("greedy", "random"), ("random", "greedy"), ("greedy", "greedy"))


def set_score(state: GameState, seat: int) -> int:
    """A set's score recounted from the pieces, as the variant scores it."""
    colour = state.colour_of(seat)
    won = state.acquired[colour]
    return phase1_points(won) + extra_points(won, state.extra_hands) - penalty(state.hands[colour])


def check_secrets(state: GameState, events: list[e.Event]) -> None:
    """Nobody sees another seat's sealed hand before both are in."""
    janken = state.janken
    if janken is None or janken.is_complete:
        return
    for seat, slot in enumerate(janken.slots):
        if not slot.is_sealed:
            continue
        for viewer in (1 - seat, None):
            shown = view(state, viewer).janken
            assert shown is not None
            assert shown.hands[seat] is None
            assert slot.salt.encode() not in GAME.state_json(state, viewer)
            for event in events:
                if isinstance(event, e.HandShown) and event.seat == seat:
                    seen = visible_event(event, viewer)
                    assert (seen.hand, seen.salt, seen.cause) == ("", "", None)


def check_pieces(state: GameState) -> None:
    everything = sorted(p.index for p in components().pieces)
    if state.phase in ("janken", "distribution"):
        assert sorted([*state.pool, *state.hands[0], *state.hands[1]]) == everything


def check_game(log: list[e.Event], state: GameState) -> None:
    live: GameState | None = None
    totals = [0, 0]
    for event in log:
        live = evolve(live, event)
        check_pieces(live)
        check_secrets(live, log[: live.version])
        for seat, points, _ in e.points_awarded(event):
            totals[seat] += points
        if isinstance(event, e.SetEnded):
            assert event.scores == [set_score(live, seat) for seat in (0, 1)]
    assert live == state == replay(log)
    assert state.is_over
    assert list(state.scores) == totals
    report = audit(log)
    assert report.ok, report.first_bad


def janken_candidates(seat: int) -> list[c.Command]:
    return [c.ShowHand(seat, hand) for hand in ("rock", "paper", "scissors")]


def variant_candidates(state: GameState, seat: int) -> list[c.Command]:
    """Every command of the kinds this step takes, legal or not, the variants' steps too."""
    out = candidates(state, seat)
    if state.phase == "janken":
        out += janken_candidates(seat)
    elif state.phase == "distribution":
        out += [c.ChoosePiece(seat, p.id) for p in components().pieces]
    elif state.phase == "phase2":
        out.append(c.ProposeEnd(seat))
    elif state.phase == "phase2_answer":
        out += [c.AcceptProposal(seat), c.DeclineProposal(seat)]
    return out


def check_legal_actions(state: GameState, number: int) -> int:
    """``decide`` accepts exactly the legal actions, for both seats; positions checked."""
    if state.phase in ("lobby", "finished", "setup") or number % 3:
        return 0
    for seat in (0, 1):
        legal = legal_actions(state, seat)
        wanted = {msgspec.json.encode(a) for a in legal}
        for command in variant_candidates(state, seat):
            found = accepted(state, command)
            assert found == (msgspec.json.encode(command) in wanted), (number, command)
        if state.phase != "janken":
            assert bool(legal) == (seat == state.current)
    return 1


@pytest.mark.parametrize("name", VARIANTS)
def test_whole_games_of_every_variant_hold_every_invariant(name: str) -> None:
    for number in range(GAMES):
        bots = PAIRINGS[number % len(PAIRINGS)]
        sets = 2 if number % 4 == 3 else 1
        log, state = play(f"{name}-{number}", list(bots), sets=sets, variant=VARIANTS[name])
        check_game(log, state)


def check_wire(state: GameState) -> None:
    """Every legal action crosses the wire as the services read it; a hand needs the
    service's salt and its provenance leaves hand and salt out."""
    for seat in (0, 1):
        for action in legal_actions(state, seat):
            assert GAME.needs_seat(action)
            assert GAME.seat_command(msgspec.to_builtins(action)) == action
            assert GAME.decode_command(msgspec.json.encode(action)) == action
            hand = isinstance(action, c.ShowHand)
            assert GAME.needs_seed(action) == hand
            assert (GAME.public_command(action) == action) != hand


@pytest.mark.parametrize("name", VARIANTS)
def test_decide_accepts_exactly_the_legal_actions_of_every_variant(name: str) -> None:
    checked = 0
    for number in range(max(1, GAMES // 4)):
        log, _ = play(f"exact-{name}-{number}", ["random", "random"], variant=VARIANTS[name])
        state: GameState | None = None
        for position, event in enumerate(log):
            state = evolve(state, event)
            if position + 1 < len(log) and log[position + 1].cause is None:
                continue  # only positions a player meets: after a whole batch
            checked += check_legal_actions(state, position)
            check_wire(state)
    assert checked > 20
