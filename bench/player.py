"""What players get: the gateway driven as frontends drive it, beside today's bench path and a
reference peer (boardgame.io 0.50.2) measured in the same run, on a chosen topology.

Every service is a separate process group (rules, the board and score projectors together as
``serve all`` runs them, the gateway with its worker processes), on a private Redis with
durable acknowledgements (``appendfsync always``, durability ``always``: a command is answered
once its events are fsynced) or a private Redis Cluster (three masters with a replica each,
durability ``replica``: answered once a replica has the events, ``WAIT 1``). The gateway's
rate limits are off (one load address plays hundreds of games, as a bot or tournament server
does: ``RENATURE_RATE_LIMITS=off``, and ``RENATURE_CONNECTIONS_PER_ADDRESS`` lifted);
``--topology limits=on`` counts every request in its buckets as production does, with every
limit lifted so that none is refused.
The load runs in separate processes too (`bench.loadgen`), each playing its share of the games
over one path:

- ``bus``: today's ``make bench`` path (envelopes onto the command stream, no gateway);
- ``http``: ``POST /games/{id}/commands`` with seat tokens, one keep-alive connection a seat;
- ``ws``: the moves over each seat's live WebSocket, which also pushes every event to every seat.

For each path and number of concurrent games it prints moves per second (set-up requests not
counted), round trip p50/p99, command -> board model p50/p99, the cores each process group kept
busy and its CPU per move, and the commands Redis ran per move (its scripts' own included).
The peer, boardgame.io's own Koa + socket.io server with a grid game with secret hands
(``bench/peer``), is played the same way: every seat its own client, one move in flight per
game, moves decided by the server only.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench import durability, figures, spares, targets
from bench.figures import cpu_seconds, machine_line, machine_ticks, percentile
from bench.processes import (
    Group,
    RedisCounts,
    Redises,
    Stack,
    Topology,
    snapshot,
    start_stack,
)
from devkit.redis_server import free_port

PEER_DIR = Path(__file__).resolve().parent / "peer"
WARMUP_S = 2.0
WINDOW_S = 5.0
SCRIPTS = 60
GAME_COUNTS = (1, 16, 256)


# -- one measurement ---------------------------------------------------------------------------


@dataclass
class Result:
    label: str
    games: int
    rate: float
    round_trips: list[float]
    to_model: list[float]
    cpu: dict[str, float]  # process group -> CPU seconds in the window
    moves: int
    finished: int
    checked: int
    machine: str
    idle: dict[str, float] = field(default_factory=dict)  # cores each group keeps busy idle
    retries: int = 0  # commands sent again after a timeout
    redis_calls: int = 0  # commands Redis ran in the window (0: not counted, a cluster)
    aof_rewrites: int = 0  # AOF rewrites Redis began in the window (a fork writing it all)
    note: str = ""
    unit: str = "move"  # what the load counts: a move, or a game's set-up (``setup``)

    def cpu_per_move_ms(self) -> float:
        return targets.per_move(self, *self.cpu)  # every group, the load's included

    def net_cpu_per_move_ms(self) -> float:
        """CPU per move less what the stack burns with no load at all (its timers and
        idle polls), which dominates the gross figure when few moves are made."""
        spent = sum(max(0.0, cpu - self.idle.get(n, 0.0) * WINDOW_S) for n, cpu in self.cpu.items())
        return spent / max(1, self.moves) * 1e3

    def lines(self) -> list[str]:
        unit = self.unit
        games = (
            f"{self.finished} games finished, {self.checked} checked against their in-process "
            "scores"
            if unit == "move"
            else "no move played"
        )
        out = [
            f"{self.label}, {self.games} concurrent games: {self.rate:,.0f} {unit}s/s ({games}"
            + (f"; {self.retries} commands sent again after a timeout" if self.retries else "")
            + (f"; {self.note}" if self.note else "")
            + ")",
            f"  {'round trip' if unit == 'move' else 'a set-up took'}: {ms(self.round_trips)}",
        ]
        if self.to_model:
            out.append(f"  command -> board model: {ms(self.to_model)}")
        window = WINDOW_S
        busy = ", ".join(f"{name} {cpu / window:.2f}" for name, cpu in self.cpu.items())
        per = ", ".join(
            f"{name} {cpu / max(1, self.moves) * 1e3:.2f}" for name, cpu in self.cpu.items()
        )
        out.append(f"  cores busy: {busy}; total {sum(self.cpu.values()) / window:.2f}")
        out.append(f"  CPU ms per {unit}: {per}; total {self.cpu_per_move_ms():.2f}")
        if self.redis_calls:
            calls = self.redis_calls / max(1, self.moves)
            out.append(f"  Redis commands per {unit} (scripts' own included): {calls:.1f}")
        if self.aof_rewrites:
            out.append(f"  AOF rewrites begun in the window: {self.aof_rewrites}")
        if self.idle:
            out.append(
                f"  CPU ms per {unit} net of the idle stack's own "
                f"({sum(self.idle.values()):.2f} cores idle): {self.net_cpu_per_move_ms():.2f}"
            )
        out.append(self.machine)
        return out


def unit_of(mode: str) -> str:
    """What a load of ``mode`` counts: a game's set-up (``setup``), else a move."""
    return "set-up" if mode == "setup" else "move"


