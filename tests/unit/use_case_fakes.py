"""In-memory fakes of the gateway's use-case ports (`gameserver.gateway.use_cases.ports`), and a
fake game whose table a test sets: the use cases' unit tests run without Redis, a bus or a
rules core."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from gameplatform.interface import Table
from gameserver.gateway.game_states import Played
from gameserver.gateway.use_cases.refusals import Refusal
from gameserver.runtime.bus import CommandEnvelope, Reply


def table(players: int = 2, names: list[str | None] | None = None, **changes: Any) -> Table:
    """A lobby's table of ``players`` seats (``names``: who sits; all open by default)."""
    return Table(
        game_id="g1",
        version=1,
        board="plain",
        players=players,
        phase="lobby",
        to_move=None,
        current=None,
        seed="secret",
        names=names if names is not None else [None] * players,
        colours=[f"colour{n}" for n in range(players)],
        statuses=["playing"] * players,
        scores=[0] * players,
        ranking=[],
        winners=[],
        over=False,
        started=False,
        **changes,
    )


@dataclass(frozen=True)
class Command:
    """A command the fake game makes: its kind and seat (named like a command struct)."""

    kind: str
    seat: int | None = None
    name: str | None = None


class FakeGame:
    """A game that makes `Command`s and shows the table its state is."""

    name = "fake"
    seed_secret = True

    def __init__(self, *, offers_reclaim: bool = True) -> None:
        self.offers_reclaim = offers_reclaim

    def table(self, state: Table) -> Table:
        return state

    def join_command(self, seat: int, name: str) -> Command:
        return Command("JoinGame", seat, name)

    def start_command(self) -> Command:
        return Command("StartGame")

    def cancel_command(self) -> Command:
        return Command("CancelGame")

    def remove_command(self, seat: int) -> Command:
        return Command("RemoveSeat", seat)

    def leave_command(self, seat: int) -> Command:
        return Command("LeaveGame", seat)

    def resign_command(self, seat: int) -> Command:
        return Command("Resign", seat)

    def reclaim_command(self, seat: int) -> Command | None:
        return Command("Reclaim", seat) if self.offers_reclaim else None


def not_found(game_id: str) -> Refusal:
    return Refusal("not_found", "game_not_found", f"There is no game {game_id!r}.")


@dataclass
class FakeGames:
    """The read side: games by id, each a game and the table it is at."""

    games: dict[str, tuple[Any, Table]] = field(default_factory=dict)

    async def played(self, game_id: str) -> Played:
        if game_id not in self.games:
            raise not_found(game_id)
        game, table = self.games[game_id]
        return Played(game, table)  # type: ignore[arg-type]  # the fake's table stands for its state

    async def game_of(self, game_id: str) -> Any:
        return (await self.played(game_id)).game

    async def require(self, game_id: str) -> None:
        await self.played(game_id)


@dataclass
class FakeBus:
    """The rules service: ``decide`` answers each new command id (accepted by default); a
    command id sent again gets its first outcome, as the rules service answers a retry."""

    decide: Callable[[CommandEnvelope], Reply | Refusal] | None = None
    sent: list[CommandEnvelope] = field(default_factory=list)
    outcomes: dict[tuple[str, str], Reply] = field(default_factory=dict)

    async def send(self, envelope: CommandEnvelope) -> Reply:
        self.sent.append(envelope)
        known = self.outcomes.get((envelope.game_id, envelope.command_id))
        if known is not None:
            return known
        answer = accepted(envelope) if self.decide is None else self.decide(envelope)
        if isinstance(answer, Refusal):
            raise answer  # no answer came: nothing is recorded
        self.outcomes[(envelope.game_id, envelope.command_id)] = answer
        return answer

    def kinds(self) -> list[str]:
        return [getattr(e.command, "kind", type(e.command).__name__) for e in self.sent]


def accepted(envelope: CommandEnvelope, version: int = 2) -> Reply:
    return Reply("accepted", envelope.game_id, envelope.command_id, version, version, version)


def rejected(code: str, message: str = "No.") -> Callable[[CommandEnvelope], Reply]:
    return lambda envelope: Reply(
        "rejected", envelope.game_id, envelope.command_id, code=code, message=message
    )


@dataclass
class FakeLobby:
    """Hosts, invitations, the index and the records of creations."""

    hosts: dict[str, str] = field(default_factory=dict)
    invites: dict[str, str] = field(default_factory=dict)
    seatings: dict[str, str] = field(default_factory=dict)
    requests: dict[str, str] = field(default_factory=dict)
    index: list[str] = field(default_factory=list)
    """Game ids, newest first."""

    async def is_host(self, game_id: str, token: str | None) -> bool:
        return bool(token) and self.hosts.get(game_id) == token

    async def check_invitation(self, game_id: str, code: str | None) -> None:
        if game_id in self.invites and self.invites[game_id] != code:
            raise Refusal("forbidden", "invalid_invitation", "Not this game's code.")

    async def page(self, cursor: str | None, count: int) -> tuple[list[str], str | None]:
        start = 0 if cursor is None else self.index.index(cursor) + 1
        ids = self.index[start : start + count]
        return ids, ids[-1] if len(ids) == count and ids else None

    async def cursor_after(self, game_id: str) -> str | None:
        return game_id

    async def seating(self, game_id: str) -> str:
        return self.seatings.get(game_id, "open")

    async def hold_request(self, game_id: str, request: str) -> bool | None:
        if game_id not in self.requests:
            self.requests[game_id] = request
            return True
        return None if self.requests[game_id] == request else False

    async def forget_request(self, game_id: str, request: str) -> None:
        if game_id not in self.hosts:
            self.requests.pop(game_id, None)

    async def register(
        self, game_id: str, *, seating: str, created_ms: int, idempotency_key: str | None
    ) -> tuple[str, str | None]:
        host = f"host-{idempotency_key or game_id}"
        code = f"code-{idempotency_key or game_id}" if seating == "invite" else None
        self.hosts[game_id], self.seatings[game_id] = host, seating
        if code is not None:
            self.invites[game_id] = code
        if game_id not in self.index:  # a retry is indexed once
            self.index.insert(0, game_id)
        return host, code


