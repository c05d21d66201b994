"""The text's VARIANTS: "Play only Phase1" with extra hands, "Play only Phase2" with the pieces
distributed after a Janken (both ways), and "when Players decide" as an agreement that ends
Phase 2 (rulings 13 to 16)."""

from __future__ import annotations

import msgspec
import pytest
from rn_positions import phase2, squares
from rn_variants import (
    AGREEMENT,
    GIVE,
    GOLD_SEAT,
    PHASE1,
    SALTS,
    SILVER_SEAT,
    TAKE,
    janken,
    show,
    started,
)

from gameplatform.sealed import commitment
from renaissance import commands as c
from renaissance import events as e
from renaissance.adapter import GAME
from renaissance.audit import audit
from renaissance.components import components
from renaissance.errors import (
    IllegalChoice,
    IllegalProposal,
    InvalidCommand,
    NotYourTurn,
    WrongPhase,
)
from renaissance.figures import extra_hands_made, makes_ring, rectangle_pieces
from renaissance.game import play
from renaissance.hosting import options_of
from renaissance.position import piece_index
from renaissance.rules import execute, legal_actions
from renaissance.state import GameState
from renaissance.view import masked_state, view, visible_event


def pieces(*names: str) -> list[int]:
    return [piece_index(name) for name in names]


# --- Play only Phase 1 ---------------------------------------------------------------------------


def test_phase_1_can_be_played_independently_each_set_ends_with_phase_1() -> None:
    log, state = play("alone", ["greedy", "random"], sets=2, variant=PHASE1)
    kinds = {type(event) for event in log}
    assert e.Phase1Ended in kinds
    assert not kinds & {e.PreparationCompleted, e.Phase2Ended, e.MarkerMoved}
    ends = [event for event in log if isinstance(event, e.SetEnded)]
    assert [event.set_number for event in ends] == [1, 2]
    assert state.is_over
    assert audit(log).ok


def test_extra_hands_rectangles_are_made_with_multiple_polyominoes() -> None:
    """ "such as rectangles": 2 to 4 pieces filling a rectangle at least 2 by 2, a point each."""
    assert rectangle_pieces(pieces("domino-1", "domino-2")) == 2  # 2 x 2
    assert rectangle_pieces(pieces("tri-V-1", "tri-V-2")) == 2  # 2 x 3
    assert rectangle_pieces(pieces("domino-1", "domino-2", "tetra-O")) == 3  # 2 x 4
    assert rectangle_pieces(pieces("tetra-T", "domino-1")) == 0  # no rectangle of 6
    assert rectangle_pieces(pieces("tetra-I", "tetra-O", "domino-1", "domino-2")) == 4  # 2 x 6
    assert rectangle_pieces(pieces("tetra-I", "tetra-L", "tetra-O")) == 0
    assert rectangle_pieces(pieces("domino-1", "tri-I-1")) == 0  # 1 x 5 is a line
    assert rectangle_pieces(pieces("tetra-O")) == 0  # one piece is not "multiple"


def test_extra_hands_a_diagram_with_a_hole_in_the_middle() -> None:
    """ "diagrams with a hole in the middle": the 8 squares around a 3x3 square's middle."""
    assert makes_ring(pieces("tri-I-1", "tri-V-1", "domino-1"))
    assert makes_ring(pieces("tetra-L", "domino-1", "domino-2"))
    assert not makes_ring(pieces("tri-I-1", "tri-I-2", "domino-1"))
    assert not makes_ring(pieces("tetra-T", "tetra-O"))  # a 2x2 block leaves no hole


def test_only_the_extra_hands_agreed_at_creation_score_and_points_accumulate() -> None:
    held = pieces("tri-I-1", "tri-V-1", "domino-1", "domino-2")
    assert extra_hands_made(held, ["ring"]) == [("ring", 3)]
    assert extra_hands_made(held, ["rectangle"]) == [("rectangle", 4)]  # 2 x 5 with all 4
    assert extra_hands_made(held, ["rectangle", "ring"]) == [("rectangle", 4), ("ring", 3)]
    assert extra_hands_made(held, []) == []


def test_extra_hands_are_scored_at_the_end_of_phase_1_as_hands() -> None:
    log, _ = play("extra", ["greedy", "greedy"], variant=PHASE1)
    rules = {event.rule for event in log if isinstance(event, e.PointsScored)}
    assert rules & {"rectangle", "ring"}
    assert audit(log).ok


