"""Taking a seat (``POST /games/{id}/seats/{n}``) and reclaiming it on another device (``POST
.../reclaim``).

A join claims the seat for a token (with an idempotency key the token, the recovery code and
the join's command id come from the key, so a retry gets the same seat back), then sends the
game's join to the rules service. Only the request that made a claim releases it, and only
when its own join was refused (`gameserver.gateway.idempotency`); a claim whose join never
landed is released once it is old enough, its join fenced first.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from gameserver.gateway.game_states import Played
from gameserver.gateway.idempotency import fingerprint, key_reused, parse_claim, token_for
from gameserver.gateway.seat_recovery import recovery_for
from gameserver.gateway.seat_tokens import new_token, token_digest
from gameserver.gateway.use_cases.outcomes import outcome_of
from gameserver.gateway.use_cases.ports import (
    ClaimRecords,
    CommandBus,
    GameReads,
    Identities,
    Invitations,
    KeyLeases,
    RecoveryCodes,
    SeatRegistry,
)
from gameserver.gateway.use_cases.refusals import Refusal
from gameserver.runtime.bus import CommandEnvelope, join_command_id
from gameserver.runtime.logging import get_logger

log = get_logger("renature.gateway")


@dataclass(frozen=True, slots=True)
class SeatAsk:
    """What a join asks for."""

    name: str
    invite: str | None
    id_token: str | None
    request: bytes
    """The request as read (defaults filled in): under an idempotency key its fingerprint must
    be the first request's."""


@dataclass(frozen=True, slots=True)
class Seated:
    """A seat taken: the token and the recovery code, each shown once."""

    game_id: str
    seat: int
    token: str
    recovery: str
    bound: bool
    """Whether the seat is bound to the user of the join's identity token."""
    version: int
    seed: str


@dataclass(frozen=True, slots=True)
class Reclaimed:
    """A seat handed to a new token on another device, with a new recovery code."""

    game_id: str
    seat: int
    token: str
    recovery: str


class Users:
    """The users of identity tokens, where the server has an identity provider."""

    def __init__(self, identity: Identities | None) -> None:
        self._identity = identity

    async def user_of(self, id_token: str) -> str:
        """The verified user: ``invalid`` (``identity_not_configured``) on a server without a
        provider, the provider's refusal for a token it does not accept."""
        if self._identity is None:
            raise Refusal(
                "invalid",
                "identity_not_configured",
                "This server has no identity provider: leave id_token out (keep the recovery "
                "code instead).",
            )
        return await self._identity.user(id_token)


@dataclass(frozen=True, slots=True)
class _Join:
    """One join in the making: the game, the seat, the name and the claimant's token."""

    played: Played
    game_id: str
    seat: int
    name: str
    token: str
    request: str


