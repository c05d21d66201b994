"""The command schema the gateway publishes (its OpenAPI document) and the decoding it does
agree: whatever the rules could offer fits the schema and decodes to itself, and whatever the
schema refuses the gateway refuses as malformed (422) before any rule is asked."""

from __future__ import annotations

from functools import cache
from typing import Any, cast, get_args

import jsonschema_rs
import msgspec
import pytest

from gameplatform import get_game
from gameserver.gateway.app import seat_command
from gameserver.gateway.http_errors import ApiError
from gameserver.gateway.schemas import seat_command_schema
from renature import commands as c
from renature.errors import InvalidCommand
from renature.game import play, replay
from renature.rules import decide, legal_actions

CELL = {"x": 3, "y": 4}

RENATURE = get_game("renature")


@cache
def validator() -> Any:
    return jsonschema_rs.validator_for(seat_command_schema())


SEATED = get_args(c.SeatCommand)
"""Every kind of a seat's command."""


def offered(board: str) -> list[c.SeatCommand]:
    """Every legal action at every 7th position of a 3-player random game on ``board``."""
    events, _ = play(3, f"schema-{board}", ["random"] * 3, board=board)
    actions: list[c.SeatCommand] = []
    for end in range(4, len(events), 7):
        state = replay(events[:end])
        assert state is not None
        if state.current >= 0 and state.phase not in ("final_scoring", "finished"):
            actions += [a for a in legal_actions(state, state.current) if isinstance(a, SEATED)]
    return actions


@pytest.mark.parametrize("board", ["base", "valley", "valley-back"])
def test_every_legal_action_fits_the_schema_and_decodes_to_itself(board: str) -> None:
    actions = offered(board)
    kinds = {type(action).__name__ for action in actions}
    assert {"PlaceDomino", "DiscardDomino", "PlacePlant", "EndTurn"} <= kinds
    for action in actions:
        sent = msgspec.to_builtins(action)
        seat = sent.pop("seat")  # a client may leave its seat out
        assert validator().is_valid(sent), sent
        assert seat_command(sent, seat, RENATURE) == action


@pytest.mark.parametrize(
    "command",
    [
        {"type": "Teleport"},
        {},
        {"type": {}},
        {"type": "EndTurn", "extra": 1},
        {"type": "DiscardDomino"},
        {"type": "DiscardDomino", "domino": -1},
        {"type": "DiscardDomino", "domino": "one"},
        {"type": "PlaceMushroom", "cell": {"x": 256, "y": 0}},
        {"type": "PlacePlant", "cell": {"x": 3, "y": 4}, "colour": "purple", "plant": "oak"},
        {"type": "PlacePlant", "cell": {"x": 3, "y": 4}, "colour": "blue", "plant": "tree"},
        {"type": "CloudAction", "kind": "sell_clouds"},
        {"type": "CloudAction", "kind": "change_joker", "animal": "unicorn"},
        {"type": "CloudAction", "kind": "change_joker", "animal": "owl" * 100_000},
        {"type": "PlaceMushroom", "cell": {"x": 1, "y": 1}, "x" * 10_000: 1},
        {"type": "EndTurn", "seat": 4},
    ],
    ids=repr,
)
def test_what_the_schema_refuses_is_malformed(command: dict[str, Any]) -> None:
    assert not validator().is_valid(command)
    with pytest.raises(ApiError) as refused:
        seat_command(command, 0, RENATURE)
    assert (refused.value.status, refused.value.code) == (422, "invalid_command")


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ({"type": "CloudAction", "kind": "change_joker"}, "Name the new joker animal"),
        ({"type": "CloudAction", "kind": "return_plant"}, "Name the cell"),
        (
            {"type": "CloudAction", "kind": "change_joker", "animal": "owl", "cell": CELL},
            "names an animal, not a cell",
        ),
        ({"type": "CloudAction", "kind": "extra_turn", "animal": "owl"}, "neither an animal"),
        ({"type": "CloudAction", "kind": "extra_turn", "cell": CELL}, "neither an animal"),
        (
            {"type": "CloudAction", "kind": "return_plant", "cell": CELL, "animal": "owl"},
            "its cell, not an animal",
        ),
    ],
)
def test_what_only_the_rules_can_check_they_refuse_as_invalid(
    command: dict[str, Any], message: str
) -> None:
    """A cloud action's needs depend on its kind, so the rules check them (the schema spells
    them out): the rules service answers invalid_command, which the gateway turns into a 422 as
    well. (An animal the components do not name is refused by the decoding already.)"""
    assert not validator().is_valid(command)
    events, _ = play(2, "invalid", ["random"] * 2)
    state = replay(events[:4])  # created, joined, started: the first seat's turn
    assert state is not None
    with pytest.raises(InvalidCommand, match=message):
        decide(state, cast(c.Command, seat_command(command, state.current, RENATURE)))


def test_a_whole_number_written_with_a_fraction_is_that_number() -> None:
    """JSON has one kind of number: 5.0 is the integer 5, to JSON Schema and to the gateway."""
    sent = {"type": "PlaceMushroom", "cell": {"x": 5.0, "y": 7}}
    assert validator().is_valid(sent)
    assert seat_command(sent, 1, RENATURE) == c.PlaceMushroom(seat=1, cell=c.Cell(5, 7))
    with pytest.raises(ApiError):
        seat_command({"type": "PlaceMushroom", "cell": {"x": 5.5, "y": 7}}, 1, RENATURE)
