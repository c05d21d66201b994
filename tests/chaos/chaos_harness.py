"""A Jepsen-style chaos run of the whole stack, and the checker of its history.

Redis and every service run as separate OS processes: Redis with an append-only file, two
rules services, the board and score projectors folded together (``models``) and the board
projector alone beside them, and the gateway (each started as ``python -m
gameserver.runtime.supervisor <name>``, like the end-to-end tests). HTTP clients play many games
to the end through the gateway: every request whose outcome is unknown (a timeout, a dropped
connection, a 5xx) is sent again with the same ids (command ids, ``Idempotency-Key`` for games
and seats) until it gets a definite answer. Meanwhile a bounded fault schedule runs:

``kill:<service>``   SIGKILL, restarted a moment later
``stop:<service>``   SIGSTOP for a few seconds, then SIGCONT (a stalled process)
``redis-kill``       SIGKILL of Redis, restarted from its append-only file
``power-cut``        Redis frozen and killed, its append-only file cut back to what the disk
                     holds after a power cut (``everysec``: the size it had ``loss window``
                     before the cut; ``always``: everything, every write was fsynced before
                     its reply, plus a torn half-written record at the end), then restarted

Recovery time of a fault: from its repair (restart, SIGCONT) until a probe succeeds (a game
created through the gateway and projected by both projectors).

Two more promises are checked. **Keys mean one request**: after every game created and every seat
taken, its client sends the same ``Idempotency-Key`` with another body (another seating,
another name), during faults and between them; the answer must be 422
``idempotency_key_reused``, and the game's seats and lobby must be as before (the seat still
its token's, the game still playable to its end). **Connections heal**: besides the gateway
that faults kill, a second gateway (``gateway-watch``) lives through the whole run and is asked
something every 0.1 s; after each Redis restart no request sent once Redis answers again may
get a 5xx more than a second after it did (the run prints the 5xx answers by code and, per
restart, the latest one after Redis was back).

Once the faults are over the clients play every game to its end, then the checker reads Redis:
every acknowledged command is in its stream at the acknowledged versions (else *lost*); no
version gaps; no command id twice; every hash chain links and the stream replays (else
*forked*); every read model equals a fresh replay; ``renature audit`` holds for every finished
game; every started game finished. A power cut under ``everysec`` may lose the commands
acknowledged in the loss window before it, and nothing else.

Run: ``make chaos`` (or ``python tests/chaos/chaos_harness.py --help``); a short run is part of
``make test`` (tests/chaos/test_chaos.py).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import httpx
import msgspec
import redis

from devkit.redis_server import RedisServer, free_port
from eventstore import KeyLayout
from renature import events as e
from renature.audit import audit
from renature.game import replay
from renature.view import view

SERVICES = ("rules-a", "rules-b", "models", "board", "gateway")
KINDS = ("rules", "rules", "models", "board", "gateway")
"""The board and score projectors folded together, as ``serve all`` runs them, and beside them
the board projector alone: both write the board models, each only forward, through every
fault."""
WATCHED = "gateway-watch"
"""A gateway no fault touches: it lives through every Redis restart of the run."""
GATEWAY_FAULTS = ("stop:gateway", "kill:gateway")
"""The faults that freeze or kill the gateway the clients talk to."""
REDIS_FAULTS = ("redis-kill", "power-cut")
"""The faults that take Redis away: a request in flight then is answered 503 by their doing."""
LATE_AFTER_S = 1.0
"""No 5xx may come later than this after Redis answers again (for requests sent after that)."""
LAYOUT = KeyLayout()
STALL_MS = 100
"""Redis's latency monitor records every stall of its own of at least this long (an fsync, a
slow command): a 5xx answered while Redis itself did not answer is the store's doing."""
LONG_STALL_MS = 1_000
"""A stall this long of Redis itself explains a 5xx answered up to `LATE_AFTER_S` after it."""
REQUEST_TIMEOUT = 12.0
"""Past the gateway's 10 s command timeout: a client gets the gateway's answer, not its own."""


@dataclass
class ChaosConfig:
    games: int = 6
    players: tuple[int, ...] = (2, 3, 4)
    durability: str = "always"
    fault_interval: float = 3.5
    rounds: int = 1
    """Each round runs every fault kind once, in a shuffled order."""
    finish_timeout: float = 240.0
    seed: int = 11
    loss_window: float = 1.0
    stop_seconds: tuple[float, float] = (4.5, 7.0)
    """How long a SIGSTOP lasts: past the 4 s reclaim, near the gateway's 10 s timeout."""
    logs: Path | None = None
    verbose: bool = False


@dataclass
class Ack:
    """A command the server said "accepted" (or "created", "joined") to."""

    game_id: str
    kind: str
    command_id: str  # as stored: the envelope's command id ("" when the client cannot know it)
    first: int
    last: int
    at: float
    seat: int | None = None
    name: str = ""


HELD_WRITE_S = 2.0
"""How long Redis under ``everysec`` may hold answered writes in its AOF buffer before it
writes them to the file: while its background fsync runs it postpones the write, for up to two
seconds, and answers meanwhile (Redis's latency documentation; the event store documents "2 s
on a slow disk"). Seen here with a disk kept busy by ``dd ... conv=fsync``: Redis's buffer held
up to 3.6 MB at once."""


@dataclass(frozen=True)
class AofSample:
    """The append-only file's size at ``at``, and whether Redis's background fsync was running
    then (``aof_pending_bio_fsync``; None: not known). Only while it runs does Redis postpone
    writing its buffer and answer meanwhile: with none running, every write answered before
    ``at`` is in the size read after (its buffer holds only what it has not answered yet)."""

    at: float
    path: str
    size: int
    fsyncing: bool | None = None


