"""Invariants over whole bot games on every board (``base``, ``valley``, ``valley-back``;
hypothesis draws the number of players, the bots and the seed): plants, clouds, dominoes and
mushrooms are conserved; the scores are the sum of the points the events award; replay equals
the live state; no view or live event shows another seat's secrets; ``decide`` accepts exactly
what ``legal_actions`` offers, for every kind of seat command (mushrooms included);
``can_spend_clouds`` agrees with ``cloud_actions``; a game is determined by its seed and its
bots.

Every test runs once per board (``pytest.mark.parametrize``), so each board is covered on every
run, whatever hypothesis draws. The examples are random, not a fixed derandomized sample: each
run explores other games, and a failing example is stored in ``.hypothesis/`` and tried first
next time. The counts are modest (``GAMES``, ``SAMPLES``) so the whole file stays well under a
minute on two cores. Runs that must be reproducible (CI) set ``HYPOTHESIS_PROFILE=ci``, which
derandomizes every test (tests/conftest.py registers the profile).
"""

from __future__ import annotations

import string
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from typing import TypeVar, cast, get_args

import pytest
from helpers import clouds_in_game, plants_everywhere
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from renature import commands as c
from renature import events as e
from renature.board import load_board
from renature.bots import make_bot
from renature.components import COLOURS, PLANT_TYPES, Colour, components
from renature.errors import RuleError
from renature.game import bot_seed, play, replay, setup_commands, simulation_id
from renature.legal_moves import can_spend_clouds, cloud_actions
from renature.rules import decide, evolve, execute, legal_actions
from renature.state import GameState
from renature.view import view, visible_event

BOARDS = ("base", "valley", "valley-back")
CLOUD_TOKENS = {"base": 30, "valley": 32, "valley-back": 32}  # from the rule books

# Examples per board and test: about 30 s for the file on two busy cores.
GAMES = settings(max_examples=16, deadline=None)
SAMPLES = settings(max_examples=10, deadline=None)

every_board = pytest.mark.parametrize("board", BOARDS)
seeds = st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=10)

T = TypeVar("T")
Game = tuple[str, int, str, tuple[str, ...]]
"""(board, players, seed, bots) of a whole game."""


@st.composite
def games(draw: st.DrawFn, board: str) -> Game:
    """(board, players, seed, bots) of a whole game."""
    players = draw(st.sampled_from([2, 3, 4]))
    bots = draw(st.lists(st.sampled_from(["random", "greedy"]), min_size=players, max_size=players))
    return board, players, draw(seeds), tuple(bots)


@cache
def played(
    board: str, players: int, seed: str, bots: tuple[str, ...]
) -> tuple[tuple[e.Event, ...], tuple[tuple[int, GameState], ...]]:
    """The game as ``play`` plays it, with the state after every command: (events, [(number of
    events so far, state)])."""
    agents = [make_bot(name, bot_seed(seed, seat)) for seat, name in enumerate(bots)]
    commands = setup_commands(simulation_id(seed), players, seed, board, bots)
    log: list[e.Event] = []
    states: list[tuple[int, GameState]] = []
    state: GameState | None = None
    for _ in range(10_000):
        if commands:
            command = commands.pop(0)
        elif state is not None and state.phase == "final_scoring":
            command = c.FinishGame(seed)
        elif state is not None and state.phase != "finished":
            command = agents[state.current].choose(state, state.current)
        else:
            break
        events, state = execute(state, command)
        log += events
        states.append((len(log), state))
    assert state is not None
    assert state.phase == "finished"
    return tuple(log), tuple(states)


def every_state(log: Iterable[e.Event]) -> Iterator[GameState]:
    """The state after each event, folded with ``evolve``."""
    state = None
    for event in log:
        state = evolve(state, event)
        yield state


def spread(items: Sequence[T], count: int) -> list[T]:
    """``count`` items spread evenly over ``items`` (first and last included)."""
    if len(items) <= count:
        return list(items)
    step = (len(items) - 1) / (count - 1)
    return [items[round(i * step)] for i in range(count)]


def some_states(states: Sequence[tuple[int, GameState]], count: int) -> list[GameState]:
    """States spread over the game, plus the first mushroom placements (rare, Valley only)."""
    chosen = [state for _, state in spread(states, count)]
    chosen += [state for _, state in states if state.phase == "place_mushroom"][:3]
    return chosen


# --- conservation --------------------------------------------------------------------------------