def ms(samples: list[float]) -> str:
    return figures.ms(samples, digits=2)


def start_loads(
    mode: str, games: int, topology: Topology, stack: Stack, gateway_port: int
) -> tuple[list[Group], dict[int, str]]:
    """The load processes, each given its share of the games; and, by a process's pid, the
    file it writes its result to."""
    loads: list[Group] = []
    configs: dict[int, str] = {}
    share = [list(range(i, games, topology.load)) for i in range(topology.load)]
    share = [s for s in share if s]
    for number, indices in enumerate(share):
        config = {
            "mode": mode,
            "host": "127.0.0.1",
            "port": gateway_port,
            "redis_url": stack.redis_url,
            "games": indices,
            "label": f"{mode}{games}-{number}",
            "scripts": SCRIPTS,
            "spare_moves": spares.most_moves(topology.instances, len(share), WARMUP_S + WINDOW_S),
        }
        result_file = stack.workdir / f"load-{mode}-{games}-{number}.json"
        config["result_file"] = str(result_file)
        log = stack.workdir / f"load-{mode}-{games}-{number}.err"
        process = subprocess.Popen(
            [sys.executable, "-m", "bench.loadgen"],
            env={**os.environ, **stack.env},  # the services' settings (their command streams)
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log.open("wb"),
            start_new_session=True,
        )
        assert process.stdin is not None
        process.stdin.write(json.dumps(config).encode() + b"\n")
        process.stdin.flush()
        loads.append(Group("load", process, log))
        configs[process.pid] = str(result_file)
    return loads, configs


@dataclass
class Window:
    """What one measured window saw: CPU seconds by process group before and after it, the
    machine's line, and each load process's result."""

    before: dict[str, float]
    after: dict[str, float]
    machine: str
    results: list[dict[str, Any]]
    redis_calls: int = 0
    """Commands Redis ran in the window (scripts' own commands too); 0 on a cluster."""
    aof_rewrites: int = 0
    """AOF rewrites Redis began in the window; 0 on a cluster."""


def measure_window(
    loads: list[Group], configs: dict[int, str], stack: Stack, redis_pids: dict[str, int]
) -> Window:
    """Once every load process is ready, one window after the warm-up, timed alike for all."""
    for group in loads:
        assert group.process.stdout is not None
        if group.process.stdout.readline().strip() != b"ready":
            raise RuntimeError(f"a load process failed:\n{group.tail()}")
    stack.rewrite_done()  # no fork of before the window ends in it
    start = time.monotonic() + WARMUP_S
    for group in loads:
        assert group.process.stdin is not None
        group.process.stdin.write(f"go {start} {start + WINDOW_S}\n".encode())
        group.process.stdin.flush()
    time.sleep(max(0.0, start - time.monotonic()))
    counts = RedisCounts(stack.redis_url)
    ticks = machine_ticks()
    before = snapshot([*stack.groups, *loads], redis_pids)
    time.sleep(max(0.0, start + WINDOW_S - time.monotonic()))
    after = snapshot([*stack.groups, *loads], redis_pids)
    machine = machine_line(ticks)
    redis_calls, aof_rewrites = counts.since()
    stack.check()
    results = []
    for group in loads:
        assert group.process.stdout is not None
        line = group.process.stdout.readline()
        if line.strip() != b"done":
            raise RuntimeError(f"a load process died:\n{group.tail()}")
        results.append(json.loads(Path(configs[group.process.pid]).read_text()))
    return Window(before, after, machine, results, redis_calls, aof_rewrites)