class TakeSeat:
    """Take a seat of a game in its lobby."""

    def __init__(
        self,
        games: GameReads,
        bus: CommandBus,
        invitations: Invitations,
        users: Users,
        leases: KeyLeases,
        claims: ClaimRecords,
        recovery: RecoveryCodes,
    ) -> None:
        self._games = games
        self._bus = bus
        self._invitations = invitations
        self._users = users
        self._leases = leases
        self._claims = claims
        self._recovery = recovery

    async def __call__(self, game_id: str, seat: int, ask: SeatAsk, key: str | None) -> Seated:
        """Take ``seat``: ``not_found`` for a seat the game has not, ``forbidden`` without the
        invitation a game's seats need, ``conflict`` (``seat_taken``) when another claimant
        holds it. With ``key`` a retry gets the same seat, token and recovery code back."""
        played = await self._games.played(game_id)
        players = played.game.table(played.state).players
        if seat >= players:
            raise Refusal(
                "not_found",
                "no_such_seat",
                f"There is no seat {seat} in this {players}-player game.",
            )
        await self._invitations.check_invitation(game_id, ask.invite)
        user = None if ask.id_token is None else await self._users.user_of(ask.id_token)
        token, version = await self._keyed_join(played, game_id, seat, ask, key)
        recovery = new_token() if key is None else recovery_for(key, game_id, seat)
        await self._recovery.bind(game_id, seat, recovery, user)
        return Seated(
            game_id=game_id,
            seat=seat,
            token=token,
            recovery=recovery,
            bound=user is not None,
            version=version,
            seed=played.game.table(played.state).seed,
        )

    async def _keyed_join(
        self, played: Played, game_id: str, seat: int, ask: SeatAsk, key: str | None
    ) -> tuple[str, int]:
        """Claim the seat and send its join: ``(token, version)``. With ``key`` the token
        comes from the key, another body under the key is ``invalid``, a retry while the first
        is answered a ``conflict``."""
        if key is None:
            return await self._join(_Join(played, game_id, seat, ask.name, new_token(), ""))
        token = token_for(key, game_id, seat)
        async with self._leases.hold(game_id, f"seat{seat}:{token_digest(token)[:24]}"):
            request = fingerprint(key, ask.request)
            return await self._join(_Join(played, game_id, seat, ask.name, token, request))

    async def _join(self, join: _Join) -> tuple[str, int]:
        game_id, seat, token, request = join.game_id, join.seat, join.token, join.request
        status, claim = await self._claims.claim(game_id, seat, token, request)
        game = join.played.game
        free = _is_free(join.played, seat)
        abandoned = self._claims.release_abandoned
        if status == 0 and free and await abandoned(game_id, seat, claim, game.name):
            status, claim = await self._claims.claim(game_id, seat, token, request)
        _, command_id, first_request = parse_claim(claim)
        if status == 2 and first_request and first_request != request:
            raise key_reused()  # before anything is sent or released: nothing changes
        if status == 1 and not free:  # a claim taken now, of a seat taken when last read:
            # that read came before the claim, and a write lost meanwhile (the last second
            # under `everysec`, cut by a power cut) may have freed the seat: read it again
            free = _is_free(await self._games.played(game_id), seat)
        if status == 0 or (status == 1 and not free):
            if status == 1:
                await self._claims.release(game_id, seat, token)
            raise Refusal("conflict", "seat_taken", f"Seat {seat} is taken already.")
        command_id = command_id or join_command_id(seat, uuid.uuid4().hex)
        command = game.join_command(seat, join.name)
        envelope = CommandEnvelope(game_id, command_id, command, seat, game.name)
        try:
            outcome = outcome_of(await self._bus.send(envelope), command_id)
        except Refusal as refusal:
            # Only the request that made the claim releases it, and only when its own join was
            # refused: after a timeout or an outage the join may still land (a retry with the
            # key finds the claim; without one it is released once abandoned), and a retry
            # (status 2) never undoes the seat its first request took.
            if status == 1 and not refusal.retryable:
                await self._claims.release(game_id, seat, token)
            raise
        return token, outcome.version


class ReclaimSeat:
    """Take a seat back on another device, with its recovery code or its bound user's token."""

    def __init__(
        self, games: GameReads, users: Users, recovery: RecoveryCodes, registry: SeatRegistry
    ) -> None:
        self._games = games
        self._users = users
        self._recovery = recovery
        self._registry = registry

    async def __call__(
        self, game_id: str, seat: int, recovery: str | None, id_token: str | None
    ) -> Reclaimed:
        """A new token and a new recovery code for the seat; the old token stops working and
        the used code with it (``forbidden`` when the proof is not the seat's)."""
        await self._games.require(game_id)
        user = None if id_token is None else await self._users.user_of(id_token)
        token, fresh, old = await self._recovery.reclaim(
            game_id, seat, recovery=recovery, user=user
        )
        self._registry.revoke(game_id, old)
        log.info("seat_reclaimed", game_id=game_id, seat=seat, by="user" if user else "recovery")
        return Reclaimed(game_id=game_id, seat=seat, token=token, recovery=fresh)


def _is_free(played: Played, seat: int) -> bool:
    """Whether ``seat`` shows nobody in the game's state."""
    return played.game.table(played.state).names[seat] is None
