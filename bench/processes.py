"""The benchmark's processes: the topology of a run, process groups and their CPU, the services'
stack (every service a process group) on a private Redis or Redis Cluster, and waiting for it
to answer over HTTP."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from bench.figures import cpu_parts, stat_cpu, stat_fields
from devkit.redis_server import RedisServer, free_port
from eventstore.keys import command_streams_for
from eventstore.redis_client import is_cluster_url
from gameserver.runtime.shares import instance_environments, shared_environment
from gameserver.runtime.supervisor import PROJECTORS

READY_TIMEOUT_S = 180.0
REWRITE_WAIT_S = 60.0
"""How long a window waits at most for an AOF rewrite under way to end (`Stack.rewrite_done`)."""


@dataclass(frozen=True)
class Topology:
    """Instances of each service, load processes, single Redis or cluster."""

    rules: int = 1
    models: int = 1  # the board and score projectors in one consumer (what `serve all` runs)
    board: int = 0  # the board projector alone
    score: int = 0  # the score projector alone
    gateway: int = 1  # worker processes of one gateway (uvicorn --workers)
    load: int = 1
    redis: str = "single"  # or "cluster"
    limits: bool = False
    """The gateway's rate limits on, every bucket lifted so that nothing is refused (one load
    address plays every game): each request still pays for being counted, as in production."""
    shares: bool = True
    """Several instances of a consumer each read a share of the partitions (``K/N``: rules
    instances their command streams, `command_streams` of them; projectors their feeds),
    so that a game's commands and events always meet the same instance and its warm cache;
    ``shares=off``: every instance reads every stream in the one group (a game's moves go to
    whichever instance reads first)."""

    @classmethod
    def parse(cls, text: str) -> Topology:
        """``rules=2,models=2,gateway=2,load=2,redis=cluster,limits=on`` (``models=0,board=2,
        score=2``: the projectors apart); ``all=N`` sets every service to N instances."""
        values: dict[str, Any] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            name, _, value = part.partition("=")
            if name == "all":
                for service in ("rules", "models", "gateway"):
                    values[service] = int(value)
            elif name == "redis":
                if value not in ("single", "cluster"):
                    raise ValueError("redis=single or redis=cluster")
                values[name] = value
            elif name in ("limits", "shares"):
                if value not in ("on", "off"):
                    raise ValueError(f"{name}=on or {name}=off")
                values[name] = value == "on"
            elif name in ("rules", *PROJECTORS, "gateway", "load"):
                values[name] = int(value)
            else:
                raise ValueError(f"unknown topology item {name!r}")
        return cls(**values)

    def describe(self) -> str:
        redis = (
            "Redis Cluster (3 masters + 3 replicas, WAIT 1)"
            if self.redis == "cluster"
            else "one Redis (AOF, appendfsync always)"
        )
        projectors = ", ".join(f"{name} x{count}" for name, count in self.projectors if count)
        return (
            f"rules x{self.rules}, {projectors or 'no projector'}, "
            f"gateway x{self.gateway} workers, load x{self.load} processes, {redis}, "
            f"rate limits {'on (lifted: counted, never refused)' if self.limits else 'off'}"
            + (self._sharing() if self.instances > 1 else "")
        )

    def _sharing(self) -> str:
        if not self.shares:
            return ", every instance reading every stream"
        return (
            f", each instance its share of the partitions ({self.command_streams} command streams)"
        )

    @property
    def command_streams(self) -> int:
        """Command streams for the rules instances to share out (`command_streams_for`)."""
        return command_streams_for(self.rules)

    def share_env(self, service: str, instance: int) -> dict[str, str]:
        """What instance ``instance`` of ``service`` is told to read: its share (``K/N``) of
        the command streams (rules) or of the feeds (projectors), when there are several, as
        ``renature serve all --instances N`` tells its own (`shares.instance_environments`)."""
        each = instance_environments(service, getattr(self, service, 1))
        return each[instance] if self.shares and len(each) > 1 else {}

    @property
    def projectors(self) -> list[tuple[str, int]]:
        """Instances of each projector service (`supervisor.PROJECTORS`)."""
        return [(name, getattr(self, name)) for name in PROJECTORS]

    @property
    def instances(self) -> int:
        """Instances of each service, when they are all alike (for scaling efficiency)."""
        return max(self.rules, self.models, self.board, self.score, self.gateway)


def group_cpu(pgid: int) -> float:
    """CPU seconds of every live process of a process group (a gateway and its workers), each
    one's ended children's included (`figures.stat_cpu`)."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        fields = stat_fields(stat)
        if fields is not None and int(fields[2]) == pgid:
            total += stat_cpu(fields)
    return total


