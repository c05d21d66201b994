"""Bots: ``random`` (uniform over the legal actions) and ``greedy`` (best immediate points).

Both are deterministic given their seed: their only randomness is their own ``random.Random``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

from gameplatform import simulation
from renature import commands as c
from renature.areas import areas_closed_by
from renature.components import COLOURS, NEUTRAL, PLANT_TYPES, plant_code, plant_value
from renature.geometry import geometry
from renature.legal_moves import legal_actions
from renature.placement import legal_placements
from renature.scoring import colour_totals, majority_ranks, plant_points, rank_points
from renature.state import GameState

BOT_NAMES = ("random", "greedy")


class Bot(Protocol):
    def choose(self, state: GameState, seat: int) -> c.Command: ...


class RandomBot(simulation.RandomBot):
    """Picks uniformly among every legal action (the platform's random bot)."""

    def __init__(self, seed: str) -> None:
        super().__init__(seed, legal_actions)


class GreedyBot:
    """Places the domino and plant that score the most points this turn (plant points plus any
    area scoring it triggers for itself); never spends clouds; ties broken by its seed."""

    def __init__(self, seed: str) -> None:
        self.rng = random.Random(seed)

    def choose(self, state: GameState, seat: int) -> c.Command:
        if state.phase == "place_domino":
            return self._domino(state, seat)
        if state.phase == "place_plant":
            closed = areas_closed_by(state, state.placed) if _scores_on_closing(state) else []
            options = _rate_plants(state, seat, state.placed, closed)
            top = max(points for points, _, _ in options)
            _, spot, code = self.rng.choice([o for o in options if o[0] == top])
            if spot < 0:
                return c.SkipPlant(seat)
            colour, plant = COLOURS[code >> 2], PLANT_TYPES[code & 3]
            return c.PlacePlant(seat, c.Cell(*state.board.xy(spot)), colour, plant)  # type: ignore[arg-type]
        if state.phase == "end_of_turn":
            return c.EndTurn(seat)
        # Valley: always take the mushroom, on a random space
        places = [a for a in legal_actions(state, seat) if not isinstance(a, c.SkipMushroom)]
        return self.rng.choice(places)

    def _domino(self, state: GameState, seat: int) -> c.Command:
        placements = legal_placements(state, state.seats[seat].hand)
        if not placements:
            return c.DiscardDomino(seat, self.rng.choice(sorted(state.seats[seat].hand)))
        facts = _TurnFacts(state, seat)
        rated: dict[tuple[int, int], int] = {}  # by the two spaces covered, in either order
        scored = []
        for d, p, q in placements:
            edge = (p, q) if p < q else (q, p)
            if edge not in rated:
                rated[edge] = facts.best_points(*edge)
            scored.append((rated[edge], (d, p, q)))
        top = max(points for points, _ in scored)
        domino, p, q = self.rng.choice([pl for points, pl in scored if points == top])
        board = state.board
        return c.PlaceDomino(seat, domino, c.Cell(*board.xy(p)), c.Cell(*board.xy(q)))


def _scores_on_closing(state: GameState) -> bool:
    return state.board.scoring == "on_closing"


class _TurnFacts:
    """What the greedy bot needs to rate every placement of one turn, computed once: the free
    brook spaces, the open brook spaces around each area, and plant points per area space."""

    def __init__(self, state: GameState, seat: int) -> None:
        self.state, self.seat = state, seat
        self.board = state.board
        self.spot_points: dict[int, int] = {}
        self.choices = _plant_choices(state, seat)
        geo = geometry(state.board_id)
        self.closable = geo.closable_by
        neighbours = self.board.neighbours
        self.free = free = {
            cell for cell in geo.path if state.cover[cell] < 0 and state.area_of[cell] < 0
        }
        # Open: free and not isolated (a domino can still cover it).
        self.open_border = {
            area: {c for c in border if c in free and any(n in free for n in neighbours[c])}
            for area, border in enumerate(geo.area_border)
            if _scores_on_closing(state) and state.area_tokens[area] is not None
        }

    def best_points(self, p: int, q: int) -> int:
        """The most points a placement on p and q can bring this turn (the animals do not
        matter: only the brook spaces it covers)."""
        closed = self._closed_by(p, q)
        if closed:
            return max(
                points for points, _, _ in _rate_plants(self.state, self.seat, (p, q), closed)
            )
        best = 0
        state = self.state
        neighbours, area_of, plants = self.board.neighbours, state.area_of, state.plants
        for cell in (p, q):
            for spot in neighbours[cell]:
                if area_of[spot] >= 0 and plants[spot] < 0:
                    points = self.spot_points.get(spot)
                    if points is None:
                        points = max(
                            (plant_points(state, spot, code)[0] for code in self.choices),
                            default=0,
                        )
                        self.spot_points[spot] = points
                    best = max(best, points)
        return best

    def _closed_by(self, p: int, q: int) -> list[int]:
        """Areas that covering p and q closes: their open border lies within p, q and the
        brook spaces that p and q leave isolated."""
        border = self.open_border
        areas = [
            a
            for a in {*self.closable.get(p, ()), *self.closable.get(q, ())}
            if a in border and len(border[a]) <= 6  # p, q and at most 4 newly isolated spaces
        ]
        if not areas:
            return []
        neighbours, free = self.board.neighbours, self.free
        gone = {p, q}
        for cell in (p, q):
            for n in neighbours[cell]:
                if (
                    n not in gone
                    and n in free
                    and all(m in (p, q) for m in neighbours[n] if m in free)
                ):
                    gone.add(n)
        return sorted(a for a in areas if border[a] <= gone)


def _plant_choices(state: GameState, seat: int) -> list[int]:
    """The highest own-colour plant and the highest neutral plant left on the player board."""
    s = state.seats[seat]
    choices = []
    for colour, first in ((s.colour, 0), (NEUTRAL, 4)):
        for kind in (3, 2, 1, 0):
            if s.plants[first + kind]:
                choices.append(plant_code(colour, kind))
                break
    return choices


def _rate_plants(
    state: GameState, seat: int, placed: tuple[int, ...], closed: list[int]
) -> list[tuple[int, int, int]]:
    """(points, space, plant) for skipping (space -1) and for each good plant beside the
    domino: the plant's points plus what this seat gets from the areas the domino closed."""
    colour = state.seats[seat].colour
    scorings = []
    for area in closed:
        token = state.board.token(state.area_tokens[area] or "")
        scorings.append((area, colour_totals(state, area), token.main, token.minor))

    def own(totals: list[int], main: int, minor: int) -> int:
        _, ranks = majority_ranks(totals)
        return sum(rank_points(rank, main, minor) for col, rank in ranks if col == colour)

    base = [own(totals, main, minor) for _, totals, main, minor in scorings]
    options = [(sum(base), -1, -1)]
    neighbours = state.board.neighbours
    spots = sorted(
        {
            n
            for cell in placed
            for n in neighbours[cell]
            if state.area_of[n] >= 0 and state.plants[n] < 0
        }
    )
    for spot in spots:
        area = state.area_of[spot]
        for code in _plant_choices(state, seat):
            points = plant_points(state, spot, code)[0]
            for (scored, totals, main, minor), before in zip(scorings, base, strict=True):
                if scored == area:
                    after = list(totals)
                    after[code >> 2] += plant_value(code)
                    points += own(after, main, minor)
                else:
                    points += before
            options.append((points, spot, code))
    return options


def make_bot(name: str, seed: str) -> Bot:
    kinds: dict[str, Callable[[str], Bot]] = {"random": RandomBot, "greedy": GreedyBot}
    return simulation.make_bot(kinds, name, seed)
