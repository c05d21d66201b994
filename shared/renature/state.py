"""The game state: an immutable value folded from the events by ``evolve``.

Cells are flat indices ``y * width + x`` into the board grid. Plants are small ints
(``colour * 4 + type``, see ``components``). The static board is looked up by ``board``.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from renature.board import Board
from renature.clock import ClockState

Phase = Literal[
    "lobby",  # created, seats joining
    "place_domino",  # step A: place or discard
    "place_plant",  # step B: place or skip (only after a placement)
    "place_mushroom",  # Valley: a mushroom was gained and must be placed at once
    "end_of_turn",  # cloud actions, extra turn, or end the turn
    "final_scoring",  # no dominoes left: waiting for the seed reveal
    "finished",
    "cancelled",  # the host cancelled it before the start
]


class SeatState(msgspec.Struct, frozen=True):
    colour: int
    name: str | None = None
    score: int = 0
    hand: tuple[int, ...] = ()
    reserve: tuple[int, ...] = ()
    # Plants on the player board: 4 own-colour slots, then 4 neutral (turf, bush, pine, oak).
    plants: tuple[int, ...] = (0,) * 8
    clouds: int = 0
    tokens: tuple[str, ...] = ()
    # playing, bot (timed out, played on by a bot), resigned, removed (timed out): seating.py
    status: str = "playing"


class GameState(msgspec.Struct, frozen=True):
    game_id: str
    board_id: str
    players: int
    commitment: str
    board: Board  # static board data, shared by every state of the game (not encoded)
    version: int = 0
    phase: Phase = "lobby"
    current: int = -1
    seats: tuple[SeatState, ...] = ()
    cover: tuple[int, ...] = ()  # animal on a covered path cell, -1 where free
    plants: tuple[int, ...] = ()  # plant code on an area cell, -1 where free
    area_of: tuple[int, ...] = ()  # area index of a cell, -1 for none (Valley: mushrooms change it)
    clouds: tuple[int, ...] = ()  # clouds lying on a cell
    area_tokens: tuple[str | None, ...] = ()  # token still lying in each area
    area_sizes: tuple[int, ...] = ()  # Valley: merged areas grow
    joker: int = 0
    turn: int = 0
    placed: tuple[int, ...] = ()  # the two cells of this turn's domino
    dominoes: tuple[tuple[int, int, int], ...] = ()  # (domino, first cell, second cell) placed
    mushrooms_left: int = 0
    box_dominoes: tuple[int, ...] = ()
    box_clouds: int = 0
    result: tuple[int, ...] = ()  # ranking, once finished
    winners: tuple[int, ...] = ()
    revealed_seed: str | None = None
    chosen_deal: bool = False  # dealt from a seed a caller chose (GameCreated.chosen_seed)
    clock: ClockState | None = None  # the turn clock, in games with a time control
    last_hash: str = ""  # hash of the last event applied (the chain continues from it)

    @property
    def is_over(self) -> bool:
        return self.phase == "finished"
