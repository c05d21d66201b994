"""A small position builder for the rules tests.

A test starts a real game (``new_game``: CreateGame, JoinGame for every seat, StartGame), then
sets up the position it needs by replacing parts of the immutable ``GameState``: animals on the
brook (drawn as an ASCII window of the board map), plants in an area, clouds on a seat, the joker,
a hand. Commands are then given through the real ``execute``.

Sketches are windows of the board map (``shared/renature/data/boards/base.toml``; x grows right,
y grows down) with animals drawn in on the brook::

    .oooo.      y = 8, x = 3..8
    M.NNNo      y = 9
    M.N##@      y = 10

Board characters must agree with the board (``.`` free brook, ``@`` free starting space, area
letters, ``#`` off the board), so a diagram in a test is always the real board. A lowercase letter
is a brook space covered by that animal (see ``ANIMAL_LETTERS``); a space is left as it is.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from msgspec.structs import replace

from renature import commands as c
from renature import events as e
from renature.areas import is_closed
from renature.board import AREA, OFF, PATH
from renature.components import COLOURS, NEUTRAL, PLANT_TYPES, components, plant_code
from renature.rules import execute
from renature.state import GameState

SEED = "unit-test seed"
# Seat 0 is orange, 1 blue, 2 black (3 or 4 players): the rule book's Mary and Frank.
NAMES = ("Mary", "Paul", "Frank", "Anna")

# One letter per animal for sketches.
ANIMAL_LETTERS: dict[str, str] = {
    "b": "butterfly",
    "s": "salamander",
    "o": "owl",
    "w": "woodpecker",
    "f": "frog",
    "h": "hedgehog",
    "x": "fox",
    "d": "deer",
    "n": "heron",
    "v": "beaver",
}
LETTER_OF = {name: letter for letter, name in ANIMAL_LETTERS.items()}

XY = tuple[int, int]
K = TypeVar("K", bound=e.Event)


# --- games and commands ------------------------------------------------------------------------


def new_game(players: int = 3, seed: str = SEED, board: str = "base") -> GameState:
    """A started game: seat 0 (the starting player) is about to place a domino."""
    return run(
        None,
        c.CreateGame(game_id="unit-game", players=players, seed=seed, board=board),
        *(c.JoinGame(seat, NAMES[seat]) for seat in range(players)),
        c.StartGame(),
    )[1]


def run(state: GameState | None, *commands: c.Command) -> tuple[list[e.Event], GameState]:
    """Execute commands one after another; all their events and the final state."""
    log: list[e.Event] = []
    for command in commands:
        events, state = execute(state, command)
        log += events
    assert state is not None
    return log, state


def of_type(events: Iterable[e.Event], kind: type[K]) -> list[K]:
    return [ev for ev in events if isinstance(ev, kind)]


def animal(name: str) -> int:
    return components().animal(name)


def domino(first: str, second: str) -> int:
    """The id of the domino showing these two animals (in either order)."""
    pair = sorted((animal(first), animal(second)))
    return components().dominoes.index((pair[0], pair[1]))


def place(seat: int, first: str, at: XY, second: str, then: XY) -> c.PlaceDomino:
    """Place the domino ``first``-``second`` with ``first`` on ``at`` and ``second`` on ``then``."""
    d = domino(first, second)
    if components().dominoes[d][0] != animal(first):  # the domino lists them the other way
        at, then = then, at
    return c.PlaceDomino(seat, d, c.Cell(*at), c.Cell(*then))


def plant(seat: int, at: XY, what: str) -> c.PlacePlant:
    """``plant(0, (5, 9), "orange bush")``."""
    colour, kind = what.split()
    return c.PlacePlant(seat, c.Cell(*at), colour, kind)  # type: ignore[arg-type]  # words a test writes; the rules check them


def plant_of(what: str) -> int:
    colour, kind = what.split()
    return plant_code(COLOURS.index(colour), PLANT_TYPES.index(kind))


def cell(state: GameState, x: int, y: int) -> int:
    return state.board.index(x, y)


def area(state: GameState, area_id: str) -> int:
    return state.board.area_ids.index(area_id)


# --- changing a position -----------------------------------------------------------------------


def with_seat(state: GameState, seat: int, **changes: Any) -> GameState:
    seats = list(state.seats)
    seats[seat] = replace(seats[seat], **changes)
    return replace(state, seats=tuple(seats))


def with_hand(
    state: GameState, seat: int, *dominoes: int, reserve: Iterable[int] = ()
) -> GameState:
    return with_seat(state, seat, hand=tuple(dominoes), reserve=tuple(reserve))


def with_clouds(state: GameState, seat: int, clouds: int) -> GameState:
    return with_seat(state, seat, clouds=clouds)


def with_joker(state: GameState, name: str) -> GameState:
    return replace(state, joker=animal(name))


def with_turn(state: GameState, seat: int, phase: str = "place_domino") -> GameState:
    return replace(state, current=seat, phase=phase, placed=())


def with_animals(state: GameState, animals: Mapping[XY, str]) -> GameState:
    """Cover brook spaces with animals, e.g. ``{(9, 4): "owl"}``.

    Each animal is also listed among the placed dominoes, as a one-space entry (the double of
    that animal on that space twice), so code that walks the placed dominoes sees it too.
    """
    cover = list(state.cover)
    placed = list(state.dominoes)
    for (x, y), name in animals.items():
        here = cell(state, x, y)
        assert state.board.kinds[here] == PATH, f"({x}, {y}) is not a brook space"
        assert cover[here] < 0, f"({x}, {y}) is covered already"
        cover[here] = animal(name)
        placed.append((domino(name, name), here, here))
    return replace(state, cover=tuple(cover), dominoes=tuple(placed))


def with_plants(state: GameState, plants: Mapping[XY, str | None]) -> GameState:
    """Put plants on area spaces, e.g. ``{(5, 9): "orange bush"}``; None clears a space."""
    codes = list(state.plants)
    for (x, y), what in plants.items():
        assert state.area_of[cell(state, x, y)] >= 0, f"({x}, {y}) is not an area space"
        codes[cell(state, x, y)] = -1 if what is None else plant_of(what)
    return replace(state, plants=tuple(codes))


def without_token(state: GameState, area_id: str) -> GameState:
    """The area as if it had been scored already (its token taken)."""
    tokens = list(state.area_tokens)
    tokens[area(state, area_id)] = None
    return replace(state, area_tokens=tuple(tokens))


def ready_to_plant(
    state: GameState, seat: int, first: XY, second: XY, animal_name: str = "butterfly"
) -> GameState:
    """Step B of ``seat``'s turn, as if this turn's domino lay on ``first`` and ``second``."""
    state = with_animals(state, {first: animal_name, second: animal_name})
    return replace(
        state,
        current=seat,
        phase="place_plant",
        placed=(cell(state, *first), cell(state, *second)),
    )


def with_sketch(state: GameState, sketch: str, at: XY) -> GameState:
    """Lay animals on the brook as drawn; ``at`` is the board position of the top-left character.

    Every other character is checked against the board, so the drawing cannot drift from it.
    """
    board = state.board
    x0, y0 = at
    animals: dict[XY, str] = {}
    for dy, row in enumerate(_rows(sketch)):
        for dx, ch in enumerate(row):
            x, y = x0 + dx, y0 + dy
            assert board.contains(x, y), f"the sketch leaves the board at ({x}, {y})"
            here = board.index(x, y)
            if ch in ANIMAL_LETTERS:
                animals[(x, y)] = ANIMAL_LETTERS[ch]
            else:
                assert _board_char(state, here) == ch, (
                    f"the sketch shows {ch!r} at ({x}, {y}); the board has "
                    f"{_board_char(state, here)!r}"
                )
    return with_animals(state, animals)


def sketch(state: GameState, top_left: XY, bottom_right: XY) -> str:
    """The window of the board from ``top_left`` to ``bottom_right`` (inclusive) as a sketch,
    animals drawn in: the inverse of ``with_sketch``."""
    (x0, y0), (x1, y1) = top_left, bottom_right
    rows = []
    for y in range(y0, y1 + 1):
        row = ""
        for x in range(x0, x1 + 1):
            here = state.board.index(x, y)
            covered = state.cover[here]
            row += (
                LETTER_OF[components().animals[covered]]
                if covered >= 0
                else _board_char(state, here)
            )
        rows.append(row)
    return "\n".join(rows)


def _rows(text: str) -> list[str]:
    return textwrap.dedent(text).strip("\n").split("\n")


def _board_char(state: GameState, here: int) -> str:
    board = state.board
    kind = board.kinds[here]
    if kind == OFF:
        return "#"
    if kind == AREA:
        return board.area_ids[board.area_of[here]]
    return "@" if here in board.starts else "."


# --- situations several test files start from --------------------------------------------------

# Area N of the base board, a 4-space area (token: main 4, minor 2), its brook covered all round
# except (4, 9) and (4, 10), where the closing domino goes (sketch at (3, 8)).
AREA_N = """
    .oooo.
    M.NNNo
    M.N##@
    """


def close_area_n(
    plants: Mapping[XY, str | None], closer: int = 0
) -> tuple[list[e.Event], GameState]:
    """``closer`` places two owls on (4, 9)-(4, 10), closing area N with these plants in it,
    and skips the plant: the events of the turn and the state after it."""
    state = with_sketch(new_game(), AREA_N, at=(3, 8))
    state = with_plants(state, plants)
    state = with_hand(with_turn(state, closer), closer, domino("owl", "owl"))
    assert not is_closed(state, area(state, "N"))
    return run(state, place(closer, "owl", (4, 9), "owl", (4, 10)), c.SkipPlant(closer))


def finish(state: GameState) -> tuple[list[e.Event], GameState]:
    """Nobody has a domino left: the final scoring, with the seed revealed (the state is put
    into the final scoring phase first, so any position can be finished)."""
    state = replace(state, phase="final_scoring", current=-1, placed=())
    return run(state, c.FinishGame(SEED))


# --- reading a position -------------------------------------------------------------------------


def awards(scored: e.AreaScored) -> list[tuple[int, int]]:
    """The (seat, points) of an area scoring."""
    return [(award.seat, award.points) for award in scored.awards]


def plants_on_board(state: GameState) -> int:
    return sum(1 for code in state.plants if code >= 0)


def plants_on_player_boards(state: GameState) -> int:
    return sum(sum(seat.plants) for seat in state.seats)


def clouds_in_game(state: GameState) -> int:
    """Every cloud of the game: held by the seats, on the board and in the box."""
    return sum(seat.clouds for seat in state.seats) + sum(state.clouds) + state.box_clouds


def plants_in_game(state: GameState) -> int:
    """Every plant of the game: on the board and on the player boards."""
    return plants_on_board(state) + plants_on_player_boards(state)


def plants_everywhere(state: GameState) -> Counter[int]:
    """Every plant by code (colour and type): on the board and on the player boards."""
    plants = Counter(code for code in state.plants if code >= 0)
    for seat in state.seats:
        for slot, count in enumerate(seat.plants):
            colour = seat.colour if slot < 4 else NEUTRAL
            plants[plant_code(colour, slot % 4)] += count
    return plants


def neutral_slot(kind: str) -> int:
    """Index of a neutral plant type in ``SeatState.plants`` (own colour first, then neutral)."""
    return 4 + PLANT_TYPES.index(kind)


def own_slot(kind: str) -> int:
    return PLANT_TYPES.index(kind)


def player_board(**counts: int) -> tuple[int, ...]:
    """Plants on a player board, e.g. ``player_board(turf=1, neutral_oak=2)``; the rest empty."""
    slots = [0] * 8
    for name, count in counts.items():
        slots[neutral_slot(name[8:]) if name.startswith("neutral_") else own_slot(name)] = count
    return tuple(slots)
