"""Request and response bodies of the HTTP API (pydantic, so they show up in /docs).

Game views, states and events are msgspec structs of the rules core; they are sent as they
are (``MsgspecResponse``) and described in docs/http-api.md rather than duplicated here.
"""

from __future__ import annotations

import copy
from typing import Annotated, Any, Literal

import msgspec
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Discriminator, Field, Tag, WithJsonSchema, model_validator

from gameplatform import game_names, get_game
from gameserver.gateway.lobby_entries import ClockSummary, SeatSummary, TimeControlBody
from gameserver.runtime import bus
from renature import commands as c
from renature.board import BOARD_IDS
from renature.components import components

MAX_ID_TOKEN = 8192
"""The longest identity token (JWT) taken."""

GameName = Literal["renature", "renaissance"]
"""The games this server hosts (`gameplatform.game_names`)."""


def seat_command_schema() -> dict[str, Any]:
    """What a client may send as a command: msgspec's schema of each game's seat commands with
    its definitions inlined, ``seat`` optional (the token's seat is filled in), and what the
    rules would otherwise refuse as naming nothing spelled out: the animals of the component
    data, and the ``animal`` or ``cell`` each kind of cloud action needs. So a command that fits
    this schema is refused, if at all, by a rule of the game (409; a command of the other game
    than the game's is 409 ``wrong_game``), never as malformed (422)."""
    variants = []
    for variant in bus.inline_schema(c.SeatCommand)["anyOf"]:
        variant["required"].remove("seat")
        if variant["title"] == "CloudAction":
            variants.extend(_cloud_action_variants(variant, bus.inline_schema(c.Cell)))
        else:
            variants.append(variant)
    for name in game_names()[1:]:  # the other games' moves, as their own rules read them
        for variant in bus.inline_schema(get_game(name).seat_command_type)["anyOf"]:
            variant["required"].remove("seat")
            variant["title"] = f"{variant['title']} ({name.title()})"
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


class _NewGame(BaseModel):
    seed: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description=(
            "For tests, bots and tournaments only: deal from this seed instead of a secret "
            "random one. The game is marked as dealt from a chosen seed. (Renaissance deals "
            "nothing: its seed is public and only names the game.)"
        ),
    )
    seating: Literal["open", "invite"] = Field(
        default="open", description="open: anyone may join; invite: a join needs the code"
    )


class NewRenatureGame(_NewGame):
    """A Renature game (``game`` may be left out)."""

    game: Literal["renature"] = "renature"
    players: int = Field(ge=2, le=4, description="2, 3 or 4 players")
    board: Literal[BOARD_IDS] = Field(  # type: ignore[valid-type]
        default="base", description="base, valley or valley-back"
    )
    time_control: TimeControlBody | None = Field(
        default=None, description="A turn clock (docs/rules.md, Clocks); none by default"
    )


class NewRenaissanceGame(_NewGame):
    """A Renaissance game: two players on the standard board."""

    game: Literal["renaissance"]
    players: int = Field(default=2, ge=2, le=2, description="2 players")
    board: Literal["standard"] = "standard"
    sets: int = Field(default=1, ge=1, le=16, description="How many sets are played")
    competition: Literal["points", "sets"] = Field(
        default="points", description="The winner by total points, or by sets won"
    )


def _game_asked(body: Any) -> Any:
    """Which game a creation asks for: its ``game``, Renature when it names none."""
    if isinstance(body, dict):
        return body.get("game", "renature")
    return getattr(body, "game", "renature")


CreateGameRequest = Annotated[
    Annotated[NewRenatureGame, Tag("renature")] | Annotated[NewRenaissanceGame, Tag("renaissance")],
    Discriminator(_game_asked),
]
"""What ``POST /games`` takes: the body of one game or the other, told apart by ``game``."""