@dataclass(frozen=True)
class Cut:
    """A power cut at ``at`` that kept the file as it was at ``kept``. ``held_from``: the
    earliest answer that may be lost with it: ``kept``, or up to `HELD_WRITE_S` earlier where
    Redis held answered writes back from the file then (a slow fsync)."""

    at: float
    kept: float
    held_from: float

    def explains(self, ack: Ack) -> bool:
        """A loss the disk explains: answered after the last write kept (0.1 s of slack for
        the sampling), before the cut (1 s of slack for the answer's way back)."""
        return self.held_from - 0.1 <= ack.at <= self.at + 1.0


@dataclass
class Answer5xx:
    """A 5xx (or no answer at all, status 0 is not kept) seen by a client or the watcher."""

    sent: float
    answered: float
    status: int
    code: str
    source: str


@dataclass
class RedisBack:
    """A Redis restart: when Redis answered again and until when (the next fault) a 5xx may
    only be this restart's doing."""

    fault: str
    back: float
    until: float = float("inf")
    next_fault: str = ""
    """The fault that began at ``until``."""

    def overtaken(self, error: Answer5xx) -> bool:
        """Whether ``error`` was answered after the next fault froze or killed the gateway
        that answered it, or took Redis away: a request it held across a SIGSTOP finds its
        Redis reads timed out on waking (redis-py's 5 s socket timeout ran while the process
        stood still), and one in flight when Redis is killed finds it gone, then loading its
        file once restarted (a chaos run's client and watcher each met such a 503 from a
        request sent 0.1 s before the kill); that fault's doing, not the restart's."""
        next_kinds = GATEWAY_FAULTS + REDIS_FAULTS
        return self.next_fault in next_kinds and error.answered >= self.until


@dataclass(frozen=True)
class Stall:
    """A stall of Redis itself (its latency monitor): what it was doing, for how long, and
    when it ended (monotonic; the monitor keeps whole seconds, so up to a second later)."""

    event: str
    ms: int
    ended: float

    def explains(self, error: Answer5xx) -> bool:
        """Whether ``error`` was answered while Redis stalled (or `LATE_AFTER_S` after)."""
        began = self.ended - self.ms / 1000 - 1.0  # the second it ended in, at the earliest
        return self.ms >= LONG_STALL_MS and began <= error.answered <= self.ended + LATE_AFTER_S


