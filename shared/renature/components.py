"""Component data of Renature, read once from ``data/components.toml``.

The rules core reads its component tables from package data shipped with the code (never from
the game's environment), so a value marked (R) in the data file can be corrected without touching
code. Everything here is immutable.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal, get_args

Colour = Literal["orange", "blue", "black", "white", "neutral"]
PlantType = Literal["turf", "bush", "pine", "oak"]
COLOURS: tuple[str, ...] = get_args(Colour)
NEUTRAL = COLOURS.index("neutral")
PLANT_TYPES: tuple[str, ...] = get_args(PlantType)


def plant_code(colour: int, plant_type: int) -> int:
    """Plants are stored as one small int: colour * 4 + type."""
    return colour * 4 + plant_type


def plant_colour(code: int) -> int:
    return code >> 2


def plant_type(code: int) -> int:
    return code & 3


def plant_value(code: int) -> int:
    """Turf 1, bush 2, pine 3, oak 4."""
    return (code & 3) + 1


@dataclass(frozen=True, slots=True)
class PlayerBoardSpec:
    """Plant spaces of one player board (per plant type, turf..oak) and its cloud spaces."""

    name: str
    own: tuple[int, ...]
    neutral: tuple[int, ...]
    neutral_icon: int

    def capacity(self, players: int) -> tuple[int, ...]:
        """Usable spaces: 4 own-colour slots then 4 neutral slots (turf, bush, pine, oak).

        With 4 players the neutral turf spaces carrying the 4-player icon stay empty and are
        never free for a returned plant, so they are not capacity at all.
        """
        neutral = list(self.neutral)
        if players == 4:
            neutral[0] -= self.neutral_icon
        return (*self.own, *neutral)


@dataclass(frozen=True, slots=True)
class Components:
    animals: tuple[str, ...]
    starting_joker: int
    dominoes: tuple[tuple[int, int], ...]
    supply: dict[str, tuple[int, ...]]
    seat_colours: dict[int, tuple[str, ...]]
    dominoes_per_player: dict[int, int]
    hand_size: int
    starting_scores: tuple[int, ...]
    cloud_spaces: int
    joker_cost: int
    extra_turn_cost: int
    player_boards: dict[int, PlayerBoardSpec]

    def animal(self, name: str) -> int:
        return self.animals.index(name)


def _read_toml(*parts: str) -> dict[str, Any]:
    data = resources.files("renature").joinpath("data", *parts).read_bytes()
    return tomllib.loads(data.decode())


@cache
def components() -> Components:
    raw = _read_toml("components.toml")
    animals = tuple(raw["animals"])
    # Every combination of two animals exactly once: 45 mixed pairs and 10 doubles.
    dominoes = tuple((a, b) for a in range(len(animals)) for b in range(a, len(animals)))
    boards: dict[int, PlayerBoardSpec] = {}
    for name, spec in raw["player_boards"].items():
        board = PlayerBoardSpec(
            name=name,
            own=tuple(spec["own"]),
            neutral=tuple(spec["neutral"]),
            neutral_icon=spec["neutral_icon"],
        )
        for players in spec["players"]:
            boards[players] = board
    rules = raw["rules"]
    return Components(
        animals=animals,
        starting_joker=animals.index(raw["starting_joker"]),
        dominoes=dominoes,
        supply={colour: tuple(counts) for colour, counts in raw["supply"].items()},
        seat_colours={int(k): tuple(v) for k, v in raw["seat_colours"].items()},
        dominoes_per_player={int(k): v for k, v in raw["dominoes_per_player"].items()},
        hand_size=rules["hand_size"],
        starting_scores=tuple(rules["starting_scores"]),
        cloud_spaces=rules["cloud_spaces"],
        joker_cost=rules["joker_cost"],
        extra_turn_cost=rules["extra_turn_cost"],
        player_boards=boards,
    )
