"""The platform's contract: every registered game passes the same suite (as every event store
passes one store suite). Renature goes through its adapter unchanged."""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree

import msgspec
import pytest

from gameplatform import UnknownGame, game_names, get_game
from gameplatform.chain import Event
from gameplatform.interface import HostedGame, HostedState
from support.hosting import replayed

GAMES = game_names()
SETTINGS = {
    "renature": (["greedy", "random"], "base"),
    "renaissance": (["greedy", "random"], None),
    "goofspiel": (["greedy", "random"], None),
}


def simulated(name: str) -> tuple[HostedGame, list[Event], HostedState]:
    game = get_game(name)
    bots, board = SETTINGS[name]
    log, state, _ = game.simulate("contract", bots, board)
    return game, log, state


def test_the_registry_knows_every_hosted_game_and_refuses_others() -> None:
    assert GAMES == ("renature", "renaissance", "goofspiel")
    with pytest.raises(UnknownGame, match="renature, renaissance, goofspiel"):
        get_game("chess")


@pytest.mark.parametrize("name", GAMES)
def test_a_simulated_game_ends_and_its_replay_audit_and_explanation_agree(name: str) -> None:
    game, log, state = simulated(name)
    assert game.is_over(state)
    assert game.to_move(state) is None
    folded, over = None, []
    for event in log:
        folded = game.evolve(folded, event)
        over.append(game.is_over(folded))
    assert folded == state == game.replay(log)
    assert [game.ends(ev) for ev in log] == [False] * (len(log) - 1) + [True]
    # Over exactly from the event that ends it: what a gateway reads (GameStates.is_over).
    assert over == [game.ends(ev) for ev in log]
    assert [game.closes(ev) for ev in log] == [game.ends(ev) for ev in log]
    report = game.audit(log)
    assert report.ok
    explanation = game.explain(log)
    assert explanation.scores == report.scores
    assert [game.decode_event(game.encode_event(ev)) for ev in log] == log