def run_load(
    mode: str,
    games: int,
    topology: Topology,
    stack: Stack,
    gateway_port: int,
    redis_pids: dict[str, int],
    label: str,
) -> Result:
    """Start the load processes, wait for them to be ready, measure one window."""
    loads, configs = start_loads(mode, games, topology, stack, gateway_port)
    try:
        window = measure_window(loads, configs, stack, redis_pids)
    finally:
        for group in loads:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group.process.pid, signal.SIGKILL)
            group.process.wait()
    results = window.results
    failures = [r["failure"] for r in results if r["failure"]]
    if failures:
        raise RuntimeError(f"{mode} with {games} games failed: {failures[0]}")
    cpu = {name: window.after[name] - window.before.get(name, 0.0) for name in window.after}
    moves = sum(r["moves"] for r in results)
    return Result(
        unit=unit_of(mode),
        label=label,
        games=games,
        rate=moves / WINDOW_S,
        round_trips=[x for r in results for x in r["round_trips"]],
        to_model=[x for r in results for x in r["to_model"]],
        cpu=cpu,
        moves=moves,
        finished=sum(r["games_finished"] for r in results),
        note=targets.window_note(results),
        checked=sum(r["checked"] for r in results),
        machine=window.machine,
        retries=sum(r.get("retries", 0) for r in results),
        redis_calls=window.redis_calls,
        aof_rewrites=window.aof_rewrites,
    )


IDLE_S = 3.0


def idle_cores(stack: Stack, redis_pids: dict[str, int]) -> dict[str, float]:
    """The cores each process group keeps busy with no load at all (timers, idle polls)."""
    time.sleep(1.0)  # start-up work done
    before = snapshot(stack.groups, redis_pids)
    time.sleep(IDLE_S)
    after = snapshot(stack.groups, redis_pids)
    return {name: (after[name] - before.get(name, 0.0)) / IDLE_S for name in after}


# -- the peer ----------------------------------------------------------------------------------