@dataclass
class Report:
    config: ChaosConfig
    games: int = 0
    started: int = 0
    finished: int = 0
    acknowledged: int = 0
    lost: list[Ack] = field(default_factory=list)
    lost_outside_window: list[Ack] = field(default_factory=list)
    lost_held: int = 0
    """Lost acknowledged commands answered before the disk's last kept write, while Redis
    held answered writes in its AOF buffer (`HELD_WRITE_S`)."""
    forked: list[str] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)
    duplicate_ids: list[str] = field(default_factory=list)
    model_mismatches: list[str] = field(default_factory=list)
    audit_failures: list[str] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)
    recovery: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    faults: list[str] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    duration: float = 0.0
    service_deaths: list[str] = field(default_factory=list)
    errors: list[Answer5xx] = field(default_factory=list)
    redis_backs: list[RedisBack] = field(default_factory=list)
    key_reuses: int = 0
    key_reuse_failures: list[str] = field(default_factory=list)
    stalls: list[Stall] = field(default_factory=list)

    cuts: list[Cut] = field(default_factory=list)
    started_at: float = field(default_factory=time.monotonic)

    def window(self) -> float:
        """The longest stretch of writes a power cut of this run lost."""
        return max((cut.at - cut.kept for cut in self.cuts), default=0.0)

    @property
    def ok(self) -> bool:
        durable = self.config.durability in ("always", "replica")
        return (
            not (self.lost if durable else self.lost_outside_window)
            and not self.forked
            and not self.gaps
            and not self.duplicate_ids
            and not self.model_mismatches
            and not self.audit_failures
            and not self.unfinished
            and not self.statuses.get(500)
            and not self.service_deaths
            and not self.late_5xx()
            and not self.key_reuse_failures
        )

    def late_5xx(self) -> list[tuple[RedisBack, Answer5xx]]:
        """5xx answers later than `LATE_AFTER_S` after Redis answered again, to requests sent
        after it did and before the next fault, unless Redis itself stalled for a second or
        more then (`stalled_5xx`: the store's doing, not the services')."""
        return [
            (back, error)
            for back, error in self._after_backs()
            if not any(stall.explains(error) for stall in self.stalls) and not back.overtaken(error)
        ]

    def stalled_5xx(self) -> list[tuple[RedisBack, Answer5xx, Stall]]:
        """The late 5xx answers that a stall of Redis itself explains, each with its stall."""
        found = []
        for back, error in self._after_backs():
            stall = next((stall for stall in self.stalls if stall.explains(error)), None)
            if stall is not None:
                found.append((back, error, stall))
        return found

    def _after_backs(self) -> list[tuple[RedisBack, Answer5xx]]:
        return [
            (back, error)
            for back in self.redis_backs
            for error in self.errors
            if back.back <= error.sent < back.until and error.answered > back.back + LATE_AFTER_S
        ]

    def format_5xx(self) -> list[str]:
        """The 5xx answers by code, and per Redis restart the latest one after Redis was back."""
        codes: dict[str, int] = defaultdict(int)
        for error in self.errors:
            codes[f"{error.status} {error.code}"] += 1
        lines = [
            "5xx answers by code: "
            + (", ".join(f"{c}: {n}" for c, n in sorted(codes.items())) or "none")
        ]
        for back in self.redis_backs:
            after = [
                error.answered - back.back
                for error in self.errors
                if back.back <= error.answered < back.until
            ]
            latest = f"latest 5xx {max(after):+.2f} s" if after else "no 5xx"
            at = back.back - self.started_at
            lines.append(f"  after {back.fault} (Redis back at {at:.1f} s): {latest}")
        late = self.late_5xx()
        lines.append(
            f"5xx later than {LATE_AFTER_S:g} s after Redis was back: {len(late)}"
            + "".join(
                f"; {e.source} {e.status} {e.code} at {e.answered - b.back:+.2f} s after {b.fault}"
                for b, e in late[:5]
            )
        )
        longest = max(self.stalls, key=lambda stall: stall.ms, default=None)
        lines.append(
            f"stalls of Redis itself (latency monitor, at least {STALL_MS} ms): "
            f"{len(self.stalls)}"
            + (f", longest {longest.ms} ms ({longest.event})" if longest else "")
        )
        overtaken = [(b, e) for b, e in self._after_backs() if b.overtaken(e)]
        lines.append(
            "5xx answered after the next fault froze or killed the gateway or took Redis away "
            f"(that fault's doing, not counted late): {len(overtaken)}"
            + "".join(
                f"; {e.source} {e.status} {e.code} at {e.answered - b.back:+.2f} s after "
                f"{b.fault}, {e.answered - b.until:+.2f} s after {b.next_fault} began"
                for b, e in overtaken[:5]
            )
        )
        stalled = self.stalled_5xx()
        lines.append(
            f"5xx answered while Redis itself stalled for {LONG_STALL_MS / 1000:g} s or more "
            f"(the store's doing, not counted late): {len(stalled)}"
            + "".join(
                f"; {e.source} {e.status} {e.code} at {e.answered - b.back:+.2f} s after "
                f"{b.fault}, in a {s.ms} ms {s.event}"
                for b, e, s in stalled[:5]
            )
        )
        lines.append(
            f"keys sent again with another body: {self.key_reuses}, "
            f"not refused as idempotency_key_reused: {len(self.key_reuse_failures)}"
            + "".join(f"; {failure}" for failure in self.key_reuse_failures[:5])
        )
        return lines

    def format(self) -> str:
        kinds: dict[str, list[float]] = defaultdict(list)
        for fault, times in self.recovery.items():
            kind, _, name = fault.partition(":")
            name = name.removesuffix("-a").removesuffix("-b")
            kinds[f"{kind}:{name}" if name else kind].extend(times)
        lines = [
            f"chaos run: durability {self.config.durability}, {len(self.faults)} faults "
            f"({self.config.rounds} round(s) of every kind), {self.duration:.0f} s",
            f"games: {self.games} ({self.started} started, {self.finished} finished)",
            f"acknowledged commands: {self.acknowledged}",
            f"lost: {len(self.lost)}"
            + (
                f" (all acknowledged in the last {self.window():.1f} s before a power cut, "
                "after the disk's last kept write"
                + (
                    f"; {self.lost_held} before it, held in Redis's AOF buffer behind an fsync"
                    if self.lost_held
                    else ""
                )
                + ")"
                if self.lost and not self.lost_outside_window
                else f" ({len(self.lost_outside_window)} outside the loss window)"
                if self.lost
                else ""
            ),
            f"forked: {len(self.forked)}",
            f"version gaps: {len(self.gaps)}, duplicate command ids: {len(self.duplicate_ids)}",
            f"model mismatches: {len(self.model_mismatches)}",
            f"audit failures: {len(self.audit_failures)}",
            f"unfinished started games: {len(self.unfinished)}",
            "HTTP answers: "
            + ", ".join(f"{status}: {n}" for status, n in sorted(self.statuses.items())),
            *self.format_5xx(),
            "recovery time per fault kind (s, from the repair to a working probe; max / mean):",
        ]
        for kind, times in sorted(kinds.items()):
            lines.append(
                f"  {kind:<16} n={len(times)}  max {max(times):5.2f}  mean "
                f"{sum(times) / len(times):5.2f}"
            )
        if self.service_deaths:
            lines.append(f"services that exited on their own: {', '.join(self.service_deaths)}")
        for label, items in (
            (
                "lost",
                [f"{a.game_id} {a.kind} {a.command_id} v{a.first}-{a.last}" for a in self.lost[:5]],
            ),
            (
                "lost outside the window",
                [
                    f"{a.game_id} {a.kind} {a.command_id} v{a.first}-{a.last} at "
                    f"{a.at - self.started_at:.2f} s"
                    for a in self.lost_outside_window[:5]
                ]
                + [
                    f"cut at {c.at - self.started_at:.2f} s kept {c.kept - self.started_at:.2f} s"
                    for c in self.cuts
                    if self.lost_outside_window
                ],
            ),
            ("forked", self.forked[:5]),
            ("gaps", self.gaps[:5]),
            ("duplicate ids", self.duplicate_ids[:5]),
            ("model mismatches", self.model_mismatches[:5]),
            ("audit failures", self.audit_failures[:5]),
            ("unfinished", self.unfinished[:5]),
        ):
            if items:
                lines.append(f"first {label}: " + "; ".join(items))
        lines.append("RESULT: " + ("OK" if self.ok else "FAILED"))
        return "\n".join(lines)


# -- the processes -------------------------------------------------------------------------


class ChaosRedis(RedisServer):
    """A Redis with an append-only file and no rewrites (the power cut cuts its file)."""

    def __init__(self, appendfsync: str) -> None:
        super().__init__(appendonly=True, appendfsync=appendfsync)

    def _command(self) -> list[str]:
        return [
            *super()._command(),
            "--auto-aof-rewrite-percentage", "0",
            "--aof-load-truncated", "yes",
            "--aof-use-rdb-preamble", "no",
            "--latency-monitor-threshold", str(STALL_MS),
        ]  # fmt: skip

    def aof_file(self) -> Path | None:
        """The file Redis appends to (the newest ``*.incr.aof`` of the append-only dir)."""
        files = sorted(
            (self.data_dir / "appendonlydir").glob("*.incr.aof"),
            key=lambda path: int(path.name.split(".")[-3]),
        )
        return files[-1] if files else None

    def pause(self) -> None:
        if self._process is not None:
            self._process.send_signal(signal.SIGSTOP)