class CreateGameResponse(BaseModel):
    game_id: str
    game: str = Field(default="renature", description="renature or renaissance")
    players: int
    board: str
    version: int
    seed: str = Field(
        description="'chosen' (dealt from the caller's seed), 'secret', or 'public' (a game "
        "whose seed deals nothing hidden: Renaissance)"
    )
    host_token: str = Field(
        description="Secret host token (shown once): start, cancel, remove players"
    )
    invite_code: str | None = Field(
        default=None, description="The invitation code to hand out (invite seating only)"
    )


class JoinRequest(BaseModel):
    name: str = Field(
        min_length=1,
        max_length=40,
        pattern=c.PLAYER_NAME_PATTERN,
        description="1 to 40 characters, no control or invisible formatting characters",
    )
    invite: str | None = Field(
        default=None, max_length=64, description="The invitation code (invite seating only)"
    )
    id_token: str | None = Field(
        default=None,
        max_length=MAX_ID_TOKEN,
        description="The user's signed token (JWT) from the identity provider the server is "
        "configured with: binds the seat to that user, who may reclaim it from any device",
    )


class JoinResponse(BaseModel):
    game_id: str
    seat: int
    token: str = Field(description="Secret seat token: send it as 'Authorization: Bearer ...'")
    recovery: str = Field(
        description="Secret recovery code, shown once: POST /games/{id}/seats/{n}/reclaim "
        "with it restores the seat on another device (once; a new code comes with the new token)"
    )
    bound: bool = Field(default=False, description="The seat is bound to the id_token's user")
    version: int
    seed: str = Field(
        description="'chosen' (dealt from a seed a caller chose, who knows every hand), "
        "'public' (a game whose seed deals nothing hidden, such as Renaissance) or "
        "'secret'; every seat's view says the same (chosen_seed)"
    )


class ReclaimRequest(BaseModel):
    """Exactly one proof that the seat is the caller's."""

    recovery: str | None = Field(
        default=None, min_length=16, max_length=128, description="The seat's recovery code"
    )
    id_token: str | None = Field(
        default=None,
        max_length=MAX_ID_TOKEN,
        description="A fresh signed token (JWT) of the user the seat is bound to",
    )

    @model_validator(mode="after")
    def _one_proof(self) -> ReclaimRequest:
        if (self.recovery is None) == (self.id_token is None):
            raise ValueError("send exactly one of recovery and id_token")
        return self


class ReclaimResponse(BaseModel):
    game_id: str
    seat: int
    token: str = Field(description="The seat's new token (the old one no longer works)")
    recovery: str = Field(description="The seat's new recovery code (the old one is used up)")


class CommandRequest(BaseModel):
    command_id: str = Field(
        min_length=1,
        max_length=128,
        pattern=r"^[A-Za-z0-9._~-]+$",
        description="Chosen by the client (letters, digits, . _ ~ -), unique per game and "
        "seat; a retry with the same id returns the same reply and appends nothing",
    )
    command: Annotated[dict[str, Any], WithJsonSchema(seat_command_schema())] = Field(
        description="A seat command tagged by 'type', e.g. {'type': 'EndTurn'}; "
        "'seat' may be left out (the token's seat is filled in)"
    )


class Accepted(BaseModel):
    game_id: str
    command_id: str
    version: int
    first_version: int
    last_version: int


class GameSummary(BaseModel):
    game_id: str
    game: str = Field(default="renature", description="renature or renaissance")
    version: int
    board: str
    players: int
    phase: str
    current_seat: int | None
    seats_joined: list[int]
    seed: str | None = Field(
        description="'chosen', 'secret', 'public', or null if not created here"
    )
    seats: list[SeatSummary] = Field(default=[], description="Each seat's colour and player")
    open_seats: list[int] = Field(default=[], description="Seats still free (lobby only)")
    seating: str = Field(default="open", description="open or invite")
    clock: ClockSummary | None = None


class MsgspecResponse(JSONResponse):
    """A JSON response encoded by msgspec (core structs encode natively and fast). A
    `JSONResponse` so that the OpenAPI document shows the schema a route declares for it."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        if isinstance(content, bytes):
            return content
        return msgspec.json.encode(content)
