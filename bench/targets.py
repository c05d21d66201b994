"""The speed targets of the players' path ("a move for a millisecond of CPU"), one ``--target``
line each.

Every target is printed as met, MISSED, or not measured (with why: a run left out, no peer),
from the results of one player's-path run (`bench.player`):

- CPU per move, services and Redis together (not the load processes), over HTTP: at most
  1.0 ms at 256 games and 2.5 ms at one game;
- gateway CPU per move: at most 0.25 ms over the WebSocket and 0.4 ms over HTTP (at the most
  concurrent games measured on that path);
- the board and score projectors together: at most 0.3 ms per move at 256 games;
- one game alone, WebSocket round trip p50: at most 1.5 ms (beside it the bench path's at one
  game and what a durable write costs on the machine, `solo_target`);
- moves per second through the gateway at 16 and 256 games: at least 1.5x boardgame.io's
  (beside it what that asks of the machine's cores, the bench path's rate, and the most a
  core for each process could carry at the run's CPU per move: `_ceiling`);
- 8 instances of each service: at least 15,000 moves/s with scaling efficiency at least 0.8
  (`scaling_targets`, from ``--topology all=8``; the cluster at least 0.8 of one Redis).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from redis.exceptions import RedisError

from bench.figures import percentile
from gameserver.runtime.supervisor import PROJECTORS


class Measured(Protocol):
    """What the targets read of a run's result (`bench.player.Result`)."""

    label: str
    rate: float
    round_trips: list[float]
    cpu: dict[str, float]
    moves: int
    note: str  # what the window held besides moves (`ended_in`, `window_note`)


SERVICES_CPU_MS = {256: 1.0, 1: 2.5}
GATEWAY_CPU_MS = {"ws": 0.25, "http": 0.4}
PROJECTORS_CPU_MS = 0.3
SOLO_WS_P50_MS = 1.5
PEER_SPEEDUP = 1.5
SCALED_INSTANCES = 8
SCALED_RATE = 15_000
SCALED_EFFICIENCY = 0.8
CLUSTER_SHARE = 0.8
PEER_SERVER = "peer server"
"""The CPU group of boardgame.io's server in the peer's runs (`bench.player`)."""


def line(name: str, bound: str, met: bool | None, figure: str, *, judged: bool = True) -> str:
    """``--target <name> <bound>: met|MISSED|not measured (<figure>)``; ``judged=False``: a
    figure measured on another topology than the target's, shown as ``not judged``."""
    word = "not measured" if met is None else ("met" if met else "MISSED")
    if not judged:
        figure = f"{figure}; judged with {SCALED_INSTANCES} instances of each service"
        word = "not judged"
    return f"--target {name} {bound}: {word} ({figure})"


def ended_in(games: int, set_ups: int = 0) -> str:
    """What a window held besides moves: the ``set_ups`` that fell inside it, where the spares
    ran out (`bench.spares`), which its CPU counts as moves; else the ``games`` that ended inside
    it, each followed by a spare set up before the window (nothing but moves, then)."""
    if set_ups:
        return f"{counted(set_ups, 'set-up')} inside the window (the spares ran out)"
    if games:
        return (
            f"{counted(games, 'game')} ended inside the window, each followed by a spare set up "
            "before it"
        )
    return ""


def counted(number: int, thing: str) -> str:
    """``1 game``, ``2 games``."""
    return f"{number} {thing}{'' if number == 1 else 's'}"


def window_note(results: Iterable[Mapping[str, Any]], abandoned: int = 0) -> str:
    """The note of a run (`Measured.note`) from the results of its load processes (or the
    peer's client): what its window held (`ended_in`), and the games abandoned after a move
    without an answer in 10 s (the peer's client gives them up and starts another)."""
    results = list(results)
    held = ended_in(
        sum(result.get("ended_in_window", 0) for result in results),
        sum(result.get("set_ups_in_window", 0) for result in results),
    )
    gave_up = f"{counted(abandoned, 'game')} abandoned: a move without an answer in 10 s"
    return "; ".join(part for part in (held, gave_up if abandoned else "") if part)


def per_move(result: Measured, *groups: str) -> float:
    """CPU ms per move of these process groups (all but the load processes when none named)."""
    names = groups or tuple(name for name in result.cpu if name != "load")
    return sum(result.cpu.get(name, 0.0) for name in names) / max(1, result.moves) * 1e3


def breakdown(result: Measured) -> str:
    return ", ".join(f"{name} {per_move(result, name):.2f}" for name in sorted(result.cpu))