# --- Play only Phase 2: the Janken --------------------------------------------------------------


def test_phase_2_alone_starts_with_a_janken_for_the_first_pieces() -> None:
    state = started(TAKE)
    assert state.phase == "janken"
    assert len(state.pool) == 13
    assert state.hands == ((), ())
    for seat in (SILVER_SEAT, GOLD_SEAT):  # both may show: neither waits for the other
        shows = legal_actions(state, seat)
        assert all(isinstance(a, c.ShowHand) for a in shows)
        assert {a.hand for a in shows if isinstance(a, c.ShowHand)} == {"rock", "paper", "scissors"}


def test_either_seat_may_show_first_and_a_hand_is_shown_once() -> None:
    state = started(TAKE)
    _, after = show(state, SILVER_SEAT, "rock")
    assert after.phase == "janken"
    assert legal_actions(after, SILVER_SEAT) == []
    with pytest.raises(IllegalChoice, match="already"):
        show(after, SILVER_SEAT, "paper")


def test_a_hand_is_sealed_to_the_other_seat_and_spectators_until_both_are_in() -> None:
    state = started(TAKE)
    events, after = show(state, GOLD_SEAT, "scissors")
    (shown,) = events
    assert isinstance(shown, e.HandShown)
    assert shown.commitment == commitment("scissors", SALTS[GOLD_SEAT])
    for viewer in (SILVER_SEAT, None):
        seen = visible_event(shown, viewer)
        assert (seen.hand, seen.salt, seen.cause) == ("", "", None)
        assert seen.commitment == shown.commitment
        janken_view = view(after, viewer).janken
        assert janken_view is not None
        assert janken_view.hands == [None, None]
        assert janken_view.commitments[GOLD_SEAT] == shown.commitment
        raw = GAME.state_json(after, viewer)
        assert b"scissors" not in raw
        assert SALTS[GOLD_SEAT].encode() not in raw
        assert masked_state(after, viewer) != after
        read = GAME.decode_state(raw)  # what a seat's bot reads: who has shown, not what
        assert read.janken is not None
        assert read.janken.waiting_for() == [SILVER_SEAT]
        assert legal_actions(read, SILVER_SEAT) == legal_actions(after, SILVER_SEAT)
    own = view(after, GOLD_SEAT).janken
    assert own is not None
    assert own.hands == [None, "scissors"]
    assert visible_event(shown, GOLD_SEAT).hand == "scissors"


def test_the_rules_reveal_both_hands_once_both_are_in_so_no_seat_can_hold_up_the_reveal() -> None:
    state = started(TAKE)
    state = show(state, GOLD_SEAT, "paper")[1]
    events, after = show(state, SILVER_SEAT, "rock")
    played = [event for event in events if isinstance(event, e.JankenPlayed)]
    assert played == [events[1]]
    assert played[0].hands == ["rock", "paper"]
    assert played[0].salts == list(SALTS)
    assert played[0].winner == GOLD_SEAT  # paper wraps rock
    assert (after.phase, after.current) == ("distribution", GOLD_SEAT)
    for viewer in (SILVER_SEAT, GOLD_SEAT, None):
        janken = view(after, viewer).janken
        assert janken is not None
        assert janken.hands == ["rock", "paper"]


def test_rock_breaks_scissors_scissors_cut_paper_and_a_draw_is_played_again() -> None:
    assert janken(started(TAKE), gold="rock", silver="scissors").current == GOLD_SEAT
    assert janken(started(TAKE), gold="paper", silver="scissors").current == SILVER_SEAT
    again = janken(started(TAKE), gold="rock", silver="rock")
    assert (again.phase, again.janken_round) == ("janken", 2)


def test_the_winner_of_janken_takes_one_and_the_other_takes_another() -> None:
    state = janken(started(TAKE), gold="rock", silver="scissors")
    with pytest.raises(NotYourTurn):
        execute(state, c.ChoosePiece(SILVER_SEAT, "tetra-O"))
    state = execute(state, c.ChoosePiece(GOLD_SEAT, "domino-1"))[1]
    assert state.current == SILVER_SEAT
    with pytest.raises(IllegalChoice, match="not among the pieces left"):
        execute(state, c.ChoosePiece(SILVER_SEAT, "domino-1"))
    events, state = execute(state, c.ChoosePiece(SILVER_SEAT, "tetra-O"))
    assert state.hands == ((piece_index("tetra-O"),), (piece_index("domino-1"),))
    assert isinstance(events[-1], e.JankenStarted)  # "The winner of another Janken takes..."
    assert (state.phase, state.janken_round, len(state.pool)) == ("janken", 2, 11)


