"""What each seat may see (English online rules, "Setup", "C: 2)" and "End of the game"):
a hand is seen only by its owner ("so that only you can see their fronts"); the reserve lies
face down, so nobody sees its order; the back of a collected area token is secret to the others
until the final scoring; the spare tokens and a token returned at the end go back unseen.
"""

from __future__ import annotations

import msgspec
from helpers import (
    area,
    close_area_n,
    new_game,
    of_type,
    run,
    with_seat,
    without_token,
)
from msgspec.structs import replace

from renature import commands as c
from renature import events as e
from renature.components import components
from renature.state import GameState
from renature.view import view, visible_event

MARY, PAUL, FRANK = 0, 1, 2
SPECTATOR = None


def keys_in(value: object) -> set[str]:
    """Every mapping key anywhere in a JSON-like value."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys_in(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys_in(v)}
    return set()


def mary_holds_the_token_of_h() -> tuple[GameState, str]:
    state = new_game()
    token = state.area_tokens[area(state, "H")]
    assert token is not None
    return with_seat(without_token(state, "H"), MARY, tokens=(token,)), token


# --- views of the state --------------------------------------------------------------------------


def test_a_seat_sees_its_own_hand_and_no_other_hand() -> None:
    state = new_game()

    seen = view(state, MARY)

    animals = components().animals
    hand = seen.seats[MARY].hand
    assert hand is not None
    assert [(d.id, d.animals) for d in hand] == [
        (d, (animals[components().dominoes[d][0]], animals[components().dominoes[d][1]]))
        for d in state.seats[MARY].hand
    ]
    assert seen.seats[PAUL].hand is None
    assert seen.seats[FRANK].hand is None
    assert [s.hand_count for s in seen.seats] == [3, 3, 3]


def test_a_spectator_sees_no_hand() -> None:
    seen = view(new_game(), SPECTATOR)

    assert all(seat.hand is None for seat in seen.seats)
    assert seen.viewer is None


def test_nobody_sees_the_order_of_a_reserve_not_even_its_owner() -> None:
    state = new_game()

    for viewer in (MARY, PAUL, FRANK, SPECTATOR):
        data = msgspec.to_builtins(view(state, viewer))
        assert not keys_in(data) & {"reserve", "reserves", "box", "deal"}
        assert [s["reserve_count"] for s in data["seats"]] == [15, 15, 15]


def test_only_the_holder_sees_the_id_and_back_of_a_collected_area_token() -> None:
    state, token = mary_holds_the_token_of_h()
    back = state.board.token(token).back

    mine = view(state, MARY).seats[MARY].tokens
    assert [(t.id, t.back, t.main, t.minor) for t in mine] == [(token, back, 1, 0)]
    for viewer in (PAUL, FRANK, SPECTATOR):
        theirs = view(state, viewer).seats[MARY].tokens
        assert [(t.id, t.back, t.main, t.minor) for t in theirs] == [(None, None, 1, 0)]


def test_after_the_final_scoring_every_token_is_shown_to_everyone() -> None:
    state, token = mary_holds_the_token_of_h()
    state = replace(state, phase="finished")

    seen = view(state, FRANK).seats[MARY].tokens
    assert [t.id for t in seen] == [token]


def test_tokens_lying_in_areas_show_their_front_only() -> None:
    for area_view in view(new_game(), MARY).areas:
        assert area_view.token is not None
        assert (area_view.token.id, area_view.token.back) == (None, None)
        assert area_view.token.main == area_view.size


# --- live events ---------------------------------------------------------------------------------


def mary_discards() -> tuple[list[e.Event], int]:
    state = new_game()
    discarded = state.seats[MARY].hand[0]
    events, _ = run(state, c.DiscardDomino(MARY, discarded))
    return events, discarded


def test_others_see_that_a_domino_was_discarded_and_drawn_but_not_which() -> None:
    events, discarded = mary_discards()
    (dropped,) = of_type(events, e.DominoDiscarded)
    (drawn,) = of_type(events, e.DominoDrawn)

    for viewer in (PAUL, FRANK, SPECTATOR):
        assert visible_event(dropped, viewer).domino is None
        assert visible_event(dropped, viewer).cause is None  # the command names the domino
        assert visible_event(drawn, viewer).domino is None
        assert visible_event(dropped, viewer).version == dropped.version
    assert visible_event(dropped, MARY).domino == discarded
    assert visible_event(drawn, MARY).domino == drawn.domino is not None


def test_nobody_sees_the_deal_in_the_creation_event() -> None:
    events, _ = run(None, c.CreateGame(game_id="g", players=3, seed="s"))
    (created,) = of_type(events, e.GameCreated)

    for viewer in (MARY, PAUL, FRANK, SPECTATOR):
        assert visible_event(created, viewer).deal is None


def area_n_scored(closer: int) -> e.AreaScored:
    """The scoring of area N holding Mary's bush when ``closer`` closes it."""
    events, _ = close_area_n({(5, 9): "orange bush"}, closer)
    (scored,) = of_type(events, e.AreaScored)
    return scored


