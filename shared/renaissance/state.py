"""The game state: an immutable value folded from the events by ``evolve``.

Squares are flat indices ``y * 7 + x``. ``cover`` holds what lies on each square (a polyomino's
index into ``components().pieces``, ``MONOMINO``, ``EMPTY`` or ``CENTRE``); ``markers`` the colour
of the marker on it (0 silver, 1 gold) or -1. Per-colour tuples are indexed by colour, per-seat
tuples by seat; ``silver_seat`` maps one to the other for the current set.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from gameplatform.clock import ClockState
from gameplatform.sealed import Sealed

Phase = Literal[
    "lobby",  # created, seats joining
    "setup",  # placing the polyominoes, Silver first
    "setup_lift",  # relocation: the seat to move must lift a polyomino
    "phase1",  # placing markers, Gold first
    "phase1_answer",  # a proposal waits for the other seat's answer
    "janken",  # Play only Phase 2: both seats show a sealed hand, in any order
    "distribution",  # Play only Phase 2: the Janken's winner, then the other, picks a piece
    "phase2_prep",  # placing 1 monomino and 3 markers each, Gold first
    "phase2",  # placing a polyomino (first action of a turn)
    "phase2_move",  # moving a marker (second action of the turn)
    "phase2_answer",  # a proposal to end Phase 2 waits for the other seat's answer
    "finished",
    "cancelled",  # the host cancelled it before the start
]


class Proposal(msgspec.Struct, frozen=True):
    seat: int
    kind: str  # "end" or "award"
    piece: int = -1
    to: int = -1  # colour


class GameState(msgspec.Struct, frozen=True):
    game_id: str
    seed: str
    sets: int = 1
    competition: str = "points"
    version: int = 0
    last_hash: str = ""
    phase: Phase = "lobby"
    names: tuple[str | None, ...] = (None, None)
    set_number: int = 0
    silver_seat: int = 0
    current: int = -1
    cover: tuple[int, ...] = ()
    markers: tuple[int, ...] = ()
    pool: tuple[int, ...] = ()  # set-up: polyominoes not on the board yet
    lifted: tuple[int, ...] = ()  # set-up: lifted this turn (cannot go back this turn)
    protected: tuple[int, ...] = ()  # set-up: placed right after a lift (cannot be lifted)
    adjusting: bool = False  # set-up: the relocation has begun (ruling 4)
    supply: tuple[int, int] = (0, 0)  # markers in hand, by colour
    acquired: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())  # Phase 1 pieces, by colour
    removed: tuple[int, ...] = ()  # Phase 1 pieces left on the board at its end
    proposal: Proposal | None = None
    proposed: bool = False  # the seat to move has made its proposal of this turn
    hands: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())  # Phase 2 pieces, by colour
    to_prepare: tuple[tuple[int, int], tuple[int, int]] = ((0, 0), (0, 0))  # (monominoes, markers)
    move: tuple[int, int] | None = None  # Phase 2: the marker move made in this turn
    last_move: tuple[int, int] | None = None  # Phase 2: the move of the turn before
    set_points: tuple[int, int] = (0, 0)  # this set, by seat
    scores: tuple[int, int] = (0, 0)  # the whole game, by seat
    set_results: tuple[tuple[int, int], ...] = ()  # each finished set's scores, by seat
    sets_won: tuple[int, int] = (0, 0)
    ranking: tuple[int, ...] = ()
    winners: tuple[int, ...] = ()
    resigned: int = -1  # the seat that gave up (-1: none)
    out_status: str = ""  # how it stopped: resigned, or removed (its time ran out)
    clock: ClockState | None = None  # the turn clock (ruling 18), where the game has one
    turns: int = 0  # turns begun (a clock's turn changes with it)
    # the variant (rulings 13 to 16); the standard rules by default
    play: str = "both"
    extra_hands: tuple[str, ...] = ()
    distribution: str = ""
    phase2_agreement: bool = False
    janken: Sealed | None = None  # the Janken under way or just played
    janken_round: int = 0
    picks: int = 0  # pieces picked since the last Janken

    @property
    def is_over(self) -> bool:
        return self.phase == "finished"

    @property
    def gold_seat(self) -> int:
        return 1 - self.silver_seat

    def colour_of(self, seat: int) -> int:
        """0 (silver) or 1 (gold): the colour ``seat`` plays in this set."""
        return 0 if seat == self.silver_seat else 1

    def seat_of(self, colour: int) -> int:
        return self.silver_seat if colour == 0 else 1 - self.silver_seat