@dataclass
class Proc:
    name: str
    command: list[str]
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self.command, env=self.env, stdout=log, stderr=subprocess.STDOUT
            )

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def signal(self, signum: int) -> None:
        if self.process is not None and self.alive:
            self.process.send_signal(signum)

    def kill(self) -> None:
        if self.process is not None and self.alive:
            self.process.send_signal(signal.SIGCONT)
            self.process.kill()
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is None or not self.alive:
            return
        self.process.send_signal(signal.SIGCONT)
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()


def service_command(kind: str, port: int) -> list[str]:
    command = [sys.executable, "-m", "gameserver.runtime.supervisor", kind]
    return command + (["--port", str(port)] if kind == "gateway" else [])


class Stack:
    def __init__(self, config: ChaosConfig) -> None:
        self.config = config
        self.logs = config.logs or Path(tempfile.mkdtemp(prefix="renature-chaos-"))
        self.logs.mkdir(parents=True, exist_ok=True)
        fsync = "always" if config.durability in ("always", "replica") else "everysec"
        self.redis = ChaosRedis(fsync)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.procs: dict[str, Proc] = {}
        self.aof_sizes: list[AofSample] = []
        self.expected_down: set[str] = set()
        self.deaths: list[str] = []
        self.redis_backs: list[RedisBack] = []
        self.watch_port = free_port()
        self.cuts: list[Cut] = []
        """Each power cut: when it happened and up to when the disk kept the writes
        (monotonic); acknowledged commands in between may be lost under everysec."""
        self.stalls: list[Stall] = []
        """Redis's own stalls of `STALL_MS` or more, from its latency monitor."""
        self._lock = threading.Lock()

    def start(self) -> None:
        self.redis.start()
        env = {
            **os.environ,
            "REDIS_URL": self.redis.url,
            "RENATURE_DURABILITY": self.config.durability,
            "RENATURE_LOG_LEVEL": "INFO" if self.config.verbose else "WARNING",
            "RENATURE_RATE_LIMITS": "off",
            "RENATURE_GATEWAY_WORKERS": "1",
        }
        env.pop("RENATURE_CONSUMER", None)
        for name, kind in zip(SERVICES, KINDS, strict=True):
            proc = Proc(name, service_command(kind, self.port), env, self.logs / f"{name}.log")
            proc.start()
            self.procs[name] = proc
        watched = service_command("gateway", self.watch_port)
        self.procs[WATCHED] = Proc(WATCHED, watched, env, self.logs / f"{WATCHED}.log")
        self.procs[WATCHED].start()

    def shutdown(self) -> None:
        for proc in self.procs.values():
            proc.stop()
        self.redis.cleanup()

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.redis.url, socket_timeout=10)

    def sample_aof(self, info: redis.Redis | None = None) -> None:
        """The AOF's size now, and (given a client) whether Redis may hold answered writes back
        from it (`AofSample`), asked first."""
        at = time.monotonic()
        fsyncing: bool | None = None
        if info is not None:
            with contextlib.suppress(redis.RedisError, OSError, ValueError):
                fsyncing = int(info.info("persistence").get("aof_pending_bio_fsync", 0)) > 0
        path = self.redis.aof_file()
        with contextlib.suppress(OSError), self._lock:
            if path is not None:
                self.aof_sizes.append(AofSample(at, str(path), path.stat().st_size, fsyncing))
                del self.aof_sizes[:-400]

    def sample_forever(self, stop: threading.Event) -> None:
        """The AOF's size every 20 ms, in a thread (the event loop may be busy): what a power
        cut keeps is the size the file had a loss window earlier."""
        info = redis.Redis.from_url(self.redis.url, socket_timeout=0.2)
        try:
            while not stop.wait(0.02):
                self.sample_aof(info)
        finally:
            info.close()

    def watch_stalls(self, stop: threading.Event) -> None:
        """Redis's latency monitor read every quarter second, in a thread of its own (a read
        waits while Redis stalls), so that the stalls it kept are known before a kill loses
        them."""
        offset = time.time() - time.monotonic()
        seen: set[tuple[str, int, int]] = set()
        client = redis.Redis.from_url(self.redis.url, socket_timeout=2)
        try:
            while not stop.wait(0.25):
                with contextlib.suppress(redis.RedisError):
                    for latest in client.latency_latest():
                        event = (
                            latest[0].decode() if isinstance(latest[0], bytes) else str(latest[0])
                        )
                        for at, ms in client.latency_history(event):
                            if (event, at, ms) not in seen:
                                seen.add((event, at, ms))
                                with self._lock:  # the end of the whole second it ended in
                                    self.stalls.append(Stall(event, ms, at + 1 - offset))
        finally:
            client.close()

    def samples(self) -> list[AofSample]:
        with self._lock:
            return list(self.aof_sizes)

    def watch_deaths(self) -> None:
        """Services must never exit on their own (the supervisor restarts only what we kill)."""
        for name, proc in self.procs.items():
            if name not in self.expected_down and not proc.alive:
                code = proc.process.returncode if proc.process else None
                self.deaths.append(f"{name} (exit {code})")
                proc.start()

    def tails(self, lines: int = 15) -> str:
        out = []
        for proc in self.procs.values():
            if proc.log_path.exists():
                text = proc.log_path.read_text(errors="replace").splitlines()[-lines:]
                out.append(f"--- {proc.name} ---\n" + "\n".join(text))
        return "\n".join(out)


# -- the clients ---------------------------------------------------------------------------


