"""Invariants over whole bot games (hypothesis draws the number of players, the bots and the
seed): plants, clouds and dominoes are conserved; the scores are the sum of the points the events
award; replay equals the live state; no view shows another seat's secrets; ``decide`` accepts
exactly what ``legal_actions`` offers; a game is determined by its seed and its bots.
"""

from __future__ import annotations

import string
from collections import Counter
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from renature import commands as c
from renature import events as e
from renature.bots import make_bot
from renature.components import COLOURS, NEUTRAL, PLANT_TYPES, components, plant_code
from renature.errors import RuleError
from renature.game import bot_seed, play, replay, setup_commands, simulation_id
from renature.rules import decide, evolve, execute, legal_actions
from renature.state import GameState
from renature.view import view, visible_event

GAMES = settings(max_examples=40, deadline=None, derandomize=True)
SAMPLES = settings(max_examples=25, deadline=None, derandomize=True)

seeds = st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=10)


@st.composite
def games(draw):
    """(players, seed, bots) of a whole game."""
    players = draw(st.sampled_from([2, 3, 4]))
    bots = draw(st.lists(st.sampled_from(["random", "greedy"]), min_size=players, max_size=players))
    return players, draw(seeds), tuple(bots)


@cache
def played(players: int, seed: str, bots: tuple[str, ...]):
    """The game as ``play`` plays it, with the state after every command: (events, [(number of
    events so far, state)])."""
    agents = [make_bot(name, bot_seed(seed, seat)) for seat, name in enumerate(bots)]
    commands = setup_commands(simulation_id(seed), players, seed, "base", bots)
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


def every_state(log):
    """The state after each event, folded with ``evolve``."""
    state = None
    for event in log:
        state = evolve(state, event)
        yield state


def spread(items, count):
    """``count`` items spread evenly over ``items`` (first and last included)."""
    if len(items) <= count:
        return list(items)
    step = (len(items) - 1) / (count - 1)
    return [items[round(i * step)] for i in range(count)]


# --- conservation --------------------------------------------------------------------------------


def plants_everywhere(state):
    """Every plant by (colour, type): on the board and on the player boards."""
    plants = Counter(code for code in state.plants if code >= 0)
    for seat in state.seats:
        for slot, count in enumerate(seat.plants):
            colour = seat.colour if slot < 4 else NEUTRAL
            plants[plant_code(colour, slot % 4)] += count
    return plants


@GAMES
@given(games())
def test_plants_are_conserved(game):
    log, _ = played(*game)
    states = every_state(log)
    initial = None
    for state in states:
        if state.phase != "lobby":
            initial = initial or plants_everywhere(state)
            assert plants_everywhere(state) == initial
    assert initial


@GAMES
@given(games())
def test_clouds_are_conserved(game):
    log, _ = played(*game)
    for state in every_state(log):
        held = sum(seat.clouds for seat in state.seats)
        assert held + sum(state.clouds) + state.box_clouds == state.board.cloud_tokens == 30
        assert all(0 <= seat.clouds <= 6 for seat in state.seats)
        assert state.box_clouds >= 0


@GAMES
@given(games())
def test_dominoes_are_conserved(game):
    log, _ = played(*game)
    for state in every_state(log):
        everywhere = [*state.box_dominoes, *(d for d, _, _ in state.dominoes)]
        for seat in state.seats:
            everywhere += [*seat.hand, *seat.reserve]
        assert sorted(everywhere) == list(range(55))


@GAMES
@given(games())
def test_a_game_ends_with_every_domino_placed_or_in_the_box(game):
    _, states = played(*game)
    final = states[-1][1]

    assert all(not seat.hand and not seat.reserve for seat in final.seats)
    assert len(final.dominoes) + len(final.box_dominoes) == 55
    assert all(token is None for token in final.area_tokens)


# --- scores --------------------------------------------------------------------------------------


@GAMES
@given(games())
def test_the_scores_are_the_sum_of_the_points_the_events_award(game):
    log, states = played(*game)
    points = Counter()
    for event in log:
        for seat, awarded, reason in e.points_awarded(event):
            points[seat] += awarded
            assert reason
    final = states[-1][1]

    assert [seat.score for seat in final.seats] == [points[s] for s in range(final.players)]
    (ended,) = [ev for ev in log if isinstance(ev, e.GameEnded)]
    assert ended.scores == [points[s] for s in range(final.players)]


@GAMES
@given(games())
def test_the_winners_have_the_most_points_then_the_most_tokens(game):
    _, states = played(*game)
    final = states[-1][1]
    keys = {s: (seat.score, len(seat.tokens)) for s, seat in enumerate(final.seats)}

    best = max(keys.values())
    assert sorted(final.winners) == [s for s, key in keys.items() if key == best]
    assert sorted(final.result) == list(range(final.players))
    assert [keys[s] for s in final.result] == sorted(keys.values(), reverse=True)


# --- replay --------------------------------------------------------------------------------------