@dataclass
class Group:
    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def cpu(self) -> float:
        return group_cpu(self.process.pid)

    def alive(self) -> bool:
        return self.process.poll() is None

    def tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-15:])

    def errors(self, most: int = 3) -> list[str]:
        """The last ``most`` errors of its log, each its event and the end of its traceback
        (why a run failed)."""
        found = []
        for line in self.log.read_text(errors="replace").splitlines():
            if '"level": "error"' not in line:
                continue
            try:
                record = json.loads(line)
            except ValueError:
                found.append(line[-300:])
                continue
            trace = str(record.get("exception", "")).strip().splitlines()[-3:]
            said = [str(record["error"])] if record.get("error") else []
            found.append(f"{record.get('event')}: {' | '.join([*said, *map(str.strip, trace)])}")
        return found[-most:]


FORKS = "redis forks"
"""The group of Redis's forks (its AOF rewrites, a replica's full sync): their CPU, counted in
Redis's once a fork has ended, is shown apart, since a window holds the whole of a rewrite that
ended in it or none of it (`Stack.rewrite_done`)."""


def snapshot(groups: list[Group], extra: dict[str, int]) -> dict[str, float]:
    """CPU seconds so far of every group, and of each Redis process in ``extra`` (by name), its
    ended forks' in `FORKS`."""
    cpu: dict[str, float] = {}
    for group in groups:
        cpu[group.name] = cpu.get(group.name, 0.0) + group.cpu()
    for name, pid in extra.items():
        own, forks = cpu_parts(pid)
        cpu[name] = cpu.get(name, 0.0) + own
        cpu[FORKS] = cpu.get(FORKS, 0.0) + forks
    return cpu


@dataclass
class Stack:
    redis_url: str
    workdir: Path
    env: dict[str, str]
    groups: list[Group] = field(default_factory=list)

    def start(self, name: str, *args: str, env: Mapping[str, str] | None = None) -> Group:
        log = self.workdir / f"{name}-{len(self.groups)}.log"
        env = {**os.environ, **self.env, **(env or {}), "REDIS_URL": self.redis_url}
        group = Group(name, serve(log, env, name, *args), log)
        self.groups.append(group)
        return group

    def check(self) -> None:
        for group in self.groups:
            if not group.alive():
                raise RuntimeError(f"{group.name} exited early:\n{group.tail()}")

    def stop(self) -> None:
        stop_groups(self.groups)

    def rewrite_done(self, timeout_s: float = REWRITE_WAIT_S) -> None:
        """Until Redis rewrites no AOF (``timeout_s`` at most; at once on a cluster): a rewrite
        is a fork whose CPU counts in Redis's when it ends (`figures.stat_cpu`), so one begun
        before a window (the spares' set-ups grow the AOF) and ended in it counted all of its
        work as the window's moves' (Redis 0.62 ms a move over the WebSocket at 256 games in
        one `make bench`, against 0.16 in a window without). One begun inside a window is
        counted and said beside its figures, as before."""
        if is_cluster_url(self.redis_url):
            return
        client = redis.Redis.from_url(self.redis_url)
        deadline = time.monotonic() + timeout_s
        try:
            while time.monotonic() < deadline:
                state = client.info("persistence")
                if not state["aof_rewrite_in_progress"] and not state["aof_rewrite_scheduled"]:
                    return
                time.sleep(0.05)
        finally:
            client.close()


def stop_groups(groups: list[Group]) -> None:
    stop_processes([group.process for group in groups], grace_s=8)


def serve(log: Path, env: Mapping[str, str], *args: str) -> subprocess.Popen[bytes]:
    """``renature serve ARGS`` (one service, or a gateway with its workers) in a process group
    of its own, so that `stop_processes` ends it whole; its output goes to ``log``. Each
    process names its own consumer: ``RENATURE_CONSUMER`` is not passed on."""
    env = {key: value for key, value in env.items() if key != "RENATURE_CONSUMER"}
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "gameserver.runtime.supervisor", *args],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def stop_processes(processes: Sequence[subprocess.Popen[bytes]], grace_s: float) -> None:
    """SIGTERM to each process group, then SIGKILL to any group still running ``grace_s``
    later."""
    for process in processes:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for process in processes:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def wait_http(port: int, path: str, timeout: float = READY_TIMEOUT_S) -> None:
    """Until ``GET path`` answers 200 on 127.0.0.1:port."""
    import http.client

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", path)
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"nothing answered GET {path} on port {port} within {timeout:g} s")


