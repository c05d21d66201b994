"""What a game costs before its first move, beside boardgame.io's in the same run (``--only
setup``, a part of ``make bench``).

The player's path (`bench.player`) sets every game up before its window, the spares that follow the
games ending in it included (`bench.spares`), and counts moves only. A game is set up once, though,
and a short game (or a lobby where many games are opened and left) pays for its set-up as much as
for its moves. This part measures it alone: ``SET_UPS`` games at a time (no spares), each created,
its seats taken, started, and every seat's live WebSocket opened and read until the game's start
arrives, then left (`bench.loadgen.play_setup`, on the player's path's stack: one instance of each
service, durability ``always``). boardgame.io's client does the same against its server: a match
created, every seat joined, every seat's client connected and holding the first state
(`bench/peer/client.js`, ``setup``).

It prints the set-ups per second, how long one took, the CPU each process spent per set-up, and
the services' and Redis's CPU per set-up against boardgame.io's server's. No target: the issue
that asked for the move path's figures set none for set-up.
"""

from __future__ import annotations

import subprocess

from bench import player, targets
from bench.processes import Topology

SET_UPS = 16
"""Games set up at a time (as the player's path's middle figure plays 16)."""


def run(at_once: int = SET_UPS, with_peer: bool = True) -> None:
    print(
        f"== a game's set-up ({at_once} at a time): created, seats taken, started, every "
        "seat's live socket opened, then left; beside boardgame.io's =="
    )
    ours = player.measure_topology(Topology(), ("setup",), (at_once,)).get(("setup", at_once))
    peer = None
    if with_peer:
        why_not = player.peer_ready()
        if why_not is not None:
            print(f"boardgame.io: not measured ({why_not})")
        else:
            try:
                peer = player.run_peer(at_once, "setup")
            except (RuntimeError, subprocess.TimeoutExpired, ValueError) as error:
                print(f"boardgame.io, {at_once} set-ups at a time: FAILED: {error}")
            else:
                print("\n".join(peer.lines()), flush=True)
    if ours is not None and peer is not None:
        print(comparison(ours, peer))


def comparison(ours: player.Result, peer: player.Result) -> str:
    """The services' and Redis's CPU per set-up (the load's left out) against boardgame.io's
    server's, and the set-ups per second of each."""
    services = sum(cpu for name, cpu in ours.cpu.items() if name != "load")
    server = peer.cpu.get(targets.PEER_SERVER, 0.0)
    per_set_up = [
        cpu / max(1, result.moves) * 1e3 for cpu, result in ((services, ours), (server, peer))
    ]
    rate = f"{ours.rate / peer.rate:.2f}x" if peer.rate else "-"
    return (
        f"CPU ms per set-up: services and Redis {per_set_up[0]:.2f}, boardgame.io's server "
        f"{per_set_up[1]:.2f}; set-ups/s {ours.rate:,.0f} against {peer.rate:,.0f} ({rate})"
    )
