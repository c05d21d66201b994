"""Round trips on connections a caller keeps: a hot path's commands without redis-py's
machinery around every command.

Every command a `Redis` client sends takes a connection from its pool and gives it back (a
condition variable and a timeout each way, the connection checked), runs under the retry
wrapper, is recorded for metrics and dispatched to event listeners: about 35 us of CPU a command
on the 2-core development machine, against 40 us for the round trip itself (redis-py's own
connection, hiredis packing and parsing, the socket timeout kept). A lone game's move makes
about six such round trips across the services (the gateway's ``XADD`` of the command, the
rules service's append, the projectors' writes), one a batch under load: the machinery was a
tenth of the CPU a move at 16 games, where batches are small.

`Lanes` sends those commands on connections of the client's pool that it takes once and keeps
(idle ones reused, a new one taken when every kept one is busy, up to `KEPT`; past that a
command goes through the client), with what the client does
that matters kept: the same connection class and options (the packed, task-free writes, the
socket timeout, the health check's ``PING`` of a connection idle past its interval), the same
retry of a command whose connection failed (the client's `Retry`, the connection closed before
each new try), the same reply callbacks, errors as values (`each_reply`). A connection whose
round trip was cut (a timeout, a cancellation) is closed by redis-py itself and opens again on
its next use. The kept connections stay the pool's, in use: closing the client closes them.

On a Redis Cluster the commands go through the cluster client (`each_reply`): its routing and
redirections are the point there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from redis.asyncio import Connection
from redis.exceptions import ResponseError

from eventstore.redis_client import each_reply, is_cluster

KEPT = 4
"""Connections kept at most by one `Lanes`: a hot path's round trips rarely overlap more (one
sender, one batch at a time); beyond this many at once, a command goes through the client, which
takes a connection of its pool and gives it back. Kept connections stay out of the pool: an
unbounded number would starve the client's other commands of a bounded pool."""


class Lanes:
    """A client's round trips on connections kept for them (see the module text)."""

    def __init__(self, client: Any, kept: int = KEPT) -> None:
        self._client = client
        self._cluster = is_cluster(client)
        self._idle: list[Connection] = []
        self._room = kept
        """Connections that may still be taken from the pool and kept."""
        self._callbacks: dict[str, Callable[..., Any] | None] = {}

    async def each_reply(self, commands: Sequence[Sequence[Any]]) -> list[Any]:
        """Each command's reply, or its error as a value (a `ResponseError`), in one round
        trip, as `each_reply`; a lost connection is raised once the client's retries are
        spent."""
        if self._idle:
            connection = self._idle.pop()
        elif self._room and not self._cluster:
            connection = await self._take()
        else:  # every kept connection busy (or a cluster): the client's own way
            return await each_reply(self._client, commands)
        try:
            return await connection.retry.call_with_retry(
                lambda: self._round_trip(connection, commands),
                lambda _error: connection.disconnect(),
            )
        finally:
            self._idle.append(connection)

    @property
    def idle(self) -> tuple[Connection, ...]:
        """The kept connections no command is using now."""
        return tuple(self._idle)

    async def one(self, *command: Any) -> Any:
        """One command's reply; its error raised, as by the client's own method (on a
        cluster, the client's: it routes the command by its keys, where a pipeline of one
        would hold a blocking read)."""
        if self._cluster:
            return await self._client.execute_command(*command)
        (reply,) = await self.each_reply([command])
        if isinstance(reply, ResponseError):
            raise reply
        return reply

    async def _take(self) -> Connection:
        self._room -= 1
        try:
            connection: Connection = await self._client.connection_pool.get_connection()
        except BaseException:
            self._room += 1
            raise
        return connection

    async def _round_trip(
        self, connection: Connection, commands: Sequence[Sequence[Any]]
    ) -> list[Any]:
        await connection.send_packed_command(connection.pack_commands(commands))
        replies: list[Any] = []
        for command in commands:
            try:
                reply = await connection.read_response()
            except ResponseError as error:  # read whole: the next reply follows it
                replies.append(error)
                continue
            callback = self._callback(command[0])
            replies.append(reply if callback is None else callback(reply))
        return replies

    def _callback(self, name: str) -> Callable[..., Any] | None:
        """The client's reply callback for a command (looked up once per name: the client's
        table folds the name's case at every lookup)."""
        try:
            return self._callbacks[name]
        except KeyError:
            callback: Callable[..., Any] | None = self._client.response_callbacks.get(name)
            self._callbacks[name] = callback
            return callback
