"""What the platform asks of Renature beyond the rules: the creation options and command, the
seed in the commands that carry it, which events start, end and close a game, whose move it is,
the table every game reports, the source of each scoring event's points, the components as
data and the seat commands' schema spelled out (``adapter.py`` forwards each)."""

from __future__ import annotations

import copy
from typing import Any

import msgspec

from gameplatform.forms import inline_schema
from gameplatform.interface import Award, Table
from renature import board as boards
from renature import commands as c
from renature import events as e
from renature.clock import TimeControl
from renature.components import COLOURS, components
from renature.state import GameState


class RenatureOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What a Renature game is created with beyond players and board: a turn clock
    (docs/rules.md, "Clocks"); none by default."""

    time_control: TimeControl | None = None

    def problem(self) -> str | None:
        return None if self.time_control is None else self.time_control.problem()


def create_command(
    game_id: str, players: int, board: str | None, options: dict[str, Any] | None
) -> c.CreateGame:
    """The creation of a game (the seed is the service's to draw)."""
    control = (options or {}).get("time_control")
    clock = msgspec.UNSET if control is None else control
    return c.CreateGame(
        game_id=game_id, players=players, seed="", board=board or "base", clock=clock
    )


def with_seed(command: c.Command, seed: str, salt: str = "", chosen: bool = False) -> c.Command:
    """The creation with its seed and salt, the end of the game with the seed revealed."""
    if isinstance(command, c.CreateGame):
        return msgspec.structs.replace(command, seed=seed, salt=salt, chosen_seed=chosen)
    if isinstance(command, c.FinishGame):
        return c.FinishGame(seed=seed, salt=salt)
    return command


def needs_seed(command: c.Command) -> bool:
    return isinstance(command, c.CreateGame | c.FinishGame)


def is_closed(state: GameState) -> bool:
    return state.phase in ("finished", "cancelled")


def starts(event: e.Event) -> bool:
    return isinstance(event, e.GameStarted)


def ends(event: e.Event) -> bool:
    return isinstance(event, e.GameEnded)


def closes(event: e.Event) -> bool:
    return isinstance(event, e.GameEnded | e.GameCancelled)


def to_move(state: GameState) -> int | None:
    if state.phase in ("lobby", "final_scoring", "finished", "cancelled"):
        return None
    return state.current


def finishing_command(state: GameState, seed: str, salt: str = "") -> c.Command | None:
    """Revealing the seed ends a game once nobody has a domino left."""
    return c.FinishGame(seed, salt) if state.phase == "final_scoring" else None


def progress(state: GameState) -> str:
    return f"turn {state.turn}, {state.phase}"


def table(state: GameState) -> Table:
    return Table(
        game_id=state.game_id,
        version=state.version,
        board=state.board_id,
        players=state.players,
        phase=state.phase,
        to_move=to_move(state),
        current=state.current if state.current >= 0 else None,
        seed="chosen" if state.chosen_deal else "secret",
        names=[seat.name for seat in state.seats],
        colours=[COLOURS[seat.colour] for seat in state.seats],
        statuses=[seat.status for seat in state.seats],
        scores=[seat.score for seat in state.seats],
        ranking=list(state.result),
        winners=list(state.winners),
        over=state.is_over,
        started=state.phase != "lobby",
    )


SOURCES: dict[type[e.Event], str] = {
    e.GameStarted: "start",
    e.PlantPlaced: "plants",
    e.AreaScored: "areas",
    e.CloudsScored: "clouds",
    e.PlantsPenalised: "plants_left",
    e.TokensRevealed: "token_backs",
}
"""The source of the points of each scoring event (final area scorings: ``final_areas``)."""


def source_of(event: e.Event) -> str:
    if isinstance(event, e.AreaScored) and event.final:
        return "final_areas"
    return SOURCES.get(type(event), type(event).__name__)


def points_awarded(event: e.Event) -> list[Award]:
    source = source_of(event)
    return [Award(seat, points, source, reason) for seat, points, reason in e.points_awarded(event)]


def components_json(board_names: tuple[str, ...]) -> dict[str, Any]:
    """The animals, the dominoes and every board named, as data."""
    comps = components()
    return {
        "animals": list(comps.animals),
        "dominoes": [list(d) for d in comps.dominoes],
        "boards": {
            name: msgspec.to_builtins(boards.board_json(boards.load_board(name)))
            for name in board_names
        },
    }


def board_geometry(board: str, board_names: tuple[str, ...]) -> boards.BoardJson | None:
    return boards.board_json(boards.load_board(board)) if board in board_names else None


def seat_command_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The seat commands' ``schema`` with what the rules would otherwise refuse as naming
    nothing spelled out: the animals of the component data, and the ``animal`` or ``cell``
    each kind of cloud action needs."""
    variants = []
    for variant in schema["anyOf"]:
        if variant["title"] == "CloudAction":
            variants.extend(_cloud_action_variants(variant, inline_schema(c.Cell)))
        else:
            variants.append(variant)
    return {"anyOf": variants}


def _cloud_action_variants(action: dict[str, Any], cell: dict[str, Any]) -> list[dict[str, Any]]:
    """One variant per kind of cloud action, each requiring what that kind names and
    refusing what it does not."""
    needs: dict[str, dict[str, Any]] = {
        "change_joker": {"animal": {"enum": list(components().animals)}},
        "extra_turn": {},
        "return_plant": {"cell": cell},
    }
    variants = []
    for kind in action["properties"]["kind"]["enum"]:
        variant = copy.deepcopy(action)
        variant["title"] = f"CloudAction ({kind})"
        variant["properties"]["kind"] = {"enum": [kind]}
        for field in ("animal", "cell"):  # what the kind does not name stays out (or null)
            variant["properties"][field] = needs[kind].get(field, {"type": "null"})
        variant["required"].extend(needs[kind])
        variants.append(variant)
    return variants
