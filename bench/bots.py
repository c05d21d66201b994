"""Bot figures: the search bot (``mcts``, `gameplatform.search`) against ``greedy`` in every
hosted game, two players, the search bot's seat alternated game by game; its win rate (a shared
win counts by its share) with a 95% interval, and the time it takes per decision.

``python -m bench --only bots --games 200`` is the full measurement (each game played in its own
process, ``--jobs`` at a time); ``make bench`` plays a few games of each as a smoke figure.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import msgspec

from gameplatform import game_names, get_game, search

DEFAULT_GAMES = 2
"""Games per hosted game in ``make bench`` (a figure of the search's cost, not of its strength:
the win rate wants ``--games 200``)."""


class Duel(msgspec.Struct, frozen=True):
    game: str
    search_seat: int
    share: float
    """The search bot's share of the win: 1, 0.5 (a shared win), 0."""
    searched: list[float]
    """Seconds per decision the search made (more than one legal action)."""
    forced: int
    """Decisions with one legal action (played at once, no search)."""


def duel(name: str, number: int) -> Duel:
    """Game ``number`` of ``name``: the search bot in seat ``number % 2``, greedy in the other."""
    game = get_game(name)
    seed = f"bench-bots-{name}-{number}"
    seat_of_search = number % 2
    state = None
    for command in game.setup_commands(f"duel-{number}", seed, 2, ["one", "two"]):
        _, state = game.execute(state, command)
    assert state is not None, "a game's setup commands create it"
    kinds = ["greedy", "greedy"]
    kinds[seat_of_search] = search.NAME
    agents = [game.make_bot(kind, game.bot_seed(seed, seat)) for seat, kind in enumerate(kinds)]
    searched: list[float] = []
    forced = 0
    while True:
        finish = game.finishing_command(state, seed)
        if finish is not None:
            _, state = game.execute(state, finish)
        seat = game.to_move(state)
        if game.is_over(state) or seat is None:
            break
        start = time.perf_counter()
        action = agents[seat].choose(state, seat)
        if seat == seat_of_search:
            if len(game.legal_actions(state, seat)) > 1:
                searched.append(time.perf_counter() - start)
            else:
                forced += 1
        _, state = game.execute(state, action)
    winners = game.table(state).winners
    share = 1 / len(winners) if seat_of_search in winners else 0.0
    return Duel(name, seat_of_search, share, searched, forced)


def summary(duels: list[Duel]) -> str:
    """One line: win rate with its 95% interval (normal approximation), decisions' times."""
    count = len(duels)
    rate = sum(d.share for d in duels) / count
    margin = 1.96 * math.sqrt(rate * (1 - rate) / count)
    times = [t for d in duels for t in d.searched]
    p90 = statistics.quantiles(times, n=10)[-1] if len(times) > 1 else times[0]
    per_seat = [
        sum(d.share for d in duels if d.search_seat == s)
        / max(1, sum(1 for d in duels if d.search_seat == s))
        for s in (0, 1)
    ]
    forced = sum(d.forced for d in duels)
    return (
        f"{duels[0].game}: mcts wins {rate:.0%} +- {margin:.0%} of {count} games against greedy "
        f"(as seat 0: {per_seat[0]:.0%}, as seat 1: {per_seat[1]:.0%}); per decision "
        f"median {statistics.median(times) * 1e3:.0f} ms, p90 {p90 * 1e3:.0f} ms, "
        f"mean {statistics.fmean(times) * 1e3:.0f} ms over {len(times)} searched decisions "
        f"({forced} forced moves played at once)"
    )


def run(games: int = DEFAULT_GAMES, jobs: int | None = None, only: str | None = None) -> None:
    """Every hosted game's figure, or ``only`` that game's (a comma-separated list)."""
    print(f"== search bot against greedy ({games} games per game, seats alternated) ==")
    workers = jobs or os.cpu_count() or 1
    names = [name for name in game_names() if only is None or name in only.split(",")]
    if not names:
        raise SystemExit(f"no hosted game {only!r}; games: {', '.join(game_names())}")
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for name in names:
            bot = get_game(name).make_bot(search.NAME, "")
            assert isinstance(bot, search.SearchBot)
            budget = bot.budget
            duels: list[Any] = list(pool.map(duel, [name] * games, range(games)))
            print(
                f"{summary(duels)}; {budget.iterations} iterations, rollouts of "
                f"{budget.rollout_depth} {budget.rollout_policy} moves",
                flush=True,
            )