def player_targets(
    results: Mapping[tuple[str, int], Measured],
    peer: Mapping[int, Measured],
    disk: Callable[[], tuple[float, float]] | None = None,
) -> list[str]:
    """A ``--target`` line per figure the player's-path run can measure; ``disk`` measures
    what a durable write costs on this machine (`bench.durability.write_cost`), said beside
    the round trip of one game alone (measured only where that was)."""
    out = []
    for games, bound in SERVICES_CPU_MS.items():
        http = results.get(("http", games))
        out.append(
            line(
                f"services-cpu-per-move-http-{games}-games",
                f"<= {bound:.1f} ms",
                None if http is None else per_move(http) <= bound,
                "no HTTP run at this count"
                if http is None
                else f"{per_move(http):.2f} ms; {breakdown(http)} (load not counted)",
            )
        )
    out.extend(gateway_target(results, mode) for mode in GATEWAY_CPU_MS)
    out.append(projector_target(results))
    out.append(solo_target(results, disk))
    out.extend(peer_target(results, peer, games) for games in (16, 256))
    out.append(
        line(
            f"scaled-{SCALED_INSTANCES}-instances",
            f">= {SCALED_RATE:,} moves/s, efficiency >= {SCALED_EFFICIENCY}",
            None,
            f"run --topology all={SCALED_INSTANCES},load=16 --games 1024",
        )
    )
    out.append(cluster_target(None, None))
    return out


def gateway_target(results: Mapping[tuple[str, int], Measured], mode: str) -> str:
    """The gateway's CPU per move on ``mode``'s path, at the most games measured on it (with
    what else its window held: `ended_in`)."""
    bound = GATEWAY_CPU_MS[mode]
    most = max((g for m, g in results if m == mode), default=None)
    run = None if most is None else results[(mode, most)]
    figure = None if run is None else per_move(run, "gateway")
    return line(
        f"gateway-cpu-per-move-{mode}",
        f"<= {bound:.2f} ms",
        None if figure is None else figure <= bound,
        f"no {mode} run"
        if run is None
        else f"{figure:.2f} ms at {most} games" + (f"; {run.note}" if run.note else ""),
    )


def solo_target(
    results: Mapping[tuple[str, int], Measured],
    disk: Callable[[], tuple[float, float]] | None = None,
) -> str:
    """One game alone over the WebSocket, p50 of the round trip; beside it, where measured,
    the bench path's at one game (the same services and Redis without the gateway) and what
    this machine's disk adds to each of the two durable writes a move waits for (``disk``
    measures it, only where there is a figure to set it beside)."""
    solo, bus = results.get(("ws", 1)), results.get(("bus", 1))
    name, bound = "solo-ws-round-trip-p50", f"<= {SOLO_WS_P50_MS:.1f} ms"
    if solo is None:
        return line(name, bound, None, "no WebSocket run at one game")
    p50 = percentile(solo.round_trips, 50) * 1e3
    figure = [f"{p50:.2f} ms"]
    if bus is not None:
        figure.append(f"the bench path, no gateway: {percentile(bus.round_trips, 50) * 1e3:.2f} ms")
    if disk is not None:
        figure.append(_durable_write(disk))
    return line(name, bound, p50 <= SOLO_WS_P50_MS, "; ".join(figure))


def _durable_write(disk: Callable[[], tuple[float, float]]) -> str:
    """What ``disk`` measured, or why it could not (the target's line is printed all the
    same)."""
    try:
        synced, unsynced = disk()
    except (OSError, RuntimeError, RedisError) as error:
        return f"a durable write not measured ({type(error).__name__}: {error})"
    return (
        f"one durable write here: {synced:.2f} ms p50 against {unsynced:.2f} ms unsynced "
        "(a move waits for two, one after the other)"
    )


def projector_target(results: Mapping[tuple[str, int], Measured]) -> str:
    found = [results[(m, 256)] for m in ("http", "ws", "bus") if (m, 256) in results]
    figure = min((per_move(r, *PROJECTORS) for r in found), default=None)
    return line(
        "projectors-cpu-per-move-256-games",
        f"<= {PROJECTORS_CPU_MS:.1f} ms",
        None if figure is None else figure <= PROJECTORS_CPU_MS,
        "no run at 256 games" if figure is None else f"{figure:.2f} ms, board and score models",
    )


