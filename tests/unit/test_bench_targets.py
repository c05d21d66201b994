"""The bench's scale-out target lines: judged only on the target's own topology (eight
instances of each service), any other topology's figure shown as not judged."""

from __future__ import annotations

from dataclasses import dataclass, field

from bench import targets
from bench.figures import Measurement


def test_the_cluster_share_is_judged_with_eight_instances() -> None:
    assert targets.cluster_target(12_000, 16_000, 8) == (
        "--target cluster-vs-single-redis >= 0.8x: MISSED (0.75x: 12,000/s vs 16,000/s "
        "with 8 instances)"
    )
    assert targets.cluster_target(13_000, 16_000, 8).endswith(
        ": met (0.81x: 13,000/s vs 16,000/s with 8 instances)"
    )


def test_the_cluster_share_of_another_topology_is_shown_not_judged() -> None:
    text = targets.cluster_target(563, 1_254, 4)
    assert text == (
        "--target cluster-vs-single-redis >= 0.8x: not judged (0.45x: 563/s vs 1,254/s with 4 "
        "instances; judged with 8 instances of each service)"
    )
    assert "MISSED" not in text
    assert ": met" not in text


def test_without_both_figures_the_cluster_share_is_not_measured() -> None:
    assert ": not measured (run --topology all=8" in targets.cluster_target(None, 1_254)


def test_the_scaling_target_is_judged_on_one_redis_with_eight_instances_only() -> None:
    assert ": MISSED (" in targets.scaling_target(8, False, 9_000, 0.5)
    assert ": met (" in targets.scaling_target(8, False, 16_000, 0.85)
    assert ": not judged (" in targets.scaling_target(8, True, 16_000, 0.85)
    assert ": not judged (" in targets.scaling_target(4, False, 500, 0.1)


@dataclass
class Run:
    """A player's-path result as the targets read it (`targets.Measured`)."""

    label: str = "gateway WebSocket"
    rate: float = 2_000.0
    round_trips: list[float] = field(default_factory=lambda: [0.1])
    cpu: dict[str, float] = field(default_factory=lambda: {"gateway": 1.5, "rules": 1.0})
    moves: int = 10_000
    note: str = ""


def test_a_window_that_held_set_ups_says_so_beside_the_gateways_figure() -> None:
    """Set-ups inside the window (the spares ran out) count in its CPU: the gateway's figure
    carries how many, and a clean window carries nothing."""
    ended = Run(note=targets.ended_in(48, 5), cpu={"gateway": 3.0, "rules": 1.0})
    lines = targets.player_targets({("ws", 256): ended, ("http", 256): Run()}, {})
    (ws,) = [line for line in lines if line.startswith("--target gateway-cpu-per-move-ws")]
    assert ws == (
        "--target gateway-cpu-per-move-ws <= 0.25 ms: MISSED (0.30 ms at 256 games; 5 set-ups "
        "inside the window (the spares ran out))"
    )
    (http,) = [line for line in lines if line.startswith("--target gateway-cpu-per-move-http")]
    assert http == "--target gateway-cpu-per-move-http <= 0.40 ms: met (0.15 ms at 256 games)"
    assert targets.ended_in(0) == ""


def test_games_ended_in_the_window_are_said_followed_by_spares_set_up_before_it() -> None:
    """No set-up fell inside the window: the note says nothing of set-ups counted in it."""
    assert targets.ended_in(48) == (
        "48 games ended inside the window, each followed by a spare set up before it"
    )
    assert targets.ended_in(1, 0).startswith("1 game ended inside the window")
    assert targets.ended_in(0, 1) == "1 set-up inside the window (the spares ran out)"


def test_a_runs_note_adds_up_its_load_processes_and_the_peers_abandoned_games() -> None:
    results = [
        {"ended_in_window": 20, "set_ups_in_window": 0},
        {"ended_in_window": 28, "set_ups_in_window": 0},
    ]
    assert targets.window_note(results) == targets.ended_in(48)
    assert targets.window_note([{"ended_in_window": 3, "set_ups_in_window": 2}]) == (
        "2 set-ups inside the window (the spares ran out)"
    )
    assert targets.window_note([{}]) == ""
    assert targets.window_note([{"ended_in_window": 0}], abandoned=2) == (
        "2 games abandoned: a move without an answer in 10 s"
    )
    assert targets.window_note([{"ended_in_window": 5}], abandoned=1) == (
        f"{targets.ended_in(5)}; 1 game abandoned: a move without an answer in 10 s"
    )