@GAMES
@given(games())
def test_replaying_the_events_gives_the_live_state(game):
    log, states = played(*game)

    assert replay(log) == states[-1][1]
    for count, state in spread(states, 6):
        assert replay(log[:count]) == state


@GAMES
@given(games())
def test_replaying_the_encoded_events_gives_the_live_state(game):
    log, states = played(*game)

    decoded = [e.decode(e.encode(event)) for event in log]

    assert decoded == list(log)
    assert replay(decoded) == states[-1][1]


@SAMPLES
@given(games())
def test_the_same_seed_and_bots_give_the_same_game(game):
    players, seed, bots = game
    first, _ = play(players, seed, list(bots))
    second, _ = play(players, seed, list(bots))

    assert first == second
    assert tuple(first) == played(*game)[0]


# --- secrets -------------------------------------------------------------------------------------


@GAMES
@given(games())
def test_no_view_shows_another_seats_hand_or_token_backs(game):
    _, states = played(*game)
    for _, state in spread(states, 12):
        for viewer in (*range(state.players), None):
            seen = view(state, viewer)
            for seat, seat_view in enumerate(seen.seats):
                if seat == viewer:
                    assert [d.id for d in seat_view.hand or []] == list(state.seats[seat].hand)
                    continue
                assert seat_view.hand is None
                if not state.is_over:
                    assert all(t.id is None and t.back is None for t in seat_view.tokens)


@GAMES
@given(games())
def test_no_live_event_shows_another_seats_dominoes_or_tokens(game):
    log, _ = played(*game)
    players = game[0]
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


@SAMPLES
@given(games())
def test_no_hidden_domino_can_be_found_by_hashing_the_candidates(game):
    # A redacted event must not keep the hash of its secret, neither in its own ``hash`` nor in
    # the next event's ``prev_hash``: 55 candidates are quickly tried.
    log, _ = played(*game)
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


def commands_for(players):
    """Seat commands of every kind, mostly close to legal ones, many not."""
    seats = st.integers(-1, players)
    dominoes = st.integers(-1, 55)
    cells = st.builds(c.Cell, st.integers(-1, 26), st.integers(-1, 13))
    colours = st.sampled_from(COLOURS)
    plants = st.sampled_from(PLANT_TYPES)
    return st.one_of(
        st.builds(c.PlaceDomino, seats, dominoes, cells, cells),
        st.builds(c.DiscardDomino, seats, dominoes),
        st.builds(c.PlacePlant, seats, cells, colours, plants),
        st.builds(c.SkipPlant, seats),
        st.builds(c.EndTurn, seats),
        st.builds(c.CloudAction, seats, st.just("change_joker"), animal=st.sampled_from(ANIMALS)),
        st.builds(c.CloudAction, seats, st.just("extra_turn")),
        st.builds(c.CloudAction, seats, st.just("return_plant"), cell=cells),
    )


def near_legal(state, legal):
    """Commands built from the pieces of legal ones, with the seat, cell or domino changed."""
    out = []
    for action in legal:
        if isinstance(action, c.PlaceDomino):
            out.append(c.PlaceDomino(action.seat, action.domino, action.second, action.first))
            for other in state.seats[action.seat].hand:
                out.append(c.PlaceDomino(action.seat, other, action.first, action.second))
        elif isinstance(action, c.PlacePlant):
            for colour in COLOURS:
                out.append(c.PlacePlant(action.seat, action.cell, colour, action.plant))
        out += [replace(action, seat=seat) for seat in range(-1, state.players + 1)]
    return out


def check_agreement(state, command, legal):
    if command in legal:
        decide(state, command)  # must not raise
    else:
        with pytest.raises(RuleError):
            decide(state, command)


@SAMPLES
@given(games(), st.data())
def test_decide_accepts_every_legal_action(game, data):
    _, states = played(*game)
    for _, state in spread(states[:-1], 8):
        if state.phase in ("lobby", "final_scoring", "finished"):
            continue
        legal = legal_actions(state, state.current)
        assert legal, "the current seat always has something to do"
        for action in data.draw(st.lists(st.sampled_from(legal), max_size=15)):
            events = decide(state, action)
            assert events
            assert events[0].version == state.version + 1


@SAMPLES
@given(games(), st.data())
def test_decide_rejects_every_command_that_is_not_a_legal_action(game, data):
    players = game[0]
    _, states = played(*game)
    for _, state in spread(states, 8):
        legal = [a for seat in range(players) for a in legal_actions(state, seat)]
        for command in data.draw(st.lists(commands_for(players), min_size=20, max_size=20)):
            check_agreement(state, command, legal)
        nearby = near_legal(state, legal)
        if nearby:
            for command in data.draw(st.lists(st.sampled_from(nearby), max_size=20)):
                check_agreement(state, command, legal)


@SAMPLES
@given(games())
def test_only_the_current_seat_has_legal_actions(game):
    _, states = played(*game)
    for _, state in spread(states, 20):
        for seat in range(state.players):
            actions = legal_actions(state, seat)
            if seat != state.current:
                assert actions == []
            for action in actions:
                assert getattr(action, "seat", seat) == seat