def peer_ready() -> str | None:
    """Install the peer's packages when missing (npm ci); None when ready, else why not."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return "node/npm are not installed"
    if not (PEER_DIR / "node_modules" / "boardgame.io").is_dir():
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=PEER_DIR,
            capture_output=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            return f"npm ci failed: {done.stderr.decode(errors='replace')[-300:]}"
    return None


def run_peer(games: int, mode: str = "play") -> Result:
    """boardgame.io's server and its client playing ``games`` at once (``setup``: setting
    them up and leaving them, `bench/peer/client.js`) for one window."""
    node = shutil.which("node") or "node"
    port = free_port()
    server = subprocess.Popen(
        [node, "server.js", str(port)],
        cwd=PEER_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        if server.stdout is None or not server.stdout.readline().startswith(b"ready"):
            raise RuntimeError("the boardgame.io server did not start")
        data, cpu, machine = _peer_window(node, port, games, server.pid, mode)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
        server.wait()
    return Result(
        unit=unit_of(mode),
        label="boardgame.io 0.50.2 (in memory, socket.io)",
        games=games,
        rate=data["moves"] / WINDOW_S,
        round_trips=data["round_trips"],
        to_model=[],
        cpu=cpu,
        moves=data["moves"],
        finished=data["games_finished"],
        checked=0,
        machine=machine,
        note=targets.window_note([data], data.get("failures", 0)),
    )


def _peer_window(
    node: str, port: int, games: int, server: int, mode: str
) -> tuple[dict[str, Any], dict[str, float], str]:
    """The peer's client playing ``games`` against the server (pid ``server``) for one window:
    its figures, the CPU seconds of server and client, the machine's line."""
    pool = spares.peer_pool(games, WARMUP_S + WINDOW_S)  # the same bound as ours
    client = subprocess.Popen(
        [node, "client.js", *map(str, (port, games, WARMUP_S, WINDOW_S, pool)), mode],
        cwd=PEER_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    if client.stdout is None or client.stdout.readline().strip() != b"ready":  # all set up
        raise RuntimeError("the peer's client stopped before its games were set up")
    time.sleep(WARMUP_S)
    ticks = machine_ticks()
    before = {"server": cpu_seconds(server), "client": cpu_seconds(client.pid)}
    time.sleep(WINDOW_S)
    after = {"server": cpu_seconds(server), "client": cpu_seconds(client.pid)}
    machine = machine_line(ticks)
    out, err = client.communicate(timeout=60)
    if client.returncode != 0:
        raise RuntimeError(f"the peer's client failed: {err.decode(errors='replace')[-500:]}")
    cpu = {f"peer {name}": after[name] - before[name] for name in after}
    return json.loads(out), cpu, machine


# -- the run -----------------------------------------------------------------------------------


def measure_topology(
    topology: Topology, modes: tuple[str, ...], counts: tuple[int, ...]
) -> dict[tuple[str, int], Result]:
    results: dict[tuple[str, int], Result] = {}
    workdir = Path(tempfile.mkdtemp(prefix="renature-bench-player-"))
    try:
        with Redises(topology.redis) as redis:
            stack, port = start_stack(topology, redis.url, workdir)
            try:
                idle = idle_cores(stack, redis.pids())
                labels = {
                    "bus": "bench path (command stream, no gateway)",
                    "http": "gateway HTTP (seat tokens)",
                    "ws": "gateway WebSocket (live channel)",
                    "setup": "game set-up (create, seats, start, every seat's live socket)",
                }
                for mode in modes:
                    for games in counts:
                        try:
                            result = run_load(
                                mode, games, topology, stack, port, redis.pids(), labels[mode]
                            )
                        except RuntimeError as error:  # reported; the other runs go on
                            print(f"{labels[mode]}, {games} concurrent games: FAILED: {error}")
                            for group in stack.groups:
                                for line in group.errors():
                                    print(f"  {group.name}: {line[:600]}")
                            continue
                        result.idle = idle
                        results[(mode, games)] = result
                        print("\n".join(result.lines()), flush=True)
            finally:
                stack.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return results


def summary(
    results: dict[tuple[str, int], Result], peer: dict[int, Result], counts: tuple[int, ...]
) -> None:
    """The side-by-side table, the ratios and the speed targets, met or missed."""

    def cell(result: Result | None) -> str:
        if result is None:
            return "-"
        return f"{result.rate:,.0f}/s p50 {percentile(result.round_trips, 50) * 1e3:.2f} ms"

    print("\nmoves/s and round trip p50, same run, same machine:")
    print(
        "| games | boardgame.io | bench path | gateway HTTP | gateway WS | HTTP/bench | WS/bench |"
    )
    print("|---|---|---|---|---|---|---|")
    for games in counts:
        bus, http, ws = (results.get((m, games)) for m in ("bus", "http", "ws"))
        ratio = [
            f"{r.rate / bus.rate:.2f}" if r is not None and bus is not None and bus.rate else "-"
            for r in (http, ws)
        ]
        print(
            f"| {games} | {cell(peer.get(games))} | {cell(bus)} | {cell(http)} | {cell(ws)} "
            f"| {ratio[0]} | {ratio[1]} |"
        )
    print("\ntargets (a move for a millisecond of CPU; boardgame.io in memory, this run):")
    for target in targets.player_targets(results, peer, durability.write_cost):
        print(target)


def run(
    topology: Topology | None = None,
    counts: tuple[int, ...] = GAME_COUNTS,
    modes: tuple[str, ...] = ("bus", "http", "ws"),
    with_peer: bool = True,
) -> dict[tuple[str, int], Result]:
    topology = topology or Topology()
    print("== the player's path (gateway) beside the bench path and boardgame.io ==")
    print(f"topology: {topology.describe()}; {os.cpu_count()} cores")
    results = measure_topology(topology, modes, counts)
    peer: dict[int, Result] = {}
    if with_peer:
        why_not = peer_ready()
        if why_not is not None:
            print(f"boardgame.io: not measured ({why_not})")
        else:
            for games in counts:
                try:
                    peer[games] = run_peer(games)
                except (RuntimeError, subprocess.TimeoutExpired, ValueError) as error:
                    print(f"boardgame.io, {games} concurrent games: FAILED: {error}")
                    continue
                print("\n".join(peer[games].lines()), flush=True)
    summary(results, peer, counts)
    return results


def run_scaling(topology: Topology, counts: tuple[int, ...], modes: tuple[str, ...]) -> None:
    """The topology against one instance of each service (same Redis kind, same load
    processes): scaling efficiency = rate / (instances x the one-instance rate); on a cluster
    also the same topology on one Redis, and the cluster's share of its rate."""
    one = Topology(load=topology.load, redis=topology.redis)
    print("== scaling: the topology against one instance of each service ==")
    print(f"one instance: {one.describe()}; {os.cpu_count()} cores")
    base = measure_topology(one, modes, counts)
    print(f"topology: {topology.describe()}")
    scaled = measure_topology(topology, modes, counts)
    single = None
    if topology.redis == "cluster":  # the same on one Redis, for the cluster's share
        same = replace(topology, redis="single")
        print(f"the same on one Redis: {same.describe()}")
        single = measure_topology(same, modes, counts)
    n = topology.instances
    for key, result in scaled.items():
        rate_1 = base[key].rate
        efficiency = result.rate / (n * rate_1) if rate_1 else float("nan")
        print(
            f"  {result.label}, {key[1]} games: {rate_1:,.0f}/s with one instance, "
            f"{result.rate:,.0f}/s with {n}: scaling efficiency {efficiency:.2f}"
        )
        cluster = topology.redis == "cluster"
        print(f"  {targets.scaling_target(n, cluster, result.rate, efficiency)}")
        if single is not None:
            print(f"  {targets.cluster_target(result.rate, single[key].rate, n)}")