@every_board
@GAMES
@given(data=st.data())
def test_plants_are_conserved(board: str, data: st.DataObject) -> None:
    log, _ = played(*data.draw(games(board)))
    states = every_state(log)
    initial = None
    for state in states:
        if state.phase != "lobby":
            initial = initial or plants_everywhere(state)
            assert plants_everywhere(state) == initial
    assert initial


@every_board
@GAMES
@given(data=st.data())
def test_clouds_are_conserved(board: str, data: st.DataObject) -> None:
    log, _ = played(*data.draw(games(board)))
    for state in every_state(log):
        assert clouds_in_game(state) == state.board.cloud_tokens
        assert state.board.cloud_tokens == CLOUD_TOKENS[board]
        assert all(0 <= seat.clouds <= 6 for seat in state.seats)
        assert state.box_clouds >= 0


@every_board
@GAMES
@given(data=st.data())
def test_dominoes_are_conserved(board: str, data: st.DataObject) -> None:
    log, _ = played(*data.draw(games(board)))
    for state in every_state(log):
        everywhere = [*state.box_dominoes, *(d for d, _, _ in state.dominoes)]
        for seat in state.seats:
            everywhere += [*seat.hand, *seat.reserve]
        assert sorted(everywhere) == list(range(55))


@every_board
@GAMES
@given(data=st.data())
def test_every_mushroom_gained_is_placed_lost_or_declined(board: str, data: st.DataObject) -> None:
    """Valley: a mushroom is taken from the supply of eight and placed at once, or lost when no
    space is left, or declined (it stays in the supply); a placed one is one more area space.
    The base game has no mushrooms."""
    log, states = played(*data.draw(games(board)))
    final = states[-1][1]
    count = Counter(type(event) for event in log)
    placed = count[e.MushroomPlaced]
    taken = count[e.MushroomGained] - count[e.MushroomDeclined]

    assert taken == placed + count[e.MushroomLost] == final.board.mushrooms - final.mushrooms_left
    assert sum(final.area_sizes) == sum(final.board.area_sizes) + placed
    assert final.board.mushrooms == (0 if board == "base" else 8)
    for state in every_state(log):
        assert 0 <= state.mushrooms_left <= state.board.mushrooms


@every_board
@GAMES
@given(data=st.data())
def test_a_game_ends_with_every_domino_placed_or_in_the_box(
    board: str, data: st.DataObject
) -> None:
    _, states = played(*data.draw(games(board)))
    final = states[-1][1]

    assert all(not seat.hand and not seat.reserve for seat in final.seats)
    assert len(final.dominoes) + len(final.box_dominoes) == 55
    assert all(token is None for token in final.area_tokens)


# --- scores --------------------------------------------------------------------------------------


@every_board
@GAMES
@given(data=st.data())
def test_the_scores_are_the_sum_of_the_points_the_events_award(
    board: str, data: st.DataObject
) -> None:
    log, states = played(*data.draw(games(board)))
    points: Counter[int] = Counter()
    for event in log:
        for seat, awarded, reason in e.points_awarded(event):
            points[seat] += awarded
            assert reason
    final = states[-1][1]

    assert [seat.score for seat in final.seats] == [points[s] for s in range(final.players)]
    (ended,) = [ev for ev in log if isinstance(ev, e.GameEnded)]
    assert ended.scores == [points[s] for s in range(final.players)]


@every_board
@GAMES
@given(data=st.data())
def test_the_winners_have_the_most_points_then_win_the_tie_break(
    board: str, data: st.DataObject
) -> None:
    """Base game: the most area tokens break a tie; Valley: the majorities in the largest
    areas (the GameEnded event carries each seat's tie-break key)."""
    log, states = played(*data.draw(games(board)))
    final = states[-1][1]
    (ended,) = [ev for ev in log if isinstance(ev, e.GameEnded)]
    if board == "base":
        assert ended.tiebreak == [[len(seat.tokens)] for seat in final.seats]
    keys = {s: (seat.score, ended.tiebreak[s]) for s, seat in enumerate(final.seats)}

    best = max(keys.values())
    assert sorted(final.winners) == [s for s, key in keys.items() if key == best]
    assert sorted(final.result) == list(range(final.players))
    assert [keys[s] for s in final.result] == sorted(keys.values(), reverse=True)


# --- replay --------------------------------------------------------------------------------------


