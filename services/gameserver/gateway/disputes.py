"""``POST /disputes`` away from the event loop: an uploaded events file audited, replayed and
drawn in a worker process, never on the loop that serves every other request.

Auditing a 4 MiB file re-decides every move (0.1-0.3 s of CPU): on the gateway's event loop,
two clients within the limits held every other request up for as long. `DisputeDesk` runs
`inspect_file` in a process pool of its own (``workers`` processes, started on first use) and
lets at most ``waiting`` more uploads wait for one; past that the answer is 503
``inspections_busy`` with ``Retry-After``, at once, before anything is read twice. The route
also has its own rate (``RENATURE_LIMIT_DISPUTE``, `gateway.ratelimit`).

The answer is no larger than it needs: never the events back (the client holds the file it
sent; the viewer reads its events from it), the audit, the explanation and the seal's verdict
only for the whole file, and with ``?at=N`` only the picture after event N.

The seal's verdict (`signing.SealVerdict`): the file's seal line checked against the keys this
server publishes (``/.well-known/renature-keys.json``, handed to the worker by the route) and
its event lines against the digests the seal signed: signed by this server (which key, up to
which event), not signed (no seal, or none of this server's keys verifies it), or differs from
what was signed at event N.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import threading
from concurrent.futures import Executor, ProcessPoolExecutor
from pathlib import Path

import msgspec
from starlette.types import ASGIApp, Receive, Scope, Send

from gameplatform import game_names, get_game
from gameplatform.audit import AuditReport, Finding, failed
from gameplatform.chain import Event
from gameplatform.explanation import Explanation
from gameplatform.interface import HostedGame, HostedState, Table
from gameplatform.words import words
from gameserver.gateway.http_errors import ApiError
from gameserver.gateway.request_limits import error_response_messages
from gameserver.runtime import signing
from gameserver.runtime.signing import SEAL_LINE, SealVerdict
from gameserver.runtime.state_cache import game_reading

STATIC = Path(__file__).resolve().parent / "static"

WORKERS = 1
"""Processes that inspect uploads (each holds a copy of the rules: about 60 MB)."""
WAITING = 2
"""Uploads that may wait for a worker; more are answered 503 at once."""
NICENESS = 10
"""How much lower the workers' CPU priority is than the gateway's: on a small machine an
inspection takes what the event loop, the rules service and Redis leave, never their share."""
BUSY = "Other files are being inspected; retry shortly."


class Inspection(msgspec.Struct, frozen=True):
    """What the dispute viewer shows of an uploaded events file. A file that cannot be read
    (a line that is no event) or replayed is no error of the request: its audit fails and says
    where, and there is no picture. With ``?at=N`` only ``version`` and ``picture`` are
    given (the audit and the explanation are the whole file's: asked once)."""

    game_id: str
    event_count: int
    """The events read from the file (the client has the file: they are not sent back)."""
    version: int
    picture: str | None
    audit: AuditReport | None
    explanation: Explanation | None
    game: str = ""
    """The game whose events the file holds (its first event's provenance names it)."""
    log: list[str] = []
    """Each event in words (``gameplatform.words``), in the file's order (the whole file only)."""
    table: Table | None = None
    """The table after event ``at`` (seats, scores), None where the file cannot be folded."""
    client: str | None = None
    """The web client's own module for the game, as the catalog says."""
    seal: SealVerdict | None = None
    """Whether this server signed the file's events (the whole file only)."""


def inspect_file(raw: bytes, at: int | None, keys: bytes = b'{"keys": []}') -> bytes:
    """The encoded `Inspection` of the file ``raw`` (run in a worker process); ``keys``: the
    server's published `signing.KeySet`, against which the file's seal is checked."""
    # A signed export ends with its seal (docs/security.md): no event, checked by itself.
    lines = [line for line in raw.splitlines() if line.strip() and not line.startswith(SEAL_LINE)]
    # An export holds the events alone, not the provenance that names its game.
    game = (game_reading(lines[0]) if lines else None) or get_game(game_names()[0])
    events, unreadable = _events_of(game, lines)
    state = replayed(game, events if at is None else events[:at])
    picture = game.picture_svg(state, title(game, state)) if state is not None else None
    report: AuditReport | None = None
    explanation: Explanation | None = None
    log: list[str] = []
    if at is None:
        report = unreadable or game.audit(events)
        if events and game.ends(events[-1]) and report.ok:
            explanation = game.explain(events)
        seats = _seats(game, events)
        log = [words(game, event, seats) for event in events]
    inspection = Inspection(
        game_id=events[0].game_id if events else "",
        event_count=len(events),
        version=state.version if state is not None else 0,
        picture=picture,
        audit=report,
        explanation=explanation,
        game=game.name,
        log=log,
        table=game.table(state) if state is not None else None,
        client=plugin_of(game.name),
        seal=sealed(raw, lines, keys) if at is None else None,
    )
    return msgspec.json.encode(inspection)


_seal_line = msgspec.json.Decoder(signing.SealLine)


def sealed(raw: bytes, lines: list[bytes], keys: bytes) -> SealVerdict:
    """The verdict on the file's seal (its last seal line) and its event ``lines``."""
    found = [line for line in raw.splitlines() if line.startswith(SEAL_LINE)]
    if not found:
        return signing.verdict(None, {}, lines)
    try:
        seal = _seal_line.decode(found[-1]).seal
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return SealVerdict("not_signed", "the file's seal line is no seal")
    return signing.verdict(seal, signing.read_public_keys(keys), lines)


def plugin_of(name: str) -> str | None:
    """The web client's own module for a game (``static/games/<name>.js``), if it has one:
    every other game is played on the generic table."""
    return f"/static/games/{name}.js" if (STATIC / "games" / f"{name}.js").is_file() else None


def _seats(game: HostedGame, events: list[Event]) -> list[str]:
    """The seats' names (colours) of the whole file, to tell its events; none for a file
    that cannot be folded."""
    whole = replayed(game, events)
    return list(game.table(whole).colours) if whole is not None else []


def replayed(game: HostedGame, events: list[Event]) -> HostedState | None:
    """The state after ``events``, or None where they cannot be folded (a forged or broken
    file: its audit says what is wrong)."""
    try:
        return game.replay(events)
    except Exception:  # evolve applies without checks: a forged event may break anything
        return None


def title(game: HostedGame, state: HostedState) -> str:
    return f"{game.title.split(' (')[0]} game {state.game_id} after event {state.version}"


def _events_of(game: HostedGame, lines: list[bytes]) -> tuple[list[Event], AuditReport | None]:
    """The file's events, or the failed audit of a file that holds none or a line that is
    not an event (no message echoes more than 200 characters of it)."""
    events: list[Event] = []
    for number, line in enumerate(lines, start=1):
        try:
            events.append(game.decode_event(line))
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as error:
            # RecursionError: a line nested ~1,000 deep (a 500 otherwise)
            return [], _unreadable(number, f"line {number} is not an event: {str(error)[:200]}")
    if not events:
        return [], _unreadable(0, "the file holds no events")
    return events, None


def _unreadable(line: int, message: str) -> AuditReport:
    return failed(Finding(line, "stream", message))


class DisputeDesk:
    """The bounded pool that inspects uploads (see the module's docstring)."""

    def __init__(
        self, workers: int = WORKERS, waiting: int = WAITING, executor: Executor | None = None
    ) -> None:
        self.workers = workers
        self._executor = executor
        self._slots = asyncio.Semaphore(workers + waiting)

    def _pool(self) -> Executor:
        if self._executor is None:  # spawn: a fresh interpreter, no copy of the loop's state
            context = multiprocessing.get_context("spawn")
            self._executor = ProcessPoolExecutor(
                self.workers, mp_context=context, initializer=_start_worker
            )
        return self._executor

    def busy(self) -> bool:
        """Every slot is taken: another upload would be answered 503."""
        return self._slots.locked()

    async def inspect(self, raw: bytes, at: int | None, keys: bytes) -> bytes:
        """The encoded inspection (the seal checked against ``keys``, the server's published
        `signing.KeySet`); 503 ``inspections_busy`` when every slot is taken."""
        if self.busy():
            raise ApiError(503, "inspections_busy", BUSY)
        async with self._slots:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._pool(), inspect_file, raw, at, keys)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None


