"""The narrow ports the use cases work over: typing protocols of exactly what each one calls.

The gateway's Redis-backed parts satisfy them (``gateway.case_book`` hands them in: the folded
`GameStates`, the `Gateway`'s command sender and seat check, the `Lobby`, the seat tokens, the
seed staging, the idempotency records, the seat recovery, the identity provider); the unit
tests hand in fakes in memory. A port refuses with a `refusals.Refusal` (an unknown game, a
wrong token, an outage).
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Protocol

from gameplatform.interface import HostedGame
from gameserver.gateway.game_states import Played
from gameserver.gateway.lobby_entries import Seating
from gameserver.runtime.bus import CommandEnvelope, Reply


class GameReads(Protocol):
    """The read side: games folded from their streams."""

    async def played(self, game_id: str) -> Played:
        """The game's adapter and current state; ``not_found`` for an unknown game."""
        ...

    async def game_of(self, game_id: str) -> HostedGame:
        """The game's adapter alone (cheaper than a fold); ``not_found`` as `played`."""
        ...

    async def require(self, game_id: str) -> None:
        """Nothing when the game exists, ``not_found`` otherwise."""
        ...


class CommandBus(Protocol):
    """The rules service, behind the command bus."""

    async def send(self, envelope: CommandEnvelope) -> Reply:
        """The reply to ``envelope``; ``timeout`` or ``unavailable`` when none comes (the
        command may still be decided: the same command id gets its one outcome)."""
        ...


class SeatCheck(Protocol):
    """Who holds a seat: a seat token resolved to its seat."""

    async def seat_of_token(self, game_id: str, token: str | None) -> int:
        """The seat ``token`` holds in the game: ``unauthenticated`` without a token,
        ``forbidden`` for one that holds none (or has lapsed)."""
        ...


class Hosts(Protocol):
    async def is_host(self, game_id: str, token: str | None) -> bool:
        """Whether ``token`` is the game's host token."""
        ...


class Invitations(Protocol):
    async def check_invitation(self, game_id: str, code: str | None) -> None:
        """Nothing for an open game or the right code; ``forbidden`` otherwise."""
        ...


class LobbyIndex(Protocol):
    """The games created here, newest first, and how their seats are given."""

    async def page(self, cursor: str | None, count: int) -> tuple[list[str], str | None]:
        """Up to ``count`` game ids after ``cursor`` and the cursor after the last (None at
        the end)."""
        ...

    async def cursor_after(self, game_id: str) -> str | None: ...

    async def seating(self, game_id: str) -> str:
        """``open`` or ``invite``."""
        ...


class CreationRecords(Protocol):
    """The lobby's record of a created game (its host and invitation) and of the keyed
    request that created it."""

    async def hold_request(self, game_id: str, request: str) -> bool | None:
        """Record a keyed creation's fingerprint: True now, None when it is this one already (a
        retry), False when another request's is recorded."""
        ...

    async def forget_request(self, game_id: str, request: str) -> None:
        """Undo `hold_request` (its creation was refused), unless a game was registered."""
        ...

    async def register(
        self, game_id: str, *, seating: Seating, created_ms: int, idempotency_key: str | None
    ) -> tuple[str, str | None]:
        """Record a new game: ``(host token, invitation code or None)``, each shown once; a
        keyed retry gets the same ones."""
        ...


class SeedStaging(Protocol):
    async def choose(self, game_id: str, seed: str) -> bool:
        """Stage a chosen seed for the game's creation; False when one is staged already."""
        ...


class GameMarks(Protocol):
    """What the gateway records of a game it created: where its seed came from."""

    async def mark_created(
        self, game_id: str, *, chosen_seed: bool, public: bool = False
    ) -> None: ...

    async def seed_origin(self, game_id: str) -> str | None:
        """``chosen``, ``secret``, ``public`` or None (not created through a gateway)."""
        ...


class SeatRegistry(Protocol):
    """Seats' tokens as the gateway keeps them."""

    async def free(self, game_id: str, seat: int) -> None:
        """The seat was left or its player removed: its token, claim, recovery code and bound
        user go, and no cached answer holds it any longer."""
        ...

    def revoke(self, game_id: str, digest: str) -> None:
        """The token with this digest no longer holds its seat (reclaimed): forget it now."""
        ...


class KeyLeases(Protocol):
    def hold(self, game_id: str, scope: str) -> AbstractAsyncContextManager[None]:
        """Hold an idempotency key's lease while its request is answered; ``conflict``
        (``idempotency_key_in_flight``) when another request with the key holds it."""
        ...


class ClaimRecords(Protocol):
    """Claims of seats, each with the command id of its join and the request's fingerprint."""

    async def claim(
        self, game_id: str, seat: int, token: str, request: str = ""
    ) -> tuple[int, str]:
        """``(status, claim)``: 1 claimed now, 2 this token's already, 0 another token's; the
        claim ``<ms>|<command id>|<fingerprint>``."""
        ...

    async def release(self, game_id: str, seat: int, token: str) -> bool:
        """Undo this token's own claim (never another's)."""
        ...

    async def release_abandoned(self, game_id: str, seat: int, claim: str, game: str) -> bool:
        """Fence an old claim's join that never landed and release the claim; False when it
        is too young or its join landed."""
        ...


class RecoveryCodes(Protocol):
    """Seats that follow their player: recovery codes and bound users."""

    async def bind(self, game_id: str, seat: int, recovery: str, user: str | None) -> None: ...

    async def reclaim(
        self, game_id: str, seat: int, *, recovery: str | None = None, user: str | None = None
    ) -> tuple[str, str, str]:
        """``(new token, new recovery code, old token's digest)``; ``forbidden`` when the
        proof is not the seat's."""
        ...


class Identities(Protocol):
    """An identity provider: a signed token of a frontend's user."""

    async def user(self, token: str) -> str:
        """The verified user; ``unauthenticated`` for a token it does not accept."""
        ...