@every_board
@GAMES
@given(data=st.data())
def test_replaying_the_events_gives_the_live_state(board: str, data: st.DataObject) -> None:
    log, states = played(*data.draw(games(board)))

    assert replay(log) == states[-1][1]
    for count, state in spread(states, 6):
        assert replay(log[:count]) == state


@every_board
@GAMES
@given(data=st.data())
def test_replaying_the_encoded_events_gives_the_live_state(board: str, data: st.DataObject) -> None:
    log, states = played(*data.draw(games(board)))

    decoded = [e.decode(e.encode(event)) for event in log]

    assert decoded == list(log)
    assert replay(decoded) == states[-1][1]


@every_board
@SAMPLES
@given(data=st.data())
def test_the_same_seed_and_bots_give_the_same_game(board: str, data: st.DataObject) -> None:
    game = data.draw(games(board))
    _, players, seed, bots = game
    first, _ = play(players, seed, list(bots), board=board)
    second, _ = play(players, seed, list(bots), board=board)

    assert first == second
    assert tuple(first) == played(*game)[0]


# --- secrets -------------------------------------------------------------------------------------


@every_board
@GAMES
@given(data=st.data())
def test_no_view_shows_another_seats_hand_or_token_backs(board: str, data: st.DataObject) -> None:
    _, states = played(*data.draw(games(board)))
    for state in some_states(states, 12):
        for viewer in (*range(state.players), None):
            seen = view(state, viewer)
            for seat, seat_view in enumerate(seen.seats):
                if seat == viewer:
                    assert [d.id for d in seat_view.hand or []] == list(state.seats[seat].hand)
                    continue
                assert seat_view.hand is None
                if not state.is_over:
                    assert all(t.id is None and t.back is None for t in seat_view.tokens)


@every_board
@GAMES
@given(data=st.data())
def test_no_live_event_shows_another_seats_dominoes_or_tokens(
    board: str, data: st.DataObject
) -> None:
    game = data.draw(games(board))
    log, _ = played(*game)
    players = game[1]
    for event in log:
        for viewer in (*range(players), None):
            seen = visible_event(event, viewer)
            assert seen.version == event.version
            assert type(seen) is type(event)
            if isinstance(seen, e.GameCreated):
                assert seen.deal is None
            if seen.seat != viewer:
                assert seen.cause is None
                if isinstance(seen, e.DominoDrawn | e.DominoDiscarded):
                    assert seen.domino is None
            if isinstance(seen, e.AreaScored) and (seen.final or seen.seat != viewer):
                assert seen.token is None


@every_board
@SAMPLES
@given(data=st.data())
def test_no_hidden_domino_can_be_found_by_hashing_the_candidates(
    board: str, data: st.DataObject
) -> None:
    # A redacted event must not keep the hash of its secret, neither in its own ``hash`` nor in
    # the next event's ``prev_hash``: 55 candidates are quickly tried.
    log, _ = played(*data.draw(games(board)))
    viewer = 1
    seen = [visible_event(event, viewer) for event in log]
    for index, (event, shown) in enumerate(zip(log, seen, strict=True)):
        if not isinstance(event, e.DominoDrawn | e.DominoDiscarded) or event.seat == viewer:
            continue
        hashes = {shown.hash}
        if index + 1 < len(seen):
            hashes.add(seen[index + 1].prev_hash)
        for candidate in range(55):
            assert e.chain_hash(replace(shown, domino=candidate, hash="")) not in hashes


# --- decide and legal_actions agree ---------------------------------------------------------------

ANIMALS = components().animals


def command_kinds(players: int, board: str) -> dict[type, st.SearchStrategy[c.Command]]:
    """A strategy per kind of seat command: mostly close to legal ones, many not."""
    shape = load_board(board)
    seats = st.integers(-1, players)
    dominoes = st.integers(-1, 55)
    cells = st.builds(c.Cell, st.integers(-1, shape.width), st.integers(-1, shape.height))
    colours = st.sampled_from(COLOURS)
    plants = st.sampled_from(PLANT_TYPES)
    return {
        c.PlaceDomino: st.builds(c.PlaceDomino, seats, dominoes, cells, cells),
        c.DiscardDomino: st.builds(c.DiscardDomino, seats, dominoes),
        c.PlacePlant: st.builds(c.PlacePlant, seats, cells, colours, plants),
        c.SkipPlant: st.builds(c.SkipPlant, seats),
        c.EndTurn: st.builds(c.EndTurn, seats),
        c.CloudAction: st.one_of(
            st.builds(
                c.CloudAction, seats, st.just("change_joker"), animal=st.sampled_from(ANIMALS)
            ),
            st.builds(c.CloudAction, seats, st.just("extra_turn")),
            st.builds(c.CloudAction, seats, st.just("return_plant"), cell=cells),
        ),
        c.PlaceMushroom: st.builds(c.PlaceMushroom, seats, cells),
        c.SkipMushroom: st.builds(c.SkipMushroom, seats),
        c.ReclaimSeat: st.builds(c.ReclaimSeat, seats),
    }