async def answer(
    report: Report, http: httpx.AsyncClient, source: str, method: str, path: str, **kwargs: Any
) -> httpx.Response | None:
    """One request: its answer (None for none), counted; a 5xx kept with when it was sent."""
    sent = time.monotonic()
    try:
        response = await http.request(method, path, timeout=REQUEST_TIMEOUT, **kwargs)
    except (httpx.HTTPError, OSError):
        report.statuses[0] += 1  # no answer (connection refused, reset, timeout)
        return None
    report.statuses[response.status_code] += 1
    if response.status_code >= 500:
        try:
            code = str(response.json()["error"]["code"])
        except (ValueError, KeyError, TypeError):
            code = "?"
        report.errors.append(Answer5xx(sent, time.monotonic(), response.status_code, code, source))
    return response


def in_flight(response: httpx.Response) -> bool:
    """409 ``idempotency_key_in_flight``: the key's first request is still being answered
    (or its gateway died mid-request and the lease has not lapsed): no answer yet."""
    return response.status_code == 409 and "idempotency_key_in_flight" in response.text


class Client:
    """One game, played to the end by one task; unknown outcomes retried with the same ids."""

    def __init__(
        self, stack: Stack, report: Report, acks: list[Ack], index: int, rng: random.Random
    ):
        self.stack = stack
        self.report = report
        self.acks = acks
        self.rng = rng
        self.players = stack.config.players[index % len(stack.config.players)]
        self.key = f"chaos-{stack.config.seed}-{index}-{uuid.uuid4().hex}"
        self.game_id = ""
        self.tokens: dict[int, str] = {}
        self.started = False
        self.done = False
        self.last_move: tuple[int, str, dict[str, Any]] | None = None
        self.seen = ""
        """What the client last saw of its game (phase, version, whose turn) and the last
        answer to a move or nudge: an unfinished game's report says where it stood."""
        self.answered = ""

    async def request(
        self, http: httpx.AsyncClient, method: str, path: str, deadline: float, **kwargs: Any
    ) -> httpx.Response | None:
        """The first definite answer (2xx or 4xx), retrying everything else; None at the
        deadline."""
        delay = 0.05
        while time.monotonic() < deadline:
            response = await answer(self.report, http, "client", method, path, **kwargs)
            if response is not None and response.status_code < 500 and not in_flight(response):
                return response
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.5)
        return None

    async def reuse_key(
        self, http: httpx.AsyncClient, path: str, name: str, body: dict[str, Any], deadline: float
    ) -> None:
        """The key of a request that succeeded, sent with another body: refused 422
        ``idempotency_key_reused`` (a power cut under everysec may have lost the first
        request, and with it the key's record: then the other body may succeed; or the game
        itself, created within the loss window: then a seat's key meets 404 ``game_not_found``;
        the lost writes themselves are checked against the window apart)."""
        self.report.key_reuses += 1
        response = await self.request(
            http, "POST", path, deadline, json=body, headers=self.headers(name)
        )
        if response is None:
            return
        code = response.json().get("error", {}).get("code") if response.status_code >= 400 else ""
        lost = self.stack.config.durability == "everysec" and (
            response.status_code == 201 or code == "game_not_found"
        )
        if code != "idempotency_key_reused" and not lost:
            self.report.key_reuse_failures.append(
                f"{self.game_id} {name}: {response.status_code} {code or response.text[:80]}"
            )

    def headers(self, name: str, seat: int | None = None) -> dict[str, str]:
        headers = {"Idempotency-Key": f"{self.key}-{name}"}
        if seat is not None and seat in self.tokens:
            headers["Authorization"] = f"Bearer {self.tokens[seat]}"
        return headers

    async def create(self, http: httpx.AsyncClient, deadline: float) -> bool:
        response = await self.request(
            http, "POST", "/games", deadline, json={"players": self.players},
            headers=self.headers("create"),
        )  # fmt: skip
        if response is None or response.status_code != 201:
            return False
        body = response.json()
        self.game_id = body["game_id"]
        self.acks.append(Ack(self.game_id, "create", "create", 1, 1, time.monotonic()))
        other = {"players": self.players, "seating": "invite"}  # would close the lobby
        await self.reuse_key(http, "/games", "create", other, deadline)
        return True

    async def join(self, http: httpx.AsyncClient, seat: int, deadline: float) -> None:
        response = await self.request(
            http, "POST", f"/games/{self.game_id}/seats/{seat}", deadline,
            json={"name": f"p{seat}"}, headers=self.headers(f"seat{seat}"),
        )  # fmt: skip
        if response is not None and response.status_code == 201:
            body = response.json()
            if self.tokens.get(seat) not in (None, body["token"]):
                raise AssertionError(f"{self.game_id}: seat {seat} came back with another token")
            self.tokens[seat] = body["token"]
            version = int(body["version"])
            self.acks.append(
                Ack(self.game_id, "join", "", version, version, time.monotonic(), seat, f"p{seat}")
            )
            path = f"/games/{self.game_id}/seats/{seat}"
            await self.reuse_key(http, path, f"seat{seat}", {"name": f"q{seat}"}, deadline)

    async def play(self, http: httpx.AsyncClient, deadline: float) -> None:
        self.done = False  # played again: done once it sees the end again
        while not self.game_id and time.monotonic() < deadline:
            await self.create(http, deadline)
        stuck_since: float | None = None
        while time.monotonic() < deadline:
            response = await self.request(http, "GET", f"/games/{self.game_id}", deadline)
            if response is None:
                return
            if response.status_code == 404:  # its creation was lost (everysec): again
                await self.create(http, deadline)
                continue
            summary = response.json()
            phase = summary["phase"]
            self.seen = f"{phase} v{summary.get('version')} seat {summary.get('current_seat')}"
            if phase in ("finished", "cancelled"):
                self.done = True
                return
            if phase == "lobby":
                for seat in range(self.players):
                    if seat not in summary["seats_joined"] or seat not in self.tokens:
                        await self.join(http, seat, deadline)
                if len(self.tokens) == self.players:
                    await self.command(http, 0, None, deadline)
                continue
            self.started = True
            if phase == "final_scoring":  # the finish is the rules service's: nudge it
                stuck_since = stuck_since or time.monotonic()
                if time.monotonic() - stuck_since > 3 and self.last_move is not None:
                    seat, command_id, command = self.last_move
                    await self.command(http, seat, command, deadline, command_id)
                    stuck_since = time.monotonic()
                await asyncio.sleep(0.2)
                continue
            stuck_since = None
            seat = summary["current_seat"]
            if seat is None or seat not in self.tokens:
                await asyncio.sleep(0.1)
                continue
            legal = await self.request(
                http, "GET", f"/games/{self.game_id}/legal-actions", deadline,
                headers={"Authorization": f"Bearer {self.tokens[seat]}"},
            )  # fmt: skip
            if legal is not None and legal.status_code != 200:
                self.answered = f"legal actions {legal.status_code} {legal.text[:160]}"
                await asyncio.sleep(0.1)  # a refusal is not asked again at once
            if legal is None or legal.status_code != 200 or not legal.json():
                continue
            command = self.rng.choice(legal.json())
            await self.command(http, seat, command, deadline)

    async def command(
        self,
        http: httpx.AsyncClient,
        seat: int,
        command: dict[str, Any] | None,
        deadline: float,
        command_id: str | None = None,
    ) -> None:
        """A move (``command``) or the start (None), with one id for all its retries."""
        command_id = command_id or uuid.uuid4().hex
        auth = {"Authorization": f"Bearer {self.tokens[seat]}"}
        if command is None:
            response = await self.request(
                http, "POST", f"/games/{self.game_id}/start", deadline, headers=auth
            )
        else:
            response = await self.request(
                http, "POST", f"/games/{self.game_id}/commands", deadline,
                json={"command_id": command_id, "command": command}, headers=auth,
            )  # fmt: skip
        if response is not None:
            self.answered = f"move {response.status_code} {response.text[:160]}"
        if response is None or response.status_code != 200:
            return
        body = response.json()
        stored_id = body["command_id"] if command is None else f"seat{seat}:{command_id}"
        if command is not None:
            self.last_move = (seat, command_id, command)
        self.acks.append(
            Ack(
                self.game_id,
                "start" if command is None else "move",
                stored_id,
                int(body["first_version"]),
                int(body["last_version"]),
                time.monotonic(),
                seat,
            )
        )


