"""Client commands in, rules-service replies out: the two translations every play route makes."""

from __future__ import annotations

import contextlib
from functools import cache
from typing import TYPE_CHECKING, Any

import msgspec

from gameplatform import game_names, get_game
from gameplatform.interface import HostedGame, JsonValue
from gameserver.gateway.http_errors import ApiError, api_error, rule_error_status
from gameserver.gateway.schemas import Accepted
from gameserver.gateway.use_cases.refusals import Refusal
from gameserver.gateway.use_cases.seat_actions import send_seat_action
from gameserver.runtime.bus import CommandEnvelope, Reply

if TYPE_CHECKING:
    from gameserver.gateway.dependencies import Gateway


def _kinds(union: Any) -> set[str]:
    """The ``type`` tags of a union of tagged msgspec structs."""
    info = msgspec.inspect.type_info(union)
    members = info.types if isinstance(info, msgspec.inspect.UnionType) else (info,)
    return {str(member.tag) for member in members if isinstance(member, msgspec.inspect.StructType)}


@cache
def set_up_kinds() -> frozenset[str]:
    """The commands of any hosted game that no player sends (creation, joins, the start, the
    service's own finish, the seat actions of their own endpoints): issued by the gateway's
    endpoints, the clock or the rules service, never through ``POST .../commands``."""
    kinds: set[str] = set()
    for name in game_names():
        game = get_game(name)
        kinds |= _kinds(game.command_type) - _kinds(game.seat_command_type)
    return frozenset(kinds)


def raise_refusal(reply: Reply) -> None:
    """The rule error of a refused reply as the fitting status; nothing for an accepted one."""
    if reply.status != "accepted":
        code = reply.code or "rule_broken"
        raise ApiError(rule_error_status(code), code, reply.message or "The command was refused.")


class AcceptedBody(msgspec.Struct, frozen=True):
    """`Accepted` as the move paths encode it themselves (the same fields in the same order),
    without building a pydantic model per move."""

    game_id: str
    command_id: str
    version: int
    first_version: int
    last_version: int


async def relay(
    gateway: Gateway, game_id: str, seat: int, command_id: str, payload: dict[str, JsonValue]
) -> tuple[Accepted, HostedGame]:
    """Hand a seat's command to the rules service: the reply as a 200 body (and the game),
    or the refusal as an `ApiError`. Command ids are namespaced per seat, so one seat can
    never pre-empt (or read the outcome of) another seat's command by guessing its id.
    A seat a bot plays (its time ran out) is taken back first (`take_back_first`)."""
    body, game = await relay_move(gateway, game_id, seat, command_id, payload)
    return Accepted(**msgspec.structs.asdict(body)), game


async def relay_move(
    gateway: Gateway, game_id: str, seat: int, command_id: str, payload: dict[str, JsonValue]
) -> tuple[AcceptedBody, HostedGame]:
    """`relay`, its answer an `AcceptedBody` (the raw move paths: HTTP and the WebSocket)."""
    game = await gateway.games.game_of(game_id)
    command = seat_command(payload, seat, game)
    await take_back_first(gateway, game_id, seat)
    envelope = CommandEnvelope(game_id, bus_command_id(seat, command_id), command, seat, game.name)
    reply = await gateway.send(envelope)
    if reply.status != "accepted":
        await take_back_after(gateway, game_id, seat)
    raise_refusal(reply)
    accepted = AcceptedBody(
        reply.game_id, command_id, reply.version, reply.first_version, reply.last_version
    )
    return accepted, game


def bus_command_id(seat: int, command_id: str) -> str:
    """A seat's command id as the rules service and the events' causes carry it."""
    return f"seat{seat}:{command_id}"


BOT_PLAYED = "bot"
"""The status (`Table.statuses`) of a seat a bot plays since its time ran out."""


async def take_back_first(gateway: Gateway, game_id: str, seat: int) -> None:
    """A seated player's command is their return: where the game's state as cached here says
    a bot plays ``seat``, the game's ``reclaim_command`` goes first. Only the cache is looked
    at (a move costs no read); a take-back the rules refuse (the seat was taken back already)
    leaves the command to be decided as it is; any other failure is the move's `ApiError`."""
    statuses = gateway.games.cached_statuses(game_id)
    if statuses is None or statuses[seat] != BOT_PLAYED:
        return
    try:
        await send_seat_action(
            gateway.games, gateway, game_id, lambda game: game.reclaim_command(seat), seat
        )
    except Refusal as refusal:
        if refusal.kind != "conflict":
            raise api_error(refusal) from None


async def take_back_after(gateway: Gateway, game_id: str, seat: int) -> None:
    """A seat's command was refused: the game's state is read again and, where a bot plays
    the seat, it is taken back all the same (`take_back_first`). The cache `take_back_first`
    looks at holds what the gateway's reads brought, and a client that only sends moves may
    have it stale: a seat played by a bot since plays its own turns at once, so that player's
    command is refused (``not_your_turn``), and the seat must still come back to its player.
    The refusal stands as the command's answer, whatever the take-back met."""
    with contextlib.suppress(Exception):
        await gateway.games.state(game_id)
        await take_back_first(gateway, game_id, seat)


def seat_command(payload: dict[str, JsonValue], seat: int, game: HostedGame) -> msgspec.Struct:
    """Decode a client's command for ``seat`` of a ``game`` game: refuse set-up commands (403),
    fill in a missing seat, refuse another seat's command (403), report a malformed one (422),
    and a well-formed command of another game as a rule would (409 ``wrong_game``)."""
    kind = payload.get("type")
    if isinstance(kind, str) and kind in set_up_kinds():
        raise ApiError(
            403,
            "not_a_seat_command",
            f"{kind} is not a player's command; "
            "games are created, joined and started through their own endpoints.",
        )
    if "seat" not in payload:
        payload = {**payload, "seat": seat}
    payload = json_integers(payload)
    try:
        command = game.seat_command(payload)
    except msgspec.ValidationError as error:
        if other := _game_of_command(payload, game):
            raise ApiError(
                409, "wrong_game", f"This is a {other} command; this game is a {game.name} game."
            ) from error
        raise ApiError(422, "invalid_command", f"Malformed command: {error}") from error
    if getattr(command, "seat", None) != seat:  # every seat command names its seat
        raise ApiError(403, "wrong_seat", "You can only act for your own seat.")
    return command


def _game_of_command(payload: dict[str, JsonValue], game: HostedGame) -> str | None:
    """The other hosted game whose seat command ``payload`` is, if any."""
    for name in game_names():
        if name != game.name:
            try:
                get_game(name).seat_command(payload)
            except msgspec.ValidationError:
                continue
            return name
    return None


def json_integers(value: JsonValue) -> JsonValue:
    """``value`` with every whole float as an int: JSON has one kind of number, and 142.0 is
    the integer 142 to JSON Schema too (msgspec would refuse it where an int is due)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: json_integers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [json_integers(item) for item in value]
    return value