def peer_target(
    results: Mapping[tuple[str, int], Measured],
    peer: Mapping[int, Measured],
    games: int,
    cores: int | None = None,
) -> str:
    """Moves per second through the gateway (its faster path) against boardgame.io's at
    ``games``; beside the ratio, what it asks of this machine's ``cores`` (`_ceiling`)."""
    found = [results[(m, games)] for m in ("http", "ws") if (m, games) in results]
    best = max(found, key=lambda r: r.rate) if found else None
    name, bound = f"gateway-vs-boardgame.io-{games}-games", f">= {PEER_SPEEDUP}x"
    if best is None or games not in peer or not peer[games].rate:
        why = "no gateway run" if best is None else "no boardgame.io figure (--no-peer, no node)"
        return line(name, bound, None, why)
    theirs = peer[games]
    speedup = best.rate / theirs.rate
    figure = f"{speedup:.2f}x: {best.rate:,.0f}/s {best.label} vs {theirs.rate:,.0f}/s"
    ceiling = _ceiling(best, results.get(("bus", games)), theirs, cores or os.cpu_count() or 1)
    return line(name, bound, speedup >= PEER_SPEEDUP, f"{figure}; {ceiling}")


def _ceiling(best: Measured, bus: Measured | None, theirs: Measured, cores: int) -> str:
    """What the ratio asks of the machine: the CPU a move may take in every process, the
    load's included, for the rate it needs with every core busy, against what the gateway's
    path spent; the bench path's rate in the same run (the services and Redis without the
    gateway: the most a gateway that cost nothing could reach); what a core for each process
    would allow (`_core_each`); and how busy boardgame.io's server was (one thread: a core at
    most) and what its CPU a move would allow it on a core of its own."""
    needed = PEER_SPEEDUP * theirs.rate
    budget, spent = cores / needed * 1e3, per_move(best, *best.cpu)  # every group, the load's
    parts = [
        f"{PEER_SPEEDUP}x is {needed:,.0f}/s: with all {cores} cores busy at most {budget:.2f} "
        f"ms of CPU a move in every process, the load's included, against {spent:.2f}"
    ]
    if bus is not None:
        parts.append(
            f"the bench path, no gateway: {bus.rate:,.0f}/s ({bus.rate / theirs.rate:.2f}x), "
            f"{per_move(bus, *bus.cpu):.2f} ms"
        )
    if best.cpu and best.moves:
        parts.append(_core_each(best, theirs))
    server = theirs.cpu.get(PEER_SERVER)
    if server and theirs.moves:
        busy = server / (theirs.moves / theirs.rate)
        alone = 1e3 / per_move(theirs, PEER_SERVER)
        parts.append(f"boardgame.io's server {busy:.2f} cores busy, at most {alone:,.0f}/s")
    return "; ".join(parts)


def _core_each(best: Measured, theirs: Measured) -> str:
    """The most a machine with a core for each process could carry at this run's CPU per
    move (each group is one process on the players' path): its busiest process's share, a
    bound and not a measurement (boardgame.io's server's is beside it: `_ceiling`)."""
    busiest = max(best.cpu, key=lambda name: best.cpu[name])
    spent = per_move(best, busiest)
    alone = 1e3 / max(spent, 1e-9)
    return (
        f"a core for each process: at most {alone:,.0f}/s ({alone / theirs.rate:.2f}x), the "
        f"busiest {busiest} at {spent:.2f} ms a move"
    )


def scaling_target(instances: int, cluster: bool, rate: float, efficiency: float) -> str:
    """The scale-out target of one scaled measurement (``--topology all=N``): met or missed
    only with 8 instances on one Redis; any other topology's figure is shown, not judged."""
    judged = instances == SCALED_INSTANCES and not cluster
    return line(
        f"scaled-{SCALED_INSTANCES}-instances",
        f">= {SCALED_RATE:,} moves/s, efficiency >= {SCALED_EFFICIENCY}",
        rate >= SCALED_RATE and efficiency >= SCALED_EFFICIENCY,
        f"{rate:,.0f}/s, efficiency {efficiency:.2f} with {instances} instances"
        + (" on the cluster" if cluster else ""),
        judged=judged,
    )


def cluster_target(
    cluster_rate: float | None, single_rate: float | None, instances: int | None = None
) -> str:
    """The cluster against one Redis, same topology otherwise: met or missed only with
    `SCALED_INSTANCES` instances (the target's topology); another's figure is shown, not
    judged."""
    if not cluster_rate or not single_rate:
        return line(
            "cluster-vs-single-redis",
            f">= {CLUSTER_SHARE}x",
            None,
            "run --topology all=8,load=16,redis=cluster, which measures the same on one Redis",
        )
    share = cluster_rate / single_rate
    return line(
        "cluster-vs-single-redis",
        f">= {CLUSTER_SHARE}x",
        share >= CLUSTER_SHARE,
        f"{share:.2f}x: {cluster_rate:,.0f}/s vs {single_rate:,.0f}/s with {instances} instances",
        judged=instances == SCALED_INSTANCES,
    )
