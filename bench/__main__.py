"""``make bench``: print the benchmark figures of every layer.

``python -m bench`` (``make bench``) runs the rules core figures, the player's path beside the
bench path and boardgame.io (``bench.player``), and the flood, storage and durability figures.
Options:

    --only core,player,floor,setup,watched,flood,storage,durability,bots
                                    the parts to run (default: these; floor: a minimal
                                    live server's CPU a move beside the gateway's over the
                                    WebSocket, bench/floor.py; setup: a game's
                                    set-up beside boardgame.io's, bench/setups.py;
                                    watched: a game's mover with and without 50
                                    spectators, bench/watched.py;
                                    service: the older
                                    bench-path run, bench/service.py: raw XADD, one and two
                                    rules instances, the best rate under 10 ms p99 (the
                                    player's path prints the bench path beside the gateway);
                                    flood: bench/flood.py; storage: Redis bytes per game,
                                    bench/storage.py; durability: each mode's append cost,
                                    bench/durability.py; bots: the search
                                    bot against greedy in every game,
                                    bench/bots.py)
    --topology rules=2,board=2,score=2,gateway=2,load=2,redis=cluster
                                    the player's path on that topology, and its scaling
                                    efficiency against one instance of each service;
                                    limits=on: the rate limits counted (lifted: none
                                    refused), as production pays for them
    --games 1,16,256                concurrent games of each measurement (bots: the
                                    first is the games per hosted game;
                                    `--only bots --games 200` is the win rate's run)
    --jobs N                        bots: games played at once (default: every core)
    --game goofspiel,renature       bots: only these hosted games (default: every one)
    --modes bus,http,ws             paths of the player's-path run
    --no-peer                       leave boardgame.io out
"""

from __future__ import annotations

import argparse

from bench import (
    bots,
    core,
    durability,
    flood,
    floor,
    player,
    processes,
    service,
    setups,
    storage,
    watched,
)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument(
        "--only", default="core,player,floor,setup,watched,flood,storage,durability,bots"
    )
    parser.add_argument("--topology", default=None)
    parser.add_argument("--games", default=None)
    parser.add_argument("--modes", default="bus,http,ws")
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--game", default=None)
    args = parser.parse_args()
    counts = tuple(int(g) for g in args.games.split(",")) if args.games else player.GAME_COUNTS
    modes = tuple(args.modes.split(","))
    if args.topology:
        topology = processes.Topology.parse(args.topology)
        if topology.instances > 1:
            player.run_scaling(topology, counts, modes)
        else:
            player.run(topology, counts, modes, with_peer=not args.no_peer)
        return
    parts = set(args.only.split(","))
    if "core" in parts:
        core.run()
    if "service" in parts:
        service.run()
    if "player" in parts:
        player.run(counts=counts, modes=modes, with_peer=not args.no_peer)
    if "floor" in parts:
        floor.run()
    if "setup" in parts:
        setups.run(with_peer=not args.no_peer)
    if "watched" in parts:
        watched.run()
    if "flood" in parts:
        flood.run()
    if "storage" in parts:
        storage.run()
    if "durability" in parts:  # the cost of each durability mode
        durability.run()
    if "bots" in parts:
        bots.run(counts[0] if args.games else bots.DEFAULT_GAMES, args.jobs, args.game)


main()