# -- faults --------------------------------------------------------------------------------


def schedule(config: ChaosConfig) -> list[str]:
    rng = random.Random(config.seed)
    kinds = [f"kill:{name}" for name in SERVICES] + [f"stop:{name}" for name in SERVICES]
    kinds += ["redis-kill", "power-cut"]
    faults: list[str] = []
    for _ in range(config.rounds):
        batch = kinds[:]
        rng.shuffle(batch)
        faults += batch
    return faults


async def probe(stack: Stack, http: httpx.AsyncClient, deadline: float) -> bool:
    """A game created through the gateway and projected by both projectors."""
    key = f"probe-{uuid.uuid4().hex}"
    while time.monotonic() < deadline:
        try:
            response = await http.post(
                "/games", json={"players": 2}, headers={"Idempotency-Key": key}, timeout=5
            )
            if response.status_code == 201:
                game_id = response.json()["game_id"]
                break
        except (httpx.HTTPError, OSError):
            pass
        await asyncio.sleep(0.05)
    else:
        return False
    with stack.client() as client:
        while time.monotonic() < deadline:
            try:
                versions = [
                    client.hget(LAYOUT.model_key(name, game_id), "version")
                    for name in ("board", "score")
                ]
                if all(v is not None for v in versions):
                    return True
            except redis.RedisError:
                pass
            await asyncio.sleep(0.05)
    return False


async def inject(stack: Stack, fault: str, rng: random.Random) -> None:
    """Cause ``fault`` and repair it (the repair is where recovery time starts)."""
    kind, _, name = fault.partition(":")
    if kind == "kill":
        stack.expected_down.add(name)
        stack.procs[name].kill()
        await asyncio.sleep(rng.uniform(0.3, 1.0))
        stack.procs[name].start()
        stack.expected_down.discard(name)
    elif kind == "stop":
        stack.procs[name].signal(signal.SIGSTOP)
        await asyncio.sleep(rng.uniform(*stack.config.stop_seconds))
        stack.procs[name].signal(signal.SIGCONT)
    elif kind in ("redis-kill", "power-cut"):
        power_cut = kind == "power-cut"
        if power_cut:
            await asyncio.sleep(rng.uniform(0.5, 1.5))  # writes in flight
            stack.redis.pause()  # the machine stops: nothing more reaches the disk
            cut_at = time.monotonic()
            stack.sample_aof()
        stack.redis.stop(kill=True)
        if power_cut:
            stack.cuts.append(cut_back(stack, rng, cut_at))
        await asyncio.sleep(rng.uniform(0.3, 1.0))
        stack.redis.start()  # returns once Redis answers PING
        stack.redis_backs.append(RedisBack(fault, time.monotonic()))


