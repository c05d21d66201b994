"""Request and response bodies of the HTTP API (pydantic, so they show up in /docs).

Game views, states and events are msgspec structs of the rules core; they are sent as they
are (``MsgspecResponse``) and described in docs/http-api.md rather than duplicated here.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from fastapi.responses import JSONResponse
from pydantic import AfterValidator, BaseModel, Field, WithJsonSchema, model_validator

from gameplatform import game_names, get_game
from gameplatform.creation import creation_type
from gameplatform.forms import PLAYER_NAME_PATTERN, inline_schema
from gameplatform.registry import DEFAULT_GAME, hosted_phases, most_players
from gameserver.gateway.lobby_entries import ClockSummary, SeatSummary

MAX_ID_TOKEN = 4096
"""The longest identity token (JWT) taken."""


def seat_command_schema() -> dict[str, Any]:
    """What a client may send as a command: each hosted game's schema of its seat commands
    (`Game.seat_command_schema`: ``seat`` optional, the token's seat is filled in; each game
    spells out what its rules would otherwise refuse as naming nothing), the other games'
    variants titled with their game. So a command that fits this schema is refused, if at all,
    by a rule of the game (409; a command of another game than the game's is 409
    ``wrong_game``), never as malformed (422)."""
    variants = []
    for name in game_names():
        for variant in get_game(name).seat_command_schema()["anyOf"]:
            if name != DEFAULT_GAME:
                variant["title"] = f"{variant['title']} ({name.title()})"
            variants.append(variant)
    return {"anyOf": variants}


SEED_HELP = (
    "For tests, bots and tournaments only: deal from this seed instead of a secret random one. "
    "The game is marked as dealt from a chosen seed. (A game whose seed deals nothing hidden "
    "keeps it public: it only names the game.)"
)


def creation_schema() -> dict[str, Any]:
    """What ``POST /games`` takes: one variant per hosted game (`gameplatform.creation`), each
    listing its options and refusing every field it does not name."""
    variants = []
    for name in game_names():
        variant = inline_schema(creation_type(name))
        variant["description"] = f"A {get_game(name).title} game." + (
            " (`game` may be left out.)" if name == DEFAULT_GAME else ""
        )
        variant["properties"]["seed"]["description"] = SEED_HELP
        variant["properties"]["seating"]["description"] = (
            "open: anyone may join; invite: a join needs the code"
        )
        variants.append(variant)
    return {"anyOf": variants}


CreateGameRequest = Annotated[dict[str, Any], WithJsonSchema(creation_schema())]
"""What ``POST /games`` takes, read by `gameplatform.creation.read_creation` (so that what a
game does not take is refused naming the field and the game, and an unknown game lists the
hosted ones)."""


def one_of(values: tuple[str, ...], what: str) -> Any:
    """A string that must be one of ``values`` (read from the registry, so no game's values are
    written here), stated as an enum in the document."""

    def check(value: str) -> str:
        if value not in values:
            raise ValueError(f"no {what} {value!r}; the {what}s: {', '.join(values)}")
        return value

    return Annotated[str, AfterValidator(check), WithJsonSchema({"enum": list(values)})]


GameName = one_of(game_names(), "game")
"""The name of a hosted game (`gameplatform.game_names`)."""

PhaseFilter = one_of(("playing", *hosted_phases()), "phase")
"""A phase of any hosted game, or ``playing``: any phase of play."""

BoardFilter = one_of(
    tuple(dict.fromkeys(board for name in game_names() for board in get_game(name).boards)),
    "board",
)
"""A board of any hosted game: another is 422, as an unknown phase is."""

MAX_SEAT = most_players() - 1
"""The highest seat number of any hosted game (a path's bound; each game checks its own)."""

GAME_FIELD_HELP = f"The game: {', '.join(game_names())}"


class CreateGameResponse(BaseModel):
    game_id: str
    game: str = Field(default=DEFAULT_GAME, description=GAME_FIELD_HELP)
    players: int
    board: str
    version: int
    seed: str = Field(
        description="'chosen' (dealt from the caller's seed), 'secret', or 'public' (a game "
        "whose seed deals nothing hidden)"
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
        pattern=PLAYER_NAME_PATTERN,
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
        "'public' (a game whose seed deals nothing hidden) or "
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
    game: str = Field(default=DEFAULT_GAME, description=GAME_FIELD_HELP)
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
