"""The player's path's spare games (`bench.spares`): enough of them for the warm-up and the
window, set up a bounded number at a time, taken once the window is known, and a set-up of a
coroutine's own counted only where it fell inside the window."""

from __future__ import annotations

import asyncio

import pytest
from bench import spares
from bench.figures import Measurement, Stopping
from bench.loadgen import Game, Load


def test_the_pool_lasts_at_the_fastest_rate_with_the_shortest_games() -> None:
    """Every game in play may end once, then each end takes a whole game of the shortest kind:
    16 games, 24,500 moves (3,500/s for seven seconds), games of 120 to 143 moves."""
    moves = spares.most_moves(instances=1, processes=1, seconds=7.0)
    assert moves == 24_500
    assert spares.pool_size(16, [143, 120, 131], moves) == 16 + 205
    assert spares.pool_size(1, [120], moves) == 1 + 205


def test_the_bound_is_shared_by_the_load_processes_and_grows_with_the_instances() -> None:
    assert spares.most_moves(instances=1, processes=2, seconds=7.0) == 12_250
    assert spares.most_moves(instances=8, processes=16, seconds=7.0) == 12_250
    assert spares.pool_size(64, [120], 12_250) == 64 + 103


def test_the_pool_is_capped_unless_the_games_are_more() -> None:
    """256 games would ask for 461 spares: at most `MOST` are set up; 1,024 games in one
    process get one each."""
    assert spares.pool_size(256, [120], 24_500) == spares.MOST == 300
    assert spares.pool_size(1_024, [120], 24_500) == 1_024
    assert spares.pool_size(4, [120], 0) == 4  # no moves: each game in play may still end


async def test_spares_are_set_up_a_bounded_number_at_a_time_and_taken_in_order() -> None:
    in_flight, most = 0, 0

    async def set_up(number: int) -> spares.SetUp:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.001 * (number % 3))
        in_flight -= 1
        return spares.SetUp(number % 5, f"g{number}")

    pool = spares.Spares()
    await pool.fill(40, set_up, at_once=6)
    assert most == 6
    assert sorted(spare.game_id for spare in pool.ready) == sorted(f"g{n}" for n in range(40))
    first = pool.ready[0]
    assert pool.take() is first
    assert len(pool.ready) == 39
    await pool.close()
    assert pool.take() is None


def a_load(now: list[float]) -> Load:
    game = Game(seed="s", players=2, steps=[])
    load = Load(config={}, pool=[game] * 10, redis=None, layout=None, clock=lambda: now[0])
    load.spares.ready.extend(spares.SetUp(3, f"spare-{n}") for n in range(2))
    return load


async def test_a_coroutine_takes_a_spare_from_the_warm_ups_start_until_none_is_left() -> None:
    now = [0.0]
    load = a_load(now)
    set_ups: list[int] = []

    async def set_up(pool_index: int) -> spares.SetUp:
        set_ups.append(pool_index)
        now[0] += 0.01
        return spares.SetUp(pool_index, f"own-{len(set_ups)}")

    # before the window is known: a game's first set-up is the coroutine's own
    assert (await load.spares.next_game(load, 9, set_up, first=True)).game_id == "own-1"
    assert set_ups == [9]
    # a game that ends before the warm-up waits for it, then takes a spare
    waiting = asyncio.create_task(load.spares.next_game(load, 9, set_up))
    await asyncio.sleep(0.01)
    assert not waiting.done()
    load.window = (10.0, 15.0)  # told at the warm-up's start
    load.spares.open()
    now[0] = 8.0
    assert (await waiting).game_id == "spare-0"
    load.spares.ready.appendleft(spares.SetUp(3, "spare-0"))  # the same two spares again
    taken = [await load.spares.next_game(load, 9, set_up) for _ in range(2)]
    assert [(spare.game_id, spare.pool_index) for spare in taken] == [
        ("spare-0", 3),
        ("spare-1", 3),
    ]
    assert (await load.spares.next_game(load, 5, set_up)).game_id == "own-2"  # none left
    assert load.set_ups_in_window == 0  # in the warm-up
    now[0] = 12.0
    assert (await load.spares.next_game(load, 7, set_up)).pool_index == 7
    assert load.set_ups_in_window == 1
    load.stopping = True
    with pytest.raises(Stopping):
        await load.spares.next_game(load, 8, set_up)
    assert set_ups == [9, 5, 7]


def test_a_set_up_counts_in_the_window_where_any_of_it_fell_inside() -> None:
    now = [0.0]
    load = Measurement(clock=lambda: now[0])
    now[0] = 3.0
    load.set_up(began=1.0)  # no window known yet
    load.window = (10.0, 15.0)
    for began, now[0] in ((8.0, 9.9), (9.5, 10.1), (12.0, 13.0), (14.9, 16.0), (15.0, 16.0)):
        load.set_up(began)
    assert load.set_ups_in_window == 3


def test_boardgame_ios_pool_is_the_same_bound_for_its_shorter_games_uncapped() -> None:
    """Its client takes the size from here (one formula for both sides): 72-move games, and at
    256 games the whole bound, past `MOST`."""
    assert spares.peer_pool(16, 7.0) == 16 + 341  # 24,500 moves / 72
    assert spares.peer_pool(256, 7.0) == 256 + 341 > spares.MOST