@dataclass
class FakeSeeds:
    staged: dict[str, str] = field(default_factory=dict)

    async def choose(self, game_id: str, seed: str) -> bool:
        if game_id in self.staged:
            return False
        self.staged[game_id] = seed
        return True


@dataclass
class FakeTokens:
    """The seat check, the game marks and the seat registry: tokens by game and seat."""

    seats: dict[tuple[str, str], int] = field(default_factory=dict)
    marks: dict[str, str] = field(default_factory=dict)
    freed: list[tuple[str, int]] = field(default_factory=list)
    revoked: list[tuple[str, str]] = field(default_factory=list)

    async def seat_of_token(self, game_id: str, token: str | None) -> int:
        if not token:
            raise Refusal("unauthenticated", "missing_token", "Send your seat token.")
        if (game_id, token) not in self.seats:
            raise Refusal("forbidden", "invalid_token", "This token holds no seat.")
        return self.seats[(game_id, token)]

    async def mark_created(self, game_id: str, *, chosen_seed: bool, public: bool = False) -> None:
        self.marks[game_id] = "public" if public else "chosen" if chosen_seed else "secret"

    async def seed_origin(self, game_id: str) -> str | None:
        return self.marks.get(game_id)

    async def free(self, game_id: str, seat: int) -> None:
        self.freed.append((game_id, seat))
        self.seats = {k: v for k, v in self.seats.items() if not (k[0] == game_id and v == seat)}

    def revoke(self, game_id: str, digest: str) -> None:
        self.revoked.append((game_id, digest))


@dataclass
class FakeLeases:
    held: set[tuple[str, str]] = field(default_factory=set)

    @contextlib.asynccontextmanager
    async def hold(self, game_id: str, scope: str) -> AsyncIterator[None]:
        if (game_id, scope) in self.held:
            raise Refusal("conflict", "idempotency_key_in_flight", "Still being answered.")
        self.held.add((game_id, scope))
        try:
            yield
        finally:
            self.held.discard((game_id, scope))


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class FakeClaims:
    """Seat claims: ``(token digest, claim)`` per game and seat, as the Redis script keeps."""

    claims: dict[tuple[str, int], tuple[str, str]] = field(default_factory=dict)
    abandoned: bool = False
    """What `release_abandoned` finds (and then releases)."""
    counter: int = 0

    async def claim(
        self, game_id: str, seat: int, token: str, request: str = ""
    ) -> tuple[int, str]:
        held = self.claims.get((game_id, seat))
        if held is None:
            self.counter += 1
            claim = f"1000|seat{seat}:join:{self.counter}|{request}"
            self.claims[(game_id, seat)] = (digest(token), claim)
            return 1, claim
        return (2 if held[0] == digest(token) else 0), held[1]

    async def release(self, game_id: str, seat: int, token: str) -> bool:
        held = self.claims.get((game_id, seat))
        if held is None or held[0] != digest(token):
            return False
        del self.claims[(game_id, seat)]
        return True

    async def release_abandoned(self, game_id: str, seat: int, claim: str, game: str) -> bool:
        if self.abandoned and self.claims.get((game_id, seat), ("", ""))[1] == claim:
            del self.claims[(game_id, seat)]
            return True
        return False


@dataclass
class FakeRecovery:
    bound: dict[tuple[str, int], tuple[str, str | None]] = field(default_factory=dict)

    async def bind(self, game_id: str, seat: int, recovery: str, user: str | None) -> None:
        self.bound[(game_id, seat)] = (recovery, user)

    async def reclaim(
        self, game_id: str, seat: int, *, recovery: str | None = None, user: str | None = None
    ) -> tuple[str, str, str]:
        known = self.bound.get((game_id, seat))
        if known is None or (recovery is not None and known[0] != recovery):
            raise Refusal("forbidden", "not_your_seat", "This proves no claim to the seat.")
        if recovery is None and known[1] != user:
            raise Refusal("forbidden", "not_your_seat", "This proves no claim to the seat.")
        self.bound[(game_id, seat)] = ("fresh-recovery", known[1])
        return "fresh-token", "fresh-recovery", "old-digest"


@dataclass
class FakeIdentities:
    users: dict[str, str] = field(default_factory=dict)

    async def user(self, token: str) -> str:
        if token not in self.users:
            raise Refusal("unauthenticated", "invalid_identity", "Not a token of ours.")
        return self.users[token]


def seated(state: Table, seat: int, name: str = "Ann") -> Table:
    """``state`` with ``seat`` taken by ``name``."""
    names = list(state.names)
    names[seat] = name
    return replace_table(state, names=names)


def replace_table(state: Table, **changes: Any) -> Table:
    return msgspec.structs.replace(state, **changes)
