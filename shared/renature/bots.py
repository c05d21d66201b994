"""Bots: ``random`` (uniform over the legal actions) and ``greedy`` (best immediate points).

Both are deterministic given their seed: their only randomness is their own ``random.Random``.
"""

from __future__ import annotations

import random
from typing import Protocol

from msgspec.structs import replace

from renature import commands as c
from renature.components import COLOURS, NEUTRAL, PLANT_TYPES, components, plant_code
from renature.rules import (
    area_awards,
    areas_closed_by,
    legal_actions,
    legal_placements,
    plant_points,
    plant_spots,
)
from renature.state import GameState

BOT_NAMES = ("random", "greedy")


class Bot(Protocol):
    def choose(self, state: GameState, seat: int) -> c.Command: ...


class RandomBot:
    """Picks uniformly among every legal action."""

    def __init__(self, seed: str) -> None:
        self.rng = random.Random(seed)

    def choose(self, state: GameState, seat: int) -> c.Command:
        return self.rng.choice(legal_actions(state, seat))


class GreedyBot:
    """Places the domino and plant that score the most points this turn (plant points plus any
    area scoring it triggers for itself); never spends clouds; ties broken by its seed."""

    def __init__(self, seed: str) -> None:
        self.rng = random.Random(seed)

    def choose(self, state: GameState, seat: int) -> c.Command:
        if state.phase == "place_domino":
            return self._domino(state, seat)
        if state.phase == "place_plant":
            best = self._best_plant(state, seat)
            return best[1] if best else c.SkipPlant(seat)
        if state.phase == "end_of_turn":
            return c.EndTurn(seat)
        return self.rng.choice(legal_actions(state, seat))

    def _domino(self, state: GameState, seat: int) -> c.Command:
        placements = legal_placements(state, state.seats[seat].hand)
        if not placements:
            return c.DiscardDomino(seat, self.rng.choice(sorted(state.seats[seat].hand)))
        dominoes = components().dominoes
        board = state.board
        scored: list[tuple[int, tuple[int, int, int]]] = []
        cover = list(state.cover)
        for placement in placements:
            domino, p, q = placement
            cover[p], cover[q] = dominoes[domino]
            after = replace(state, cover=tuple(cover), placed=(p, q), phase="place_plant")
            cover[p] = cover[q] = -1
            best = self._best_plant(after, seat)
            scored.append((best[0] if best else self._closing_points(after, seat), placement))
        top = max(points for points, _ in scored)
        domino, p, q = self.rng.choice([pl for points, pl in scored if points == top])
        return c.PlaceDomino(seat, domino, c.Cell(*board.xy(p)), c.Cell(*board.xy(q)))

    def _closing_points(self, state: GameState, seat: int) -> int:
        total = 0
        for area in areas_closed_by(state, state.placed):
            token = state.board.token(state.area_tokens[area] or "")
            _, _, awards = area_awards(state, area, token.main, token.minor)
            total += sum(a.points for a in awards if a.seat == seat)
        return total

    def _best_plant(self, state: GameState, seat: int) -> tuple[int, c.PlacePlant] | None:
        """The best plant: for each free spot, the highest own and highest neutral plant."""
        s = state.seats[seat]
        choices = []
        for colour, first in ((s.colour, 0), (NEUTRAL, 4)):
            for kind in (3, 2, 1, 0):
                if s.plants[first + kind]:
                    choices.append(plant_code(colour, kind))
                    break
        if not choices:
            return None
        board = state.board
        closing = state.board.scoring == "on_closing" and areas_closed_by(state, state.placed)
        best: list[tuple[int, c.PlacePlant]] = []
        for cell in plant_spots(state):
            for code in choices:
                points = plant_points(state, cell, code)[0]
                if closing:
                    planted = replace(state, plants=_with(state.plants, cell, code))
                    points += self._closing_points(planted, seat)
                plant = c.PlacePlant(
                    seat,
                    c.Cell(*board.xy(cell)),
                    COLOURS[code >> 2],
                    PLANT_TYPES[code & 3],  # type: ignore[arg-type]
                )
                best.append((points, plant))
        if not best:
            return None
        top = max(points for points, _ in best)
        return top, self.rng.choice([plant for points, plant in best if points == top])


def _with(values: tuple[int, ...], index: int, value: int) -> tuple[int, ...]:
    return (*values[:index], value, *values[index + 1 :])


def make_bot(name: str, seed: str) -> Bot:
    if name == "random":
        return RandomBot(seed)
    if name == "greedy":
        return GreedyBot(seed)
    raise ValueError(f"Unknown bot {name!r}; bots: {', '.join(BOT_NAMES)}")