def cut_back(stack: Stack, rng: random.Random, cut_at: float) -> Cut:
    """What the disk holds after a power cut, and which answers it may lose (`Cut`).

    everysec: the file as it was a loss window ago (Redis fsyncs once a second; the newest
    size sampled at least that long before the cut; answered writes Redis held in its buffer
    then, behind a running fsync, are lost with it); always: every byte (each write was fsynced
    before its reply), then a torn, half-written record (a write whose fsync never finished)."""
    samples = stack.samples()
    if not samples:
        return Cut(cut_at, cut_at, cut_at)
    path = samples[-1].path
    if stack.config.durability == "everysec":
        earlier = [
            s for s in samples if s.path == path and s.at <= cut_at - stack.config.loss_window
        ]
        if not earlier:  # no size known from a window ago: keep everything
            return Cut(cut_at, cut_at, cut_at)
        kept = earlier[-1]
        with open(path, "r+b") as aof:
            aof.truncate(kept.size)
        held = kept.fsyncing is None or kept.fsyncing
        return Cut(cut_at, kept.at, kept.at - HELD_WRITE_S if held else kept.at)
    with open(path, "ab") as aof:
        aof.write(b"*3\r\n$4\r\nXADD\r\n$20\r\nrn:{p00}:gam"[: rng.randint(5, 30)])
    return Cut(cut_at, cut_at, cut_at)


async def run_faults(
    stack: Stack, report: Report, http: httpx.AsyncClient, faults: list[str]
) -> None:
    rng = random.Random(stack.config.seed + 1)
    for fault in faults:
        await asyncio.sleep(stack.config.fault_interval)
        if stack.redis_backs:  # the last restart's doing ends where this fault starts
            stack.redis_backs[-1].until = min(stack.redis_backs[-1].until, time.monotonic())
            stack.redis_backs[-1].next_fault = stack.redis_backs[-1].next_fault or fault
        report.faults.append(fault)
        await inject(stack, fault, rng)
        repaired = time.monotonic()
        if not await probe(stack, http, repaired + 60):
            report.recovery[fault].append(float("inf"))
            continue
        report.recovery[fault].append(time.monotonic() - repaired)


async def watch(stack: Stack, report: Report, stop: asyncio.Event) -> None:
    """Ask the long-lived gateway something every 0.1 s (a game's summary: the store; every
    fifth time a creation: the bus too) until ``stop``; its 5xx are kept."""
    url = f"http://127.0.0.1:{stack.watch_port}"
    async with httpx.AsyncClient(base_url=url) as http:
        game_id = ""
        for tick in itertools.count():
            if stop.is_set():
                return
            if not game_id or tick % 5 == 0:
                key = {"Idempotency-Key": f"watch-{uuid.uuid4().hex}"}
                created = await answer(
                    report, http, "watch", "POST", "/games", json={"players": 2}, headers=key
                )
                if created is not None and created.status_code == 201:
                    game_id = created.json()["game_id"]
            else:
                await answer(report, http, "watch", "GET", f"/games/{game_id}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.1)


async def sampler(stack: Stack, stop: asyncio.Event) -> None:
    while not stop.is_set():
        stack.watch_deaths()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.1)


# -- the checker ---------------------------------------------------------------------------


def game_over(decoded: list[e.Event]) -> bool:
    state = replay(decoded) if decoded else None
    return state is not None and state.is_over


def check(
    stack: Stack,
    report: Report,
    acks: list[Ack],
    clients: list[Client],
    cuts: list[Cut],
) -> None:
    from gameplatform import get_game
    from gameserver.projectors import ScoreProjection

    with stack.client() as client:
        game_ids = sorted({c.game_id for c in clients if c.game_id})
        streams: dict[str, list[tuple[int, dict[bytes, bytes]]]] = {}
        for game_id in game_ids:
            entries = client.xrange(LAYOUT.game_key(game_id))
            streams[game_id] = [(int(i.decode().partition("-")[2]), f) for i, f in entries]
        report.games = len(game_ids)
        report.started = sum(c.started for c in clients)
        report.acknowledged = len(acks)
        events: dict[str, list[e.Event]] = {}
        for game_id, entries in streams.items():
            if [v for v, _ in entries] != list(range(1, len(entries) + 1)):
                report.gaps.append(game_id)
            ids = [
                msgspec.json.decode(f[b"meta"])["command_id"] for _, f in entries if b"meta" in f
            ]
            if len(ids) != len(set(ids)):
                report.duplicate_ids.append(game_id)
            decoded = [e.decode(f[b"event"]) for _, f in entries]
            events[game_id] = decoded
            prev = ""
            linked = True
            for event in decoded:
                if event.prev_hash != prev or event.hash != e.chain_hash(event):
                    linked = False
                prev = event.hash
            try:
                state = replay(decoded)
            except Exception:
                state = None
                linked = False
            if not linked:
                report.forked.append(game_id)
                continue
            if state is not None and state.is_over:
                report.finished += 1
                result = audit(decoded)
                if not result.ok:
                    report.audit_failures.append(game_id)
        for client_ in clients:
            decoded = events.get(client_.game_id, [])
            over = game_over(decoded) if client_.game_id not in report.forked else False
            if client_.started and not (client_.done and over):
                report.unfinished.append(
                    f"{client_.game_id} (client {'done' if client_.done else 'not done'}, "
                    f"stream {'over' if over else 'not over'} at v{len(decoded)}; "
                    f"it saw {client_.seen}; its last refusal or move's answer: "
                    f"{client_.answered}; {seat_records(client, client_)})"
                )
        # Acknowledged commands at their versions.
        for ack in acks:
            entries = dict(streams.get(ack.game_id, []))
            found = all(v in entries for v in range(ack.first, ack.last + 1))
            if found and ack.command_id:
                meta = entries[ack.first].get(b"meta")
                found = (
                    meta is not None and msgspec.json.decode(meta)["command_id"] == ack.command_id
                )
            if found and ack.kind == "join":
                joined = events[ack.game_id][ack.first - 1]
                found = isinstance(joined, e.PlayerJoined) and joined.seat == ack.seat
            if not found:
                report.lost.append(ack)
                # Lost where the disk lost it: acknowledged after the cut's last kept write
                # (or held in Redis's buffer then).
                if not any(cut.explains(ack) for cut in cuts):
                    report.lost_outside_window.append(ack)
                elif not any(cut.kept - 0.1 <= ack.at for cut in cuts if cut.explains(ack)):
                    report.lost_held += 1
        # Read models equal a fresh replay (once the projectors caught up).
        deadline = time.monotonic() + 60
        for game_id, decoded in events.items():
            if game_id in report.forked or not decoded:
                continue
            state = replay(decoded)
            assert state is not None
            board = json.loads(msgspec.json.encode(view(state, None)))
            projection, renature = ScoreProjection(), get_game("renature")
            fold = None
            for event in decoded:
                fold = projection.apply(renature, fold, event)
            assert fold is not None
            score = json.loads(projection.render(renature, fold))
            while True:
                models = [
                    client.hmget(LAYOUT.model_key(name, game_id), ["version", "model"])
                    for name in ("board", "score")
                ]
                same = [
                    v is not None and int(v) == len(decoded) and json.loads(m) == want
                    for (v, m), want in zip(models, (board, score), strict=True)
                ]
                if all(same) or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            if not all(same):
                report.model_mismatches.append(game_id)


