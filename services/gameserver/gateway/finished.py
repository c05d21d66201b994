"""Audits and explanations of finished games: computed once, then served from a cache.

A finished game's events never change, so its audit report and explanation are worked out once
(off the event loop, in a worker thread) and kept, encoded, under the game id, its last version
and its last event's hash (a crash under ``everysec`` may take an end back, and the game end
again at the same version with other events): in this process (a small LRU) and in Redis
(``<prefix>:{pNN}:reads:<game_id>``, one hash per game with a TTL), so every gateway instance
serves them from there. Concurrent requests for one that is not cached yet wait for the same
computation instead of each starting one.

A corrupted stream still gets its verdict: events that cannot be read, or an audit that cannot
finish on them, become findings of a report that says ``ok: false`` (200), never a 500.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import cast

import msgspec
from redis.asyncio import Redis

from eventstore import KeyLayout, RedisEventStore, StoreError
from gameplatform.audit import AuditReport, Finding, failed
from gameplatform.chain import Event
from gameplatform.interface import HostedGame
from gameserver.gateway.game_states import GameStates
from gameserver.gateway.http_errors import ApiError, bounded
from gameserver.runtime.logging import get_logger

log = get_logger("renature.gateway")

CACHE_TTL_S = 24 * 3600
LOCAL_ENTRIES = 512

NOT_FINISHED = ApiError(
    409,
    "game_not_finished",
    "The game is not finished: its audit and explanation are given once it has ended.",
)


class FinishedReads:
    """The audit and explanations of finished games, cached (see the module's docstring)."""

    def __init__(
        self,
        redis: Redis,
        store: RedisEventStore,
        games: GameStates,
        *,
        ttl_s: int = CACHE_TTL_S,
        local_entries: int = LOCAL_ENTRIES,
    ) -> None:
        self._redis = redis
        self._store = store
        self._games = games
        self._ttl_s = ttl_s
        self._local_entries = local_entries
        self._local: OrderedDict[tuple[str, str], bytes] = OrderedDict()
        self._running: dict[tuple[str, str], asyncio.Future[bytes]] = {}
        self.computed = 0
        """How many reports were worked out here (not served from a cache)."""

    @property
    def layout(self) -> KeyLayout:
        return self._store.layout

    def key(self, game_id: str) -> str:
        return self.layout.game_scoped_key("reads", game_id)

    async def audit(self, game_id: str) -> bytes:
        """The encoded `AuditReport` of a finished game (404 unknown, 409 not finished)."""
        return await self._cached(game_id, "audit", self._audit)

    async def explanation(self, game_id: str, colour: str | None) -> bytes:
        """The encoded `Explanation` of a finished game, of one colour's seat or of all."""
        what = "explain" if colour is None else f"explain:{colour}"

        async def compute(game: HostedGame, events: list[Event], problems: list[Finding]) -> bytes:
            if problems:
                raise _corrupt()
            return await asyncio.to_thread(_explanation, game, events, colour)

        return await self._cached(game_id, what, compute)

    async def _cached(
        self,
        game_id: str,
        what: str,
        compute: Callable[[HostedGame, list[Event], list[Finding]], Awaitable[bytes]],
    ) -> bytes:
        version, head = await self._finished_head(game_id)
        field = f"{what}:{version}:{head[:16]}"  # a history, not only a length
        local = (game_id, field)
        if (hit := self._local.get(local)) is not None:
            self._local.move_to_end(local)
            return hit
        if (running := self._running.get(local)) is not None:
            return await asyncio.shield(running)
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._running[local] = future
        try:
            body = await self._fetch_or_compute(game_id, field, compute)
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # retrieved: no "never retrieved" warning when none waited
            raise
        else:
            future.set_result(body)
            self._remember(local, body)
            return body
        finally:
            del self._running[local]

    async def _finished_head(self, game_id: str) -> tuple[int, str]:
        """The last version of a finished game and its last event's hash: 404 for an unknown
        game, 409 before its end (until the seed is revealed the stream holds every hand and
        token)."""
        try:
            (_, state), head = await self._games.head(game_id)
        except ApiError:
            raise
        except Exception as error:  # a corrupted stream: its audit will say what is wrong
            log.warning("gateway_corrupt_stream", game_id=game_id, error=type(error).__name__)
            return await self._store.version(game_id), "corrupt"
        if not state.is_over:
            raise NOT_FINISHED
        version: int = state.version
        return version, head

    async def _fetch_or_compute(
        self,
        game_id: str,
        field: str,
        compute: Callable[[HostedGame, list[Event], list[Finding]], Awaitable[bytes]],
    ) -> bytes:
        key = self.key(game_id)
        stored = await self._redis.hget(key, field)
        if isinstance(stored, bytes):
            return stored
        game = await self._games.game_of(game_id)
        events, problems = await self._events(game, game_id)
        if not any(game.ends(event) for event in events):
            raise NOT_FINISHED
        body = await compute(game, events, problems)
        self.computed += 1
        pipe = self._redis.pipeline(transaction=False)
        pipe.hset(key, field, body)
        pipe.expire(key, self._ttl_s)
        await pipe.execute()
        return body

    async def _events(self, game: HostedGame, game_id: str) -> tuple[list[Event], list[Finding]]:
        """Every event that can be read, and a finding for each that cannot."""
        try:
            return await self._games.events(game_id, 0), []
        except (StoreError, msgspec.DecodeError, msgspec.ValidationError) as error:
            log.warning("gateway_corrupt_stream", game_id=game_id, error=type(error).__name__)
        events: list[Event] = []
        problems: list[Finding] = []
        # A bytes client: ids and fields are bytes (redis-py types them loosely).
        entries = cast(
            "list[tuple[bytes, dict[bytes, bytes]]]",
            await self._redis.xrange(self.layout.game_key(game_id)),
        )
        for position, (entry_id, fields) in enumerate(entries, start=1):
            version = _version(entry_id, position)
            data = fields.get(b"event")
            if data is None:
                problems.append(Finding(version, "stream", f"event {version} has no event field"))
                continue
            try:
                events.append(game.decode_event(data))
            except (msgspec.DecodeError, msgspec.ValidationError) as error:
                problems.append(
                    Finding(
                        version,
                        "stream",
                        f"event {version} cannot be read: {bounded(str(error))}",
                    )
                )
        return events, problems

    async def _audit(self, game: HostedGame, events: list[Event], problems: list[Finding]) -> bytes:
        return await asyncio.to_thread(_audit_report, game, events, problems)

    def _remember(self, local: tuple[str, str], body: bytes) -> None:
        self._local[local] = body
        self._local.move_to_end(local)
        while len(self._local) > self._local_entries:
            self._local.popitem(last=False)


def _audit_report(game: HostedGame, events: list[Event], problems: list[Finding]) -> bytes:
    """The audit of what could be read, with the unreadable events among its findings; an
    audit that cannot finish on a corrupted stream is a finding too. (Every game's report is
    the platform's `AuditReport`.)"""
    report: AuditReport
    try:
        report = game.audit(events)
    except Exception as error:  # a forged event the core cannot even fold
        stop = Finding(0, "stream", f"the audit could not finish: {type(error).__name__}")
        report = msgspec.structs.replace(
            failed(stop, events[0].game_id if events else ""), events=len(events)
        )
    if problems:
        findings = sorted([*problems, *report.findings], key=lambda f: f.version)
        report = msgspec.structs.replace(
            report,
            ok=False,
            events=report.events + len(problems),
            first_bad=findings[0],
            findings=findings,
        )
    return msgspec.json.encode(report)


def _explanation(game: HostedGame, events: list[Event], colour: str | None) -> bytes:
    try:
        seat = None if colour is None else _seat_playing(game, events, colour)
        return msgspec.json.encode(game.explain(events, seat))
    except ApiError:
        raise
    except Exception as error:
        raise _corrupt() from error


def _seat_playing(game: HostedGame, events: list[Event], colour: str) -> int:
    """The seat that plays ``colour`` (at the end); 404 ``no_such_seat`` when none does (as for
    a seat number the game does not have: the request is well formed, the seat does not
    exist)."""
    state = game.replay(events)
    colours = [] if state is None else game.table(state).colours
    if colour not in colours:
        raise ApiError(
            404,
            "no_such_seat",
            f"No seat plays {bounded(colour, 20)!r} in this game; its colours are "
            f"{', '.join(colours)}.",
        )
    return colours.index(colour)


def _corrupt() -> ApiError:
    return ApiError(
        409,
        "game_corrupt",
        "The game's stored events do not hold together, so its points cannot be explained; "
        "its audit says where.",
    )


def _version(entry_id: bytes | str, position: int) -> int:
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    try:
        return int(text.partition("-")[2])
    except ValueError:
        return position