def test_the_winner_of_janken_chooses_one_piece_for_the_opponent_and_the_other_does_the_same() -> (
    None
):
    state = janken(started(GIVE), gold="scissors", silver="paper")
    state = execute(state, c.ChoosePiece(GOLD_SEAT, "tetra-T"))[1]
    state = execute(state, c.ChoosePiece(SILVER_SEAT, "domino-2"))[1]
    assert state.hands == ((piece_index("tetra-T"),), (piece_index("domino-2"),))


def test_players_repeat_this_till_the_last_piece_is_taken_then_phase_2_begins() -> None:
    log, state = play("deal", ["random", "random"], variant=TAKE)
    distributed = [event for event in log if isinstance(event, e.PieceDistributed)]
    assert sorted(event.piece for event in distributed) == sorted(p.id for p in components().pieces)
    done = next(event for event in log if isinstance(event, e.DistributionCompleted))
    assert sum(len(hand) for hand in done.hands.values()) == 13
    assert any(isinstance(event, e.PreparationCompleted) for event in log)
    assert not any(isinstance(event, e.PieceAcquired) for event in log)
    assert state.is_over
    assert audit(log).ok


def test_phase_2_alone_scores_only_the_penalties() -> None:
    _, state = play("penalties", ["greedy", "random"], variant=GIVE)
    assert all(score <= 0 for score in state.scores)


def test_a_janken_hand_outside_its_step_or_of_no_hand_is_refused() -> None:
    with pytest.raises(WrongPhase):
        execute(started(AGREEMENT), c.ShowHand(SILVER_SEAT, "rock", SALTS[0]))
    with pytest.raises(InvalidCommand, match="rock, paper or scissors"):
        execute(started(TAKE), c.ShowHand(SILVER_SEAT, "", SALTS[0]))
    with pytest.raises(msgspec.ValidationError):
        GAME.seat_command({"type": "ShowHand", "seat": 0, "hand": "lizard"})


def test_the_service_seals_a_hand_with_its_own_salt_and_provenance_leaves_it_out() -> None:
    sent = GAME.seat_command({"type": "ShowHand", "seat": 0, "hand": "rock", "salt": "mine"})
    assert GAME.needs_seed(sent)
    sealed = GAME.with_seed(sent, "f00d" * 8)
    assert sealed == c.ShowHand(0, "rock", "f00d" * 8)
    assert GAME.public_command(sealed) == c.ShowHand(0, "", "")


def test_the_audit_rechecks_every_revealed_hand_against_its_commitment() -> None:
    log, _ = play("forged", ["random", "greedy"], variant=TAKE)
    assert "Janken hands open their commitments" in audit(log).checks
    first = next(n for n, event in enumerate(log) if isinstance(event, e.JankenPlayed))
    played = log[first]
    assert isinstance(played, e.JankenPlayed)
    swapped = {"rock": "paper", "paper": "scissors", "scissors": "rock"}
    forged_event = msgspec.structs.replace(played, hands=[swapped[h] for h in played.hands])
    forged = [*log[:first], forged_event, *log[first + 1 :]]
    report = audit(forged)
    assert not report.ok
    assert {finding.check for finding in report.findings} >= {"hash chain", "sealed", "rules"}


# --- Phase 2 ends when the players decide -------------------------------------------------------


EMPTY = """
    .......
    .......
    .......
    ...#...
    .......
    .......
    .......
"""
MARKERS = """
    g......
    .......
    .......
    ...#...
    .......
    .......
    ......s
"""


def agreed_phase2(agreement: bool = True) -> GameState:
    state = phase2(EMPTY, MARKERS, hands=(("domino-1",), ("tetra-O", "domino-2")))
    return msgspec.structs.replace(state, phase2_agreement=agreement)