def test_every_kind_of_seat_command_is_generated() -> None:
    """A new seat command must be added to ``command_kinds`` too, or the properties miss it."""
    assert set(command_kinds(2, "base")) == set(get_args(c.SeatCommand))


def near_legal(state: GameState, legal: list[c.Command]) -> list[c.Command]:
    """Commands built from the pieces of legal ones, with the seat, cell or domino changed."""
    out: list[c.Command] = []
    board = state.board
    for action in legal:
        if isinstance(action, c.PlaceDomino):
            out.append(c.PlaceDomino(action.seat, action.domino, action.second, action.first))
            for other in state.seats[action.seat].hand:
                out.append(c.PlaceDomino(action.seat, other, action.first, action.second))
        elif isinstance(action, c.PlacePlant):
            for colour in COLOURS:
                chosen = cast("Colour", colour)  # COLOURS are the literal's values
                out.append(c.PlacePlant(action.seat, action.cell, chosen, action.plant))
        elif isinstance(action, c.PlaceMushroom):
            here = board.index(action.cell.x, action.cell.y)
            for cell in board.neighbours[here]:  # next to a legal space: often not one
                out.append(c.PlaceMushroom(action.seat, c.Cell(*board.xy(cell))))
        out += [replace(action, seat=seat) for seat in range(-1, state.players + 1)]
    return out


def check_agreement(state: GameState, command: c.Command, legal: list[c.Command]) -> None:
    if command in legal:
        decide(state, command)  # must not raise
    else:
        with pytest.raises(RuleError):
            decide(state, command)


@every_board
@SAMPLES
@given(data=st.data())
def test_decide_accepts_every_legal_action(board: str, data: st.DataObject) -> None:
    _, states = played(*data.draw(games(board)))
    for state in some_states(states[:-1], 8):
        if state.phase in ("lobby", "final_scoring", "finished"):
            continue
        legal = legal_actions(state, state.current)
        assert legal, "the current seat always has something to do"
        for action in data.draw(st.lists(st.sampled_from(legal), max_size=15)):
            events = decide(state, action)
            assert events
            assert events[0].version == state.version + 1


@every_board
@SAMPLES
@given(data=st.data())
def test_decide_rejects_every_command_that_is_not_a_legal_action(
    board: str, data: st.DataObject
) -> None:
    game = data.draw(games(board))
    players = game[1]
    _, states = played(*game)
    commands = st.one_of(*command_kinds(players, board).values())
    for state in some_states(states, 8):
        legal = [a for seat in range(players) for a in legal_actions(state, seat)]
        for command in data.draw(st.lists(commands, min_size=20, max_size=20)):
            check_agreement(state, command, legal)
        nearby = near_legal(state, legal)
        if nearby:
            for command in data.draw(st.lists(st.sampled_from(nearby), max_size=20)):
                check_agreement(state, command, legal)


@every_board
@SAMPLES
@given(data=st.data())
def test_only_the_current_seat_has_legal_actions(board: str, data: st.DataObject) -> None:
    _, states = played(*data.draw(games(board)))
    for state in some_states(states, 20):
        for seat in range(state.players):
            actions = legal_actions(state, seat)
            if seat != state.current:
                assert actions == []
            for action in actions:
                assert getattr(action, "seat", seat) == seat


@every_board
@SAMPLES
@given(data=st.data())
def test_a_seat_can_spend_clouds_exactly_when_it_has_a_cloud_action(
    board: str, data: st.DataObject
) -> None:
    """``can_spend_clouds`` is the cheap question, ``cloud_actions`` the full list; the
    docstring promises the same answer, in every state of the game and for every seat."""
    log, _ = played(*data.draw(games(board)))
    spent = 0
    for state in every_state(log):
        if state.phase == "lobby":
            continue
        for seat in range(state.players):
            actions = cloud_actions(state, seat)
            assert can_spend_clouds(state, seat) == bool(actions)
            spent += bool(actions)
    assert spent, "a whole game never offered a cloud action: the property checked nothing"
