"""Client commands in, rules-service replies out: the two translations every play route makes."""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec

from gameplatform import game_names, get_game
from gameserver.gateway.http_errors import ApiError, rule_error_status
from gameserver.gateway.schemas import Accepted
from gameserver.runtime.bus import Reply
from gameserver.runtime.state_cache import AnyGame


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


def accepted_or_raise(reply: Reply, client_command_id: str) -> Accepted:
    """The reply as a 200 body, or the rule error as the fitting status."""
    if reply.status == "accepted":
        return Accepted(
            game_id=reply.game_id,
            command_id=client_command_id,
            version=reply.version,
            first_version=reply.first_version,
            last_version=reply.last_version,
        )
    code = reply.code or "rule_broken"
    raise ApiError(rule_error_status(code), code, reply.message or "The command was refused.")


def seat_command(payload: dict[str, Any], seat: int, game: AnyGame) -> Any:
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
    if command.seat != seat:
        raise ApiError(403, "wrong_seat", "You can only act for your own seat.")
    return command


def _game_of_command(payload: dict[str, Any], game: AnyGame) -> str | None:
    """The other hosted game whose seat command ``payload`` is, if any."""
    for name in game_names():
        if name != game.name:
            try:
                get_game(name).seat_command(payload)
            except msgspec.ValidationError:
                continue
            return name
    return None


def json_integers(value: Any) -> Any:
    """``value`` with every whole float as an int: JSON has one kind of number, and 142.0 is
    the integer 142 to JSON Schema too (msgspec would refuse it where an int is due)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: json_integers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [json_integers(item) for item in value]
    return value