class Redises:
    """A private Redis, or a private Redis Cluster, for one run."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.single: RedisServer | None = None
        self.cluster: Any = None

    def __enter__(self) -> Redises:
        if self.kind == "cluster":
            from devkit.redis_cluster import RedisCluster as ClusterFixture

            self.cluster = ClusterFixture(masters=3, replicas=1, appendonly=True).start()
        else:
            self.single = RedisServer(appendonly=True, appendfsync="always").start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.single is not None:
            self.single.cleanup()
        if self.cluster is not None:
            self.cluster.cleanup()

    @property
    def url(self) -> str:
        return self.cluster.url if self.cluster is not None else self.single.url  # type: ignore[union-attr]

    def pids(self) -> dict[str, int]:
        if self.cluster is not None:
            return {"redis": 0, **{f"redis#{i}": pid for i, pid in enumerate(self.cluster.pids())}}
        assert self.single is not None
        return {"redis": self.single.pid}


class RedisCounts:
    """The commands one Redis runs from now on (``INFO commandstats``, every command a script
    ran counted too), and the AOF rewrites it begins; nothing is counted on a cluster
    (``since`` is 0, 0)."""

    def __init__(self, url: str) -> None:
        self.client = None if is_cluster_url(url) else redis.Redis.from_url(url)
        self.start = self._totals()

    def _totals(self) -> tuple[int, int]:
        if self.client is None:
            return 0, 0
        stats = self.client.info("commandstats")
        calls = sum(int(entry["calls"]) for name, entry in stats.items() if name != "cmdstat_info")
        return calls, int(self.client.info("persistence")["aof_rewrites"])

    def since(self) -> tuple[int, int]:
        calls, rewrites = self._totals()
        if self.client is not None:
            self.client.close()
        return calls - self.start[0], rewrites - self.start[1]


LIFTED_LIMITS = {
    "RENATURE_RATE_LIMITS": "on",
    **{
        f"RENATURE_LIMIT_{bucket.upper()}": "1000000/second"
        for bucket in ("create", "seat", "read", "refused", "refused_per_address", "live")
    },
    "RENATURE_LIMIT_LIVE_PER_ADDRESS": "1000000",
    "RENATURE_LIMIT_LIVE_PER_GAME": "1000000",
}
"""``limits=on``: the limits counted on every request but so high that none is refused."""


def start_stack(topology: Topology, redis_url: str, workdir: Path) -> tuple[Stack, int]:
    env = {
        "RENATURE_ALLOW_CHOSEN_SEEDS": "1",
        "RENATURE_GATEWAY_WORKERS": str(topology.gateway),
        "RENATURE_RATE_LIMITS": "off",
        # One load address holds a keep-alive connection per seat of every game: the front
        # door's per-address bound (gateway/front_door.py) is lifted for it, as the rate limits.
        "RENATURE_CONNECTIONS_PER_ADDRESS": "1000000",
        "RENATURE_DURABILITY": "replica" if topology.redis == "cluster" else "always",
        "RENATURE_DURABILITY_REPLICAS": "1",
    }
    if topology.limits:
        env.update(LIFTED_LIMITS)
    if topology.shares:  # the command streams to share out, as `serve all --instances` has them
        env.update(shared_environment(topology.rules, env))
    stack = Stack(redis_url, workdir, env)
    port = free_port()
    try:
        _start_services(stack, topology, port)
    except BaseException:  # a stack that did not come up is stopped, not left running
        stack.stop()
        raise
    return stack, port


def _start_services(stack: Stack, topology: Topology, port: int) -> None:
    """Every service of ``topology``, started and awaited (the gateway on ``port``)."""
    for name, count in topology.projectors:
        for k in range(count):
            stack.start(name, env=topology.share_env(name, k))
    for k in range(topology.rules):
        stack.start("rules", env=topology.share_env("rules", k))
    stack.start("gateway", "--port", str(port))
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        stack.check()
        try:
            wait_http(port, "/healthz", timeout=0.5)
            break
        except RuntimeError:
            if time.monotonic() > deadline:
                raise
    started = "FastStream app started successfully"
    while not all(
        started in g.log.read_text(errors="replace") for g in stack.groups if g.name == "rules"
    ):
        stack.check()
        if time.monotonic() > deadline:
            raise RuntimeError("the rules service did not start")
        time.sleep(0.1)
