"""What the platform's search bot (``gameplatform.search``) needs of Renature: a
determinization (a whole state a seat cannot tell from the real one) and a heuristic value of
an unfinished game.

The determinization starts from ``perspective(state, seat)``, so it reads nothing the seat may
not see, and fills every stand-in: the dominoes the seat has not seen (every domino less its
hand and those on the board) are shuffled into the other hands, every reserve and the box,
each hidden slot keeping its place and count; every token the seat does not hold is dealt to
the areas and other seats whose stand-in shows the same front. The seed commitment becomes that
of the search's made-up seed, so that the ``FinishGame`` of a rollout is accepted.
"""

from __future__ import annotations

import random
from collections import defaultdict

import msgspec

from gameplatform import search
from renature.areas import live_areas
from renature.board import Board, Token
from renature.components import NEUTRAL, components, plant_code, plant_value
from renature.deal import commitment
from renature.perspective import HIDDEN, perspective
from renature.position import seat_of_colour
from renature.scoring import colour_totals, majority_ranks, rank_points
from renature.state import GameState


def determinize(state: GameState, seat: int, rng: random.Random, seed: str) -> GameState:
    """A state consistent with what ``seat`` sees, the hidden rest drawn from ``rng``."""
    seen = perspective(state, seat)
    own = seen.seats[seat]
    known = {*own.hand, *(domino for domino, _, _ in seen.dominoes)}
    unseen = [d for d in range(len(components().dominoes)) if d not in known]
    rng.shuffle(unseen)
    dominoes = iter(unseen)

    def fill(slots: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(next(dominoes) if d == HIDDEN else d for d in slots)

    tokens = _TokenDeal(seen.board, own.tokens, rng)
    seats = tuple(
        msgspec.structs.replace(
            s,
            hand=fill(s.hand),
            reserve=fill(s.reserve),
            tokens=s.tokens if number == seat else tuple(tokens.draw(t) for t in s.tokens),
        )
        for number, s in enumerate(seen.seats)
    )
    return msgspec.structs.replace(
        seen,
        seats=seats,
        box_dominoes=fill(seen.box_dominoes),
        area_tokens=tuple(None if t is None else tokens.draw(t) for t in seen.area_tokens),
        commitment=commitment(seed),
    )


class _TokenDeal:
    """The tokens ``seat`` has not seen, shuffled per front (main, minor points)."""

    def __init__(self, board: Board, held: tuple[str, ...], rng: random.Random) -> None:
        self.tokens = tokens_by_id(board)
        self.piles: dict[tuple[int, int], list[str]] = defaultdict(list)
        for token in board.tokens:
            if token.id not in held:
                self.piles[(token.main, token.minor)].append(token.id)
        for pile in self.piles.values():
            rng.shuffle(pile)

    def draw(self, stand_in: str) -> str:
        token = self.tokens[stand_in]
        return self.piles[(token.main, token.minor)].pop()


def tokens_by_id(board: Board) -> dict[str, Token]:
    """The board's tokens by id, read once per call (``Board.token`` scans them all)."""
    return {token.id: token for token in board.tokens}


EVALUATION_SCALE = 8.0
"""Points ahead that count as clearly ahead (an area's majority is worth about that)."""


def prospects(state: GameState) -> list[float]:
    """Each seat's points as the end would count them if the game stopped now: its score, the
    majorities it holds in the areas the final scoring would score, its clouds (1 point each),
    less the plants still on its player board, plus its tokens' backs. The majorities are
    counted as ``rules.area_awards`` awards them (ruling 7), without writing the awards out."""
    tokens = tokens_by_id(state.board)
    points = [0.0] * state.players
    for area in _scored_at_the_end(state):
        main, minor = _front(state, area, tokens)
        for colour, rank in majority_ranks(colour_totals(state, area))[1]:
            owner = seat_of_colour(state, colour)
            if owner is not None and colour != NEUTRAL:
                points[owner] += rank_points(rank, main, minor)
    for number, seat in enumerate(state.seats):
        left = sum(
            count * plant_value(plant_code(seat.colour if slot < 4 else NEUTRAL, slot % 4))
            for slot, count in enumerate(seat.plants)
        )
        backs = sum(tokens[t].back for t in seat.tokens)
        points[number] += seat.score + seat.clouds - left + backs
    return points


def _scored_at_the_end(state: GameState) -> list[int]:
    if state.board.scoring == "on_closing":
        return [area for area, token in enumerate(state.area_tokens) if token is not None]
    return live_areas(state)


def _front(state: GameState, area: int, tokens: dict[str, Token]) -> tuple[int, int]:
    """An area's (main, minor) points: its token's front, or by its size (Valley)."""
    token_id = state.area_tokens[area]
    if token_id is not None:
        token = tokens[token_id]
        return token.main, token.minor
    return state.area_sizes[area], state.area_sizes[area] // 2


def evaluate(state: GameState) -> list[float]:
    """The search's value of an unfinished game for every seat: its prospects' margins."""
    return search.margin_values(prospects(state), EVALUATION_SCALE)