def test_a_game_ended_counts_in_the_window_only_inside_it() -> None:
    now = [0.0]
    load = Measurement(clock=lambda: now[0])
    load.window = (10.0, 15.0)
    for now[0] in (5.0, 10.0, 12.5, 14.9, 15.0, 20.0):
        load.game_ended()
    assert (load.games_finished, load.ended_in_window) == (6, 3)


def test_one_game_alone_is_said_beside_the_bench_path_and_the_disks_durable_write() -> None:
    """The round trip of one game alone over the WebSocket, judged; beside it the bench path's
    at one game and what a durable write costs on the machine, where they were measured."""
    solo = Run(round_trips=[0.0014, 0.0016, 0.0015])
    bus = Run(label="bench path", round_trips=[0.0009, 0.0010, 0.0011])
    measured: list[str] = []

    def disk() -> tuple[float, float]:
        measured.append("disk")
        return 0.33, 0.12

    lines = targets.player_targets({("ws", 1): solo, ("bus", 1): bus}, {}, disk)
    (solo_line,) = [line for line in lines if line.startswith("--target solo-ws-round-trip-p50")]
    assert solo_line == (
        "--target solo-ws-round-trip-p50 <= 1.5 ms: met (1.50 ms; the bench path, no gateway: "
        "1.00 ms; one durable write here: 0.33 ms p50 against 0.12 ms unsynced (a move waits "
        "for two, one after the other))"
    )
    assert measured == ["disk"]
    alone = targets.solo_target({("ws", 1): Run(round_trips=[0.0016])})
    assert alone == "--target solo-ws-round-trip-p50 <= 1.5 ms: MISSED (1.60 ms)"


def test_the_disk_is_not_measured_without_a_run_of_one_game_alone() -> None:
    def disk() -> tuple[float, float]:
        raise AssertionError("measured for nothing")

    lines = targets.player_targets({("ws", 16): Run()}, {}, disk)
    assert (
        "--target solo-ws-round-trip-p50 <= 1.5 ms: not measured (no WebSocket run at one "
        "game)" in lines
    )


def test_a_durable_write_that_could_not_be_measured_is_said_and_the_line_still_printed() -> None:
    def disk() -> tuple[float, float]:
        raise RuntimeError("redis-server did not start")

    lines = targets.player_targets({("ws", 1): Run(round_trips=[0.0014])}, {}, disk)
    (solo,) = [line for line in lines if line.startswith("--target solo-ws-round-trip-p50")]
    assert solo == (
        "--target solo-ws-round-trip-p50 <= 1.5 ms: met (1.40 ms; a durable write not measured "
        "(RuntimeError: redis-server did not start))"
    )


def test_the_ratio_to_boardgame_io_says_what_it_asks_of_the_machines_cores() -> None:
    """Beside the ratio: the CPU a move may take in every process for 1.5x with every core
    busy, against what the gateway's path spent; the bench path's rate (no gateway) in the same
    run; the most a core for each process would allow at the run's CPU per move (its busiest
    process's share, against boardgame.io's one-threaded server's); and how busy that server
    was."""
    http = Run(label="gateway HTTP", rate=2_000.0, moves=10_000, cpu={"gateway": 2.0, "load": 1.0})
    bus = Run(label="bench path", rate=3_000.0, moves=15_000, cpu={"rules": 3.0})
    theirs = Run(label="boardgame.io", rate=2_500.0, moves=12_500, cpu={"peer server": 4.95})
    text = targets.peer_target({("http", 16): http, ("bus", 16): bus}, {16: theirs}, 16, cores=2)
    assert text == (
        "--target gateway-vs-boardgame.io-16-games >= 1.5x: MISSED (0.80x: 2,000/s gateway HTTP "
        "vs 2,500/s; 1.5x is 3,750/s: with all 2 cores busy at most 0.53 ms of CPU a move in "
        "every process, the load's included, against 0.30; the bench path, no gateway: 3,000/s "
        "(1.20x), 0.20 ms; a core for each process: at most 5,000/s (2.00x), the busiest "
        "gateway at 0.20 ms a move; boardgame.io's server 0.99 cores busy, at most 2,525/s)"
    )
    alone = targets.peer_target({("ws", 16): Run(rate=4_000.0)}, {16: theirs}, 16, cores=16)
    assert alone.startswith("--target gateway-vs-boardgame.io-16-games >= 1.5x: met (1.60x: ")
    assert "the bench path" not in alone
    assert targets.peer_target({("ws", 16): Run()}, {}, 16).endswith(
        "not measured (no boardgame.io figure (--no-peer, no node))"
    )