def _start_worker() -> None:
    """A worker's start: it yields the CPU to the services (`NICENESS`), and it ends when the
    gateway does, however the gateway ended (`_end_with_parent`)."""
    with contextlib.suppress(OSError):
        os.nice(NICENESS)
    threading.Thread(target=_end_with_parent, daemon=True).start()


def _end_with_parent() -> None:
    """Exit once the gateway that started this worker is gone. A worker waits for work on a
    pipe whose writing end it holds itself (the pool hands each worker both ends), so a
    gateway killed outright would leave it waiting forever; multiprocessing's handle on the
    parent (`multiprocessing.parent_process`) is waited on instead."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        parent.join()
        os._exit(0)


class DisputeGate:
    """ASGI middleware: ``POST /disputes`` while the desk is busy is answered 503
    ``inspections_busy`` (``Retry-After``, the connection closed) before its body is read, so
    a flood of uploads past the desk's slots costs neither the reading of megabytes nor a
    route; the desk itself still refuses an upload that finds it full after its body came."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] == "/disputes":
            desk: DisputeDesk = scope["app"].state.gateway.disputes
            if desk.busy():
                start, body = error_response_messages(503, "inspections_busy", BUSY, close=True)
                start["headers"].append((b"retry-after", b"1"))
                await send(start)
                await send(body)
                return
        await self.app(scope, receive, send)