def test_phase_2_ends_when_the_players_decide_a_proposal_accepted_by_the_other() -> None:
    state = agreed_phase2()
    assert c.ProposeEnd(GOLD_SEAT) in legal_actions(state, GOLD_SEAT)
    _, asked = execute(state, c.ProposeEnd(GOLD_SEAT))
    assert (asked.phase, asked.current) == ("phase2_answer", SILVER_SEAT)
    assert legal_actions(asked, SILVER_SEAT) == [
        c.AcceptProposal(SILVER_SEAT),
        c.DeclineProposal(SILVER_SEAT),
    ]
    events, after = execute(asked, c.AcceptProposal(SILVER_SEAT))
    ended = next(event for event in events if isinstance(event, e.Phase2Ended))
    assert ended.by == "agreement"
    assert ended.unplaced == {"gold": ["tetra-O", "domino-2"], "silver": ["domino-1"]}
    penalties = [event.points for event in events if isinstance(event, e.PointsScored)]
    assert penalties == [-6, -2]
    assert after.is_over


def test_a_declined_end_leaves_the_proposer_to_place_a_piece_and_one_proposal_a_turn() -> None:
    asked = execute(agreed_phase2(), c.ProposeEnd(GOLD_SEAT))[1]
    _, after = execute(asked, c.DeclineProposal(SILVER_SEAT))
    assert (after.phase, after.current) == ("phase2", GOLD_SEAT)
    assert c.ProposeEnd(GOLD_SEAT) not in legal_actions(after, GOLD_SEAT)
    with pytest.raises(IllegalProposal, match="One proposal a turn: place a piece"):
        execute(after, c.ProposeEnd(GOLD_SEAT))
    placed = execute(after, c.PlacePiece(GOLD_SEAT, "domino-2", squares((1, 0), (2, 0))))[1]
    assert placed.phase == "phase2_move"


def test_without_the_agreement_option_phase_2_ends_only_when_nothing_fits() -> None:
    state = agreed_phase2(agreement=False)
    assert c.ProposeEnd(GOLD_SEAT) not in legal_actions(state, GOLD_SEAT)
    with pytest.raises(IllegalProposal, match="not created to end it by agreement"):
        execute(state, c.ProposeEnd(GOLD_SEAT))


def test_in_phase_2_the_players_agree_only_on_its_end() -> None:
    with pytest.raises(IllegalProposal, match="only agree to end it"):
        execute(agreed_phase2(), c.ProposeAward(GOLD_SEAT, "domino-1", "gold"))


# --- the variant as a creation option -------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"play": "both", "extra_hands": ["ring"]}, "Phase 1 only"),
        ({"play": "phase1", "distribution": "take"}, "Phase 2 only"),
        ({"play": "phase1", "phase2_agreement": True}, "no Phase 2"),
        ({"play": "phase1", "extra_hands": ["ring", "ring"]}, "once"),
    ],
)
def test_options_that_do_not_go_together_are_refused(
    options: dict[str, object], problem: str
) -> None:
    with pytest.raises(msgspec.ValidationError, match=problem):
        options_of(options)
    variant = c.Variant(**options)  # type: ignore[arg-type]  # each case's values are a Variant's
    with pytest.raises(InvalidCommand, match=problem):
        execute(None, c.CreateGame("g", "s", variant=variant))


def test_unknown_options_and_hands_are_refused_by_name() -> None:
    with pytest.raises(msgspec.ValidationError, match="varient"):
        options_of({"varient": "phase1"})
    with pytest.raises(msgspec.ValidationError, match="extra_hands"):
        options_of({"play": "phase1", "extra_hands": ["word"]})


def test_the_standard_rules_record_no_variant_so_old_games_read_as_before() -> None:
    created = GAME.create_command("g", 2, None, {"sets": 2})
    assert b"variant" not in msgspec.json.encode(created)
    chosen = GAME.create_command("g", 2, None, {"play": "phase2", "distribution": "give"})
    assert isinstance(chosen, c.CreateGame)
    assert chosen.variant == GIVE


@pytest.mark.parametrize(
    "options",
    [
        {"play": "phase1", "extra_hands": ["ring"], "sets": 2},
        {"play": "phase2", "distribution": "give", "phase2_agreement": True},
    ],
)
def test_the_platform_plays_explains_and_draws_every_variant(options: dict[str, object]) -> None:
    log, state, outcome = GAME.simulate("platform", ["random", "greedy"], None, options)
    assert state == GAME.replay(log)
    report = audit(log)
    assert report.ok
    assert GAME.explain(log).scores == report.scores == outcome.scores
    mid = GAME.replay(log[: len(log) // 3])
    assert mid is not None
    assert GAME.picture_svg(mid, "t").startswith("<svg")
    assert GAME.picture_text(mid).strip()
    msgspec.json.encode(GAME.view(mid, None))