@pytest.mark.parametrize("name", GAMES)
def test_decide_takes_every_legal_action_and_only_the_seat_to_move_has_any(name: str) -> None:
    game, log, _ = simulated(name)
    state = None
    seen = decisions = 0
    for number, event in enumerate(log):
        state = game.evolve(state, event)
        whole_batch = number + 1 == len(log) or log[number + 1].cause is not None
        waits = whole_batch and not game.is_over(state) and game.to_move(state) is not None
        decisions += waits
        if not waits or number % 3:
            continue
        seat = game.to_move(state)
        assert seat is not None
        legal = game.legal_actions(state, seat)
        assert legal
        for command in legal[:: max(1, len(legal) // 25)]:
            game.decide(state, command)  # raises if refused
        players = game.table(state).players
        assert all(game.legal_actions(state, s) == [] for s in range(players) if s != seat)
        seen += 1
    assert seen > min(10, decisions // 4)  # a short game (Goofspiel: 26 bids) has fewer


@pytest.mark.parametrize("name", GAMES)
def test_the_same_seed_sets_up_the_same_game(name: str) -> None:
    game = get_game(name)
    players = game.player_counts[0]
    names = [f"p{i}" for i in range(players)]

    def events() -> list[Any]:
        state, out = None, []
        for command in game.setup_commands("same", "seed-1", players, names):
            batch, state = game.execute(state, command)
            out += batch
        return out

    assert events() == events()


@pytest.mark.parametrize("name", GAMES)
def test_views_pictures_and_components_are_data(name: str) -> None:
    game, _, state = simulated(name)
    views = [game.view(state, seat) for seat in (None, 0, 1)]
    for view in views:
        msgspec.json.encode(view)
    if not game.hidden_information:  # every seat sees the same game
        plain = [msgspec.structs.replace(v, viewer=None) for v in views]
        assert plain[0] == plain[1] == plain[2]
    assert game.picture_svg(state, "t").startswith("<svg")
    assert game.picture_text(state).strip()
    msgspec.json.encode(game.components())
    assert game.bot_names == ("random", "greedy", "mcts")
    assert game.command_type is not None
    assert game.event_type is not None


def test_renature_through_the_platform_plays_exactly_as_its_core() -> None:
    from renature.game import outcome, play

    log, state = play(3, "same as core", ["greedy", "random", "greedy"], board="valley")
    expected = outcome(state, ["greedy", "random", "greedy"], len(log))
    game = get_game("renature")
    got_log, got_state, got = game.simulate(
        "same as core", ["greedy", "random", "greedy"], "valley"
    )
    assert got_log == log
    assert got_state == state
    assert got == expected
    assert game.finishing_command(got_state, "x") is None


@pytest.mark.parametrize("name", GAMES)
def test_the_table_and_the_awards_agree_with_the_state_and_the_outcome(name: str) -> None:
    """What the services read of any game: the awards of every event add up to the scores, the
    table names the seats and the result, and the outcome is simulate's."""
    game, log, state = simulated(name)
    table = game.table(state)
    awarded = [0] * table.players
    for event in log:
        for award in game.points_awarded(event):
            awarded[award.seat] += award.points
    assert awarded == table.scores
    assert (table.over, table.started, table.to_move) == (True, True, None)
    assert table.current is None  # nobody's turn once it is over
    # simulate deals from its seed as the service deals from a secret one (unmarked)
    assert table.seed == ("secret" if game.seed_secret else "public")
    assert table.board in game.boards
    assert len(table.names) == len(table.colours) == len(table.statuses) == table.players
    assert all(name is not None for name in table.names)
    outcome = game.outcome(state, SETTINGS[name][0], len(log))
    assert outcome.winners == table.winners


@pytest.mark.parametrize("name", GAMES)
def test_commands_cross_the_wire_as_the_services_read_them(name: str) -> None:
    """Every legal action is a seat command the gateway reads back from its JSON (seat and
    all), a command the bus decodes, and none of them needs the seed."""
    game, log, _ = simulated(name)
    state = replayed(game, log[: len(log) // 2])
    seat = game.to_move(state)
    assert seat is not None
    for action in game.legal_actions(state, seat):
        assert game.needs_seat(action)
        assert not game.is_creation(action)
        assert not game.needs_seed(action)
        assert game.seat_command(msgspec.to_builtins(action)) == action
        assert game.decode_command(msgspec.json.encode(action)) == action
        assert game.public_command(action) == action


@pytest.mark.parametrize("name", GAMES)
def test_a_creation_takes_the_seed_the_service_gives_it(name: str) -> None:
    game = get_game(name)
    created = game.create_command("g1", 2, None, {})
    assert game.is_creation(created)
    assert not game.needs_seat(created)
    seeded = game.with_seed(created, "s33d", "salt")
    assert msgspec.to_builtins(seeded)["seed"] == "s33d"
    public = msgspec.to_builtins(game.public_command(seeded))
    assert public["seed"] == ("" if game.seed_secret else "s33d")
    assert game.needs_seed(created)  # a blank seed: the service fills it
    joined, started = game.join_command(1, "Ada"), game.start_command()
    assert not game.needs_seat(started)
    assert game.decode_command(msgspec.json.encode(joined)) == joined


@pytest.mark.parametrize("name", GAMES)
def test_the_state_a_seat_reads_decodes_to_what_it_may_know(name: str) -> None:
    game, _, state = simulated(name)
    seen = game.decode_state(game.state_json(state, 0))
    if not game.hidden_information:
        assert seen == state
    assert game.table(seen) == game.table(state)


@pytest.mark.parametrize("name", GAMES)
def test_both_pictures_draw_every_prefix_of_a_game_from_its_creation_on(name: str) -> None:
    """Any state a replay reaches has a picture: the lobby (before any set, deal or round) as
    well as the game under way and its end."""
    game = get_game(name)
    log, _, _ = game.simulate("pictures", ["random", "random"], SETTINGS[name][1])
    for k in range(1, len(log) + 1):
        state = replayed(game, log[:k])
        assert game.picture_text(state).strip(), k
        svg = ElementTree.fromstring(game.picture_svg(state, f"after event {k}"))
        assert svg.tag == "{http://www.w3.org/2000/svg}svg", k