def test_only_the_closer_sees_which_token_an_area_scoring_gave_them() -> None:
    scored = area_n_scored(FRANK)
    assert scored.token is not None

    assert visible_event(scored, FRANK).token == scored.token
    for viewer in (MARY, PAUL, SPECTATOR):
        seen = visible_event(scored, viewer)
        assert seen.token is None
        assert seen.awards == scored.awards  # the points are public
        assert (seen.main, seen.minor) == (4, 2)


def test_a_token_returned_to_the_box_at_the_end_stays_unseen() -> None:
    state = new_game()
    state = replace(
        state,
        phase="final_scoring",
        current=-1,
        seats=tuple(replace(s, hand=(), reserve=()) for s in state.seats),
    )

    events, _ = run(state, c.FinishGame("unit-test seed"))

    final = of_type(events, e.AreaScored)
    assert len(final) == 18
    for scored in final:
        for viewer in (MARY, PAUL, FRANK, SPECTATOR):
            assert visible_event(scored, viewer).token is None


def test_a_redacted_event_does_not_let_others_recover_the_hidden_domino_from_its_hash() -> None:
    # Every event carries the SHA-256 of its own content. If a redacted event keeps the hash of
    # the unredacted one, trying the 55 dominoes in turn finds the hidden one.
    events, _ = mary_discards()
    (drawn,) = of_type(events, e.DominoDrawn)

    seen = visible_event(drawn, PAUL)

    recovered = [d for d in range(55) if e.chain_hash(replace(seen, domino=d)) == seen.hash]
    assert recovered == [], f"Paul can tell Mary drew domino {recovered}"


def test_a_redacted_area_scoring_does_not_let_others_recover_the_token_from_its_hash() -> None:
    scored = area_n_scored(FRANK)
    seen = visible_event(scored, MARY)

    candidates = [t.id for t in new_game().board.tokens]
    recovered = [t for t in candidates if e.chain_hash(replace(seen, token=t)) == seen.hash]
    assert recovered == [], f"Mary can tell Frank took token {recovered}"


def test_memoised_views_equal_a_fresh_render_after_every_event() -> None:
    """The view renders areas, plants, dominoes and each seat's part again only when their
    inputs changed (a memo per game; an area only when a plant of its own came or went): after
    every event of whole games on every board, for the spectator and every seat, with games
    interleaved as a projector sees them (the memo holding every game's parts), and with
    histories taken back, it is byte for byte what rendering with an empty memo gives."""
    from renature import view as view_module
    from renature.game import play
    from renature.rules import evolve

    logs = [
        play(players, f"memo-{board}-{players}", ["greedy"] * players, board=board)[0]
        for board in ("base", "valley", "valley-back")
        for players in (2, 4)
    ]
    states: list[GameState | None] = [None] * len(logs)
    for step in range(max(len(log) for log in logs)):
        for index, log in enumerate(logs):
            if step >= len(log):
                continue
            state = states[index] = evolve(states[index], log[step])
            viewers = [SPECTATOR, *range(state.players)]
            memoised = [msgspec.json.encode(view(state, viewer)) for viewer in viewers]
            assert memoised == [msgspec.json.encode(view(state, viewer)) for viewer in viewers]
            held = view_module._memo.copy()  # every game's parts, as a projector holds them
            view_module._memo.clear()
            view_module._placed_domino.cache_clear()
            assert memoised == [msgspec.json.encode(view(state, viewer)) for viewer in viewers]
            view_module._memo.clear()
            view_module._memo.update(held)
    # A history taken back (a crash lost the last events): a game's view at its end, then at
    # its third event, then forward again to halfway and to the end; and each event taken back.
    for log in logs:
        history = [evolve(None, log[0])]
        for event in log[1:]:
            history.append(evolve(history[-1], event))
        steps_back = [(number, number - 1) for number in range(1, len(history))]
        for earlier, later in [(-1, 2), (2, len(log) // 2), (len(log) // 2, -1), *steps_back]:
            viewers = [SPECTATOR, *range(history[0].players)]
            for viewer in viewers:
                view(history[earlier], viewer)  # the memo holds the earlier state's parts
            memoised = [msgspec.json.encode(view(history[later], viewer)) for viewer in viewers]
            view_module._memo.clear()
            fresh = [msgspec.json.encode(view(history[later], viewer)) for viewer in viewers]
            assert memoised == fresh, (log[0].game_id, earlier, later)
