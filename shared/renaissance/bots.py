"""Bots: ``random`` (any legal action) and ``greedy`` (the best immediate gain).

Both are deterministic given their seed: their only randomness is their own ``random.Random``.
The random bot picks uniformly among the legal actions, except that it opens an end-of-Phase-1
proposal only one time in 40 when it could (uniformly, proposals would end most games at once)
and accepts or declines a proposal with even odds.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

import msgspec

from gameplatform import search, simulation
from gameplatform.sealed import SealedChoice
from renaissance import commands as c
from renaissance.components import components
from renaissance.janken import JANKEN_HANDS
from renaissance.legal_moves import legal_actions
from renaissance.position import piece_index
from renaissance.rules import execute
from renaissance.scoring import penalty, phase1_points
from renaissance.state import GameState

BOT_NAMES = ("random", "greedy")
PROPOSAL_ODDS = 40


class Bot(Protocol):
    def choose(self, state: GameState, seat: int) -> c.Command: ...


def _is_proposal(command: c.Command) -> bool:
    return isinstance(command, c.ProposeEnd | c.ProposeAward)


class RandomBot:
    def __init__(self, seed: str) -> None:
        self.rng = random.Random(seed)

    def choose(self, state: GameState, seat: int) -> c.Command:
        actions = legal_actions(state, seat)
        plain = [a for a in actions if not _is_proposal(a)]
        if plain and (len(plain) == len(actions) or self.rng.randrange(PROPOSAL_ODDS)):
            return self.rng.choice(plain)
        return self.rng.choice(actions)


class GreedyBot:
    """Set-up: any placement, and a lift that makes everything fit where one does. Phase 1:
    the marker that gains it the most Phase 1 points against the other player's; it never
    proposes, accepts only awards to itself. Phase 2: the biggest piece (the heaviest penalty
    avoided); markers moved at random; it accepts an end of Phase 2 when the set would not be
    lost by it. Distribution: it takes the smallest piece, or gives the biggest."""

    def __init__(self, seed: str) -> None:
        self.rng = random.Random(seed)

    def choose(self, state: GameState, seat: int) -> c.Command:
        actions = legal_actions(state, seat)
        if state.phase == "setup_lift":
            return self._lift(state, actions)
        if state.phase == "phase1":
            return self._marker(state, seat, actions)
        if state.phase == "phase1_answer":
            proposal = state.proposal
            mine = proposal is not None and proposal.to == state.colour_of(seat)
            return c.AcceptProposal(seat) if mine else c.DeclineProposal(seat)
        if state.phase == "phase2_answer":
            ahead = [state.set_points[t] - penalty(state.hands[state.colour_of(t)]) for t in (0, 1)]
            fine = ahead[seat] >= ahead[1 - seat]
            return c.AcceptProposal(seat) if fine else c.DeclineProposal(seat)
        if state.phase == "distribution":
            picks = [a for a in actions if isinstance(a, c.ChoosePiece)]
            size = {a.piece: components().pieces[piece_index(a.piece)].size for a in picks}
            best = (min if state.distribution == "take" else max)(size.values())
            return self.rng.choice([a for a in picks if size[a.piece] == best])
        if state.phase == "phase2":
            sizes = [len(a.squares) for a in actions if isinstance(a, c.PlacePiece)]
            biggest = [
                a for a in actions if isinstance(a, c.PlacePiece) and len(a.squares) == max(sizes)
            ]
            return self.rng.choice(biggest)
        return self.rng.choice(actions)

    def _lift(self, state: GameState, actions: list[c.Command]) -> c.Command:
        freeing = []
        for action in actions:
            assert isinstance(action, c.LiftPiece)
            after = execute(state, action)[1]
            if after.phase == "setup":
                freeing.append(action)
        return self.rng.choice(freeing or actions)

    def _marker(self, state: GameState, seat: int, actions: list[c.Command]) -> c.Command:
        mine, theirs = state.colour_of(seat), 1 - state.colour_of(seat)
        base = phase1_points(state.acquired[mine]) - phase1_points(state.acquired[theirs])
        rated = []
        for action in actions:
            if _is_proposal(action):
                continue
            after = execute(state, action)[1]
            gain = (
                phase1_points(after.acquired[mine]) - phase1_points(after.acquired[theirs]) - base
                if after.phase.startswith("phase1")
                else 0
            )
            rated.append((gain, action))
        top = max(gain for gain, _ in rated)
        return self.rng.choice([a for gain, a in rated if gain == top])


PHASE1 = ("lobby", "setup", "setup_lift", "phase1", "phase1_answer")
EVALUATION_SCALE = 4.0
"""Points ahead that count as clearly ahead (a hand of two triominoes is worth 2)."""


def prospects(state: GameState) -> list[float]:
    """Each seat's points as the set would count them if it stopped now: its score, plus in
    Phase 1 what its pieces acquired so far would score, less in Phase 2 the penalty of the
    pieces still in its hand (the search bot's heuristic)."""
    points = []
    for seat in (0, 1):
        colour = state.colour_of(seat)
        if state.phase in PHASE1:
            pending = phase1_points(state.acquired[colour])
        else:
            pending = -penalty(state.hands[colour])
        points.append(float(state.scores[seat] + pending))
    return points


def make_bot(name: str, seed: str) -> Bot:
    kinds: dict[str, Callable[[str], Bot]] = {"random": RandomBot, "greedy": GreedyBot}
    return simulation.make_bot(kinds, name, seed)


def evaluate(state: GameState) -> list[float]:
    """The search's value of an unfinished game for each seat: its prospects' margins."""
    return search.margin_values(prospects(state), EVALUATION_SCALE)


def determinize(state: GameState, seat: int, rng: random.Random, seed: str) -> GameState:
    """The state itself, but for a Janken under way: another seat's sealed hand (blanked in
    ``seat``'s perspective) is a hand drawn at random, sealed under ``seed``."""
    janken = state.janken
    if janken is None or janken.is_complete:
        return state
    for other, slot in enumerate(janken.slots):
        if other != seat and slot.is_sealed:
            janken = janken.put(other, SealedChoice.of(rng.choice(JANKEN_HANDS), seed))
    return msgspec.structs.replace(state, janken=janken)
