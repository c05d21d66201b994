"""Rules-core figures: legal_actions on mid-game positions, whole bot games per second."""

from __future__ import annotations

import statistics
import time

from gameplatform import game_names, get_game
from renature.game import play, replay
from renature.rules import evolve, legal_actions
from renature.state import GameState

TARGET_GAME_MS = 20.0


def midgame_positions(count: int = 40) -> list[GameState]:
    """Positions half-way through 4-player greedy games (seat to move in step A)."""
    positions = []
    for game in range(count):
        log, _ = play(4, f"bench-{game}", ["greedy"] * 4)
        cut = len(log) // 2
        state = replay(log[:cut])
        while state is not None and state.phase != "place_domino":
            state = evolve(state, log[cut])
            cut += 1
        assert state is not None
        positions.append(state)
    return positions


def time_legal_actions(positions: list[GameState], rounds: int = 50) -> list[float]:
    samples = []
    for state in positions:
        start = time.perf_counter()
        for _ in range(rounds):
            legal_actions(state, state.current)
        samples.append((time.perf_counter() - start) / rounds)
    return samples


def time_games(players: int, bots: str, games: int) -> list[float]:
    samples = []
    for game in range(games):
        start = time.perf_counter()
        play(players, f"speed-{game}", [bots] * players)
        samples.append(time.perf_counter() - start)
    return samples


def run() -> None:
    print("== rules core (in process, one core) ==")
    positions = midgame_positions()
    samples = time_legal_actions(positions)
    counts = [len(legal_actions(s, s.current)) for s in positions]
    print(
        f"legal_actions on {len(positions)} mid-game positions: "
        f"median {statistics.median(samples) * 1e6:.0f} us, "
        f"p90 {statistics.quantiles(samples, n=10)[-1] * 1e6:.0f} us "
        f"({statistics.median(counts):.0f} actions median)"
    )
    for players in (2, 3, 4):
        for bots in ("greedy", "random"):
            times = time_games(players, bots, 40)
            median_ms = statistics.median(times) * 1000
            line = (
                f"{players}-player {bots} games: {1 / statistics.mean(times):.0f} games/s, "
                f"median {median_ms:.1f} ms per game"
            )
            if players == 4 and bots == "greedy":
                verdict = "meets" if median_ms <= TARGET_GAME_MS else "MISSES"
                line += f" (target <= {TARGET_GAME_MS:.0f} ms: {verdict})"
            print(line)
    platform()


def platform() -> None:
    """Every hosted game through the platform interface (`gameplatform`): what the services
    pay per game for the rules (greedy against random, two seats)."""
    print("== every game through the platform interface (in process, one core) ==")
    for name in game_names():
        game = get_game(name)
        times, counts, events = [], [], []
        for number in range(20):
            start = time.perf_counter()
            log, _, _ = game.simulate(f"platform-{number}", ["greedy", "random"])
            times.append(time.perf_counter() - start)
            events.append(len(log))
            half = game.replay(log[: len(log) // 2])
            seat = None if half is None else game.to_move(half)
            if half is not None and seat is not None:
                counts.append(len(game.legal_actions(half, seat)))
        print(
            f"{name}: greedy vs random games {1 / statistics.mean(times):.0f}/s, median "
            f"{statistics.median(times) * 1000:.1f} ms, {statistics.median(events):.0f} events; "
            f"{statistics.median(counts):.0f} legal actions half-way (median)"
        )