def seat_records(client: redis.Redis, client_: Client) -> str:
    """What Redis holds of an unfinished game's seats against its client's tokens: each seat's
    stored token digest (the client's, another, or none), the hash's TTL and the claims."""
    stored = cast("dict[bytes, bytes]", client.hgetall(LAYOUT.seats_key(client_.game_id)))
    seats = {int(seat): digest.decode() for seat, digest in stored.items()}
    mine = {
        seat: hashlib.sha256(token.encode()).hexdigest() for seat, token in client_.tokens.items()
    }
    held = ", ".join(
        f"{seat}: {'ok' if seats.get(seat) == digest else 'none' if seat not in seats else 'other'}"
        for seat, digest in sorted(mine.items())
    )
    ttl = client.ttl(LAYOUT.seats_key(client_.game_id))
    claims = cast(
        "dict[bytes, bytes]", client.hgetall(LAYOUT.game_scoped_key("claims", client_.game_id))
    )
    shown = {k.decode(): v.decode()[:40] for k, v in claims.items() if b":" not in k}
    return f"seats {{{held}}}, seats TTL {ttl}, claims {shown}"


# -- the run ---------------------------------------------------------------------------------


READY_TIMEOUT_S = 180.0
"""Six Python processes importing at once on a loaded 2-core machine took over 60 s to serve."""


async def wait_ready(stack: Stack, http: httpx.AsyncClient) -> None:
    if not await probe(stack, http, time.monotonic() + READY_TIMEOUT_S):
        raise RuntimeError(f"the stack did not get ready\n{stack.tails()}")


async def run_chaos(config: ChaosConfig) -> Report:
    report = Report(config)
    stack = Stack(config)
    started = time.monotonic()
    acks: list[Ack] = []
    stop = asyncio.Event()
    stop_sampling = threading.Event()
    sampling = threading.Thread(target=stack.sample_forever, args=(stop_sampling,), daemon=True)
    stalls = threading.Thread(target=stack.watch_stalls, args=(stop_sampling,), daemon=True)
    try:
        stack.start()
        sampling.start()
        stalls.start()
        async with httpx.AsyncClient(base_url=stack.url) as http:
            await wait_ready(stack, http)
            watcher = asyncio.create_task(sampler(stack, stop))
            report.started_at = time.monotonic()
            watching = asyncio.create_task(watch(stack, report, stop))
            rng = random.Random(config.seed)
            clients: list[Client] = []
            faults = schedule(config)
            end = (
                time.monotonic() + len(faults) * (config.fault_interval + 8) + config.finish_timeout
            )
            faulting = asyncio.Event()
            faulting.set()

            async def worker(number: int) -> None:
                """Games one after the other while the faults last (at least one)."""
                index = number
                while True:
                    client_ = Client(stack, report, acks, index, random.Random(rng.random()))
                    clients.append(client_)
                    await client_.play(http, end)
                    index += config.games
                    if not faulting.is_set() or time.monotonic() > end:
                        return

            players = [asyncio.create_task(worker(i)) for i in range(config.games)]
            await run_faults(stack, report, http, faults)
            faulting.clear()
            await asyncio.gather(*players)
            # A game seen finished may have lost its end in a power cut (everysec): every
            # started game is played again until its stream, not only its client, is over,
            # with its own time: the faults may have taken all of theirs and more on a slow
            # machine (a 662 s run left two such games unplayed: `end` had passed).
            finish = max(end, time.monotonic() + config.finish_timeout)
            await asyncio.gather(*(c.play(http, finish) for c in clients if c.started))
            stop.set()
            await watcher
            await watching
            report.redis_backs = stack.redis_backs
            with stack._lock:
                report.stalls = list(stack.stalls)
            report.service_deaths = stack.deaths
            report.cuts = stack.cuts
            check(stack, report, acks, clients, stack.cuts)
    finally:
        stop.set()
        stop_sampling.set()
        for thread in (sampling, stalls):
            if thread.is_alive():
                thread.join(timeout=5)
        report.duration = time.monotonic() - started
        if not report.ok and config.verbose:
            print(stack.tails(), file=sys.stderr)
        stack.shutdown()
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=ChaosConfig.games)
    parser.add_argument("--rounds", type=int, default=ChaosConfig.rounds)
    parser.add_argument("--durability", choices=("always", "everysec"), default="always")
    parser.add_argument("--interval", type=float, default=ChaosConfig.fault_interval)
    parser.add_argument("--seed", type=int, default=ChaosConfig.seed)
    parser.add_argument("--logs", type=Path, default=None)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    config = ChaosConfig(
        games=args.games,
        rounds=args.rounds,
        durability=args.durability,
        fault_interval=args.interval,
        seed=args.seed,
        logs=args.logs,
        verbose=args.verbose,
    )
    report = asyncio.run(run_chaos(config))
    print(report.format(), flush=True)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
