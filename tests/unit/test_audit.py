"""Dispute audit: a game played by the rules passes, and every kind of tampering with its stored
events is caught and named (which event, which check, what differs).

A forger who only edits an event breaks the hash chain. A forger who also recomputes the chain
(every ``prev_hash`` and ``hash`` from the start, as anybody can) is still caught: the audit
re-decides every recorded command and compares the events the rules give with the stored ones,
checks the revealed seed against the commitment made at creation, and reproduces the deal.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import msgspec
import pytest
from msgspec.structs import replace

from renature import commands as c
from renature import events as e
from renature.audit import AuditReport, audit, batches, check_chain
from renature.deal import commitment
from renature.game import play
from renature.state import GameState
from support.chain import rechained

Game = tuple[tuple[e.Event, ...], GameState]


@cache
def game(players: int, seed: str, board: str = "base", bots: str = "greedy") -> Game:
    """A whole bot game played in process (cached: the tests only read it)."""
    names = bots.split(",") if "," in bots else [bots] * players
    log, state = play(players, seed, names, board=board)
    return tuple(log), state


def events_of(players: int = 3, seed: str = "dispute") -> list[e.Event]:
    return list(game(players, seed)[0])


def renumbered(events: Sequence[e.Event]) -> list[e.Event]:
    """Versions 1, 2, 3, ... again, and the chain recomputed (hiding a dropped event)."""
    return rechained([replace(ev, version=n) for n, ev in enumerate(events, start=1)])


def first_index(events: Sequence[e.Event], kind: type[e.Event], **match: object) -> int:
    for index, event in enumerate(events):
        if isinstance(event, kind) and all(getattr(event, k) == v for k, v in match.items()):
            return index
    raise AssertionError(f"no {kind.__name__} with {match}")


def scoring_plant(events: Sequence[e.Event]) -> int:
    """The index of a plant that scored more than its own point (others of its colour)."""
    return next(i for i, ev in enumerate(events) if isinstance(ev, e.PlantPlaced) and ev.points > 1)


def bad(report: AuditReport) -> tuple[int, str, str]:
    assert not report.ok
    assert report.first_bad is not None
    assert report.findings[0] == report.first_bad
    assert report.scores == []  # nothing is vouched for once a check fails
    return report.first_bad.version, report.first_bad.check, report.first_bad.message


# -- a fair game passes --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "board", "bots"),
    [
        (2, "base", "greedy,random"),
        (3, "base", "random,greedy,greedy"),
        (4, "base", "greedy"),
        (2, "valley", "greedy"),
        (3, "valley", "random,greedy,random"),
        (2, "valley-back", "greedy,random"),
        (4, "valley-back", "greedy"),
    ],
)
def test_a_game_played_by_the_rules_passes_every_check(players: int, board: str, bots: str) -> None:
    log, state = game(players, f"fair-{players}-{board}", board, bots)
    report = audit(log)
    assert report.ok, report.findings
    assert report.first_bad is None
    assert report.findings == []
    assert report.finished
    assert report.game_id == state.game_id
    assert report.events == len(log) == state.version
    assert report.batches == sum(1 for ev in log if ev.cause is not None)
    assert report.scores == [seat.score for seat in state.seats]
    assert report.winners == list(state.winners)
    ended = log[-1]
    assert isinstance(ended, e.GameEnded)
    assert report.scores == ended.scores
    assert "seed matches commitment" in report.checks
    assert "deal reproduced from seed" in report.checks
    assert "final scoring" in report.checks


def test_every_batch_starts_with_the_command_that_caused_it() -> None:
    log = events_of()
    groups = batches(log)
    assert sum(len(g) for g in groups) == len(log)
    for group in groups:
        assert group[0].cause is not None
        assert all(ev.cause is None for ev in group[1:])
    cause = groups[0][0].cause
    assert cause is not None
    assert isinstance(cause.command, c.CreateGame)
    assert cause.command.seed == ""  # never recorded
    finish = groups[-1][0].cause
    assert finish is not None
    assert isinstance(finish.command, c.FinishGame)


def test_an_unfinished_game_passes_but_its_deal_waits_for_the_seed() -> None:
    log = events_of()
    # cut after a whole batch in mid-game: the seed is still secret
    groups = batches(log)
    cut = sum(len(g) for g in groups[: len(groups) // 2])
    report = audit(log[:cut])
    assert report.ok, report.findings
    assert not report.finished
    assert report.events == cut
    assert "deal reproduced from seed" not in report.checks
    assert "every command re-decided" in report.checks


def test_the_report_is_json() -> None:
    report = audit(events_of())
    data = msgspec.json.decode(msgspec.json.encode(report))
    assert data["ok"] is True
    assert data["first_bad"] is None
    assert msgspec.json.decode(msgspec.json.encode(report), type=AuditReport) == report


def test_no_events_is_no_game() -> None:
    report = audit([])
    assert (report.ok, report.events) == (False, 0)
    assert report.first_bad is not None
    assert report.first_bad.check == "stream"


# -- tampering is caught and named ---------------------------------------------------------------


def test_a_changed_point_value_breaks_the_hash_chain() -> None:
    log = events_of()
    at = scoring_plant(log)
    plant = log[at]
    assert isinstance(plant, e.PlantPlaced)
    log[at] = replace(plant, points=plant.points + 3)
    version, check, message = bad(audit(log))
    assert (version, check) == (plant.version, "hash chain")
    assert f"event {plant.version} (PlantPlaced)" in message
    assert "changed after it was written" in message
    assert check_chain(log)[0].version == plant.version
    report = audit(log)
    assert "hash chain" not in report.checks  # what failed is never listed as checked
    assert "versions" in report.checks


def test_a_changed_point_value_with_the_chain_recomputed_is_caught_by_the_rules() -> None:
    log = events_of()
    at = scoring_plant(log)
    plant = log[at]
    assert isinstance(plant, e.PlantPlaced)
    forged = rechained([*log[:at], replace(plant, points=plant.points + 3), *log[at + 1 :]])
    assert check_chain(forged) == []  # the chain alone no longer shows it
    version, check, message = bad(audit(forged))
    assert (version, check) == (plant.version, "rules")
    assert f"points: stored {plant.points + 3}, rules give {plant.points}" in message


def test_a_changed_plant_colour_is_caught() -> None:
    log = events_of()
    at = scoring_plant(log)
    plant = log[at]
    assert isinstance(plant, e.PlantPlaced)
    other = "white" if plant.colour != "white" else "orange"
    tampered = [*log[:at], replace(plant, colour=other), *log[at + 1 :]]
    version, check, _ = bad(audit(tampered))
    assert (version, check) == (plant.version, "hash chain")
    version, check, message = bad(audit(rechained(tampered)))
    assert (version, check) == (plant.version, "rules")
    assert f"colour: stored {other!r}, rules give {plant.colour!r}" in message


def test_a_dropped_event_is_caught() -> None:
    log = events_of()
    at = first_index(log, e.DominoDrawn)
    dropped = log[at]
    tampered = log[:at] + log[at + 1 :]
    report = audit(tampered)
    version, check, message = bad(report)
    assert (version, check) == (dropped.version, "versions")
    assert f"event number {dropped.version} carries version {dropped.version + 1}" in message
    assert "dropped" in message
    # the event now in its place does not link to its new predecessor either
    assert any(f.version == dropped.version and f.check == "hash chain" for f in report.findings)


def test_a_dropped_event_hidden_by_renumbering_is_caught_by_the_rules() -> None:
    log = events_of()
    at = first_index(log, e.DominoDrawn)
    dropped = log[at]
    forged = renumbered(log[:at] + log[at + 1 :])
    assert check_chain(forged) == []
    version, check, message = bad(audit(forged))
    assert (version, check) == (dropped.version, "rules")
    assert f"event {dropped.version} (DominoDrawn) is missing" in message


def test_two_swapped_events_are_caught() -> None:
    log = events_of()
    # two events of one batch (neither records the command), e.g. a plant and an area scoring
    at = next(
        i
        for i in range(len(log) - 1)
        if log[i].cause is None
        and log[i + 1].cause is None
        and type(log[i]) is not type(log[i + 1])
    )
    first, second = log[at], log[at + 1]
    tampered = [*log[:at], second, first, *log[at + 2 :]]
    version, check, message = bad(audit(tampered))
    assert (version, check) == (first.version, "versions")
    assert f"event number {first.version} carries version {second.version}" in message
    # given each other's numbers with the chain recomputed: the rules see the order
    forged = renumbered(tampered)
    assert check_chain(forged) == []
    version, check, message = bad(audit(forged))
    assert (version, check) == (first.version, "rules")
    expected = f"it is a {type(second).__name__}, the rules give a {type(first).__name__}"
    assert expected in message


def test_a_move_swapped_before_the_end_of_the_turn_is_illegal() -> None:
    """The next player's first move put before the previous turn ended: out of turn."""
    log = events_of()
    at = first_index(log, e.TurnEnded)
    assert log[at + 1].cause is not None
    tampered = [*log[:at], log[at + 1], log[at], *log[at + 2 :]]
    version, check, message = bad(audit(renumbered(tampered)))
    assert (version, check) == (log[at].version, "legality")
    assert "is illegal" in message


def test_a_forged_deal_is_caught_even_with_the_chain_recomputed() -> None:
    log = events_of()
    created = log[0]
    assert isinstance(created, e.GameCreated)
    assert created.deal is not None
    hands = created.deal.hands
    swapped = [hands[1], hands[0], *hands[2:]]  # seat 0 claims seat 1's starting hand
    forged_deal = replace(created.deal, hands=swapped)
    tampered = [replace(created, deal=forged_deal), *log[1:]]
    version, check, _ = bad(audit(tampered))
    assert (version, check) == (1, "hash chain")
    version, check, message = bad(audit(rechained(tampered)))
    assert (version, check) == (1, "deal")
    assert f"deal.hands: stored {swapped}, rules give {hands}" in message
    assert "reserves" not in message  # only what differs is named


def test_a_wrong_revealed_seed_is_caught() -> None:
    log = events_of()
    ended = log[-1]
    assert isinstance(ended, e.GameEnded)
    forged = rechained([*log[:-1], replace(ended, seed="a seed of my choosing")])
    report = audit(forged)
    version, check, message = bad(report)
    # the fault is the seed, not the deal: a seed that fails its commitment proves nothing
    assert (version, check) == (ended.version, "seed")
    assert "'a seed of my choosing' does not match the commitment" in message
    assert commitment("a seed of my choosing") in message
    assert all(f.check != "deal" for f in report.findings)


def test_a_finishing_command_that_records_the_seed_is_caught() -> None:
    """The seed is revealed by GameEnded, by design; a FinishGame cause (on the batch's first
    event, which spectators see) that carries it is not what the rules record."""
    log = events_of()
    ended = log[-1]
    assert isinstance(ended, e.GameEnded)
    at = next(i for i in range(len(log) - 1, -1, -1) if log[i].cause is not None)
    cause = log[at].cause
    assert cause is not None
    assert cause.command == c.FinishGame(seed="", salt="")  # recorded without the seed
    leaky = replace(cause, command=c.FinishGame(ended.seed, ended.salt))
    tampered = [*log[:at], replace(log[at], cause=leaky), *log[at + 1 :]]
    report = audit(rechained(tampered))
    version, check, message = bad(report)
    assert (version, check) == (log[at].version, "rules")
    assert "cause" in message


def test_an_illegal_move_with_the_chain_recomputed_is_caught_by_re_deciding() -> None:
    """A forger rewrites a placement (command and event) onto spaces covered long before."""
    log = events_of(2, "illegal")
    placed = [i for i, ev in enumerate(log) if isinstance(ev, e.DominoPlaced)]
    earlier, at = log[placed[0]], log[placed[3]]
    assert isinstance(earlier, e.DominoPlaced)
    assert isinstance(at, e.DominoPlaced)
    assert at.cause is not None
    assert isinstance(at.cause.command, c.PlaceDomino)
    onto = (c.Cell(earlier.first.x, earlier.first.y), c.Cell(earlier.second.x, earlier.second.y))
    command = replace(at.cause.command, first=onto[0], second=onto[1])
    forged_event = replace(
        at,
        cause=replace(at.cause, command=command),
        first=replace(at.first, x=onto[0].x, y=onto[0].y),
        second=replace(at.second, x=onto[1].x, y=onto[1].y),
    )
    forged = rechained([*log[: placed[3]], forged_event, *log[placed[3] + 1 :]])
    assert check_chain(forged) == []  # the chain does not show it
    version, check, message = bad(audit(forged))
    assert (version, check) == (at.version, "legality")
    assert "the recorded PlaceDomino is illegal" in message
    assert f"({onto[0].x}, {onto[0].y}) is already covered" in message


def test_a_domino_turned_round_in_the_event_only_is_caught_by_the_rules() -> None:
    """The command is left as it was; only the stored event shows the animals swapped."""
    log = events_of(2, "illegal")
    at = first_index(log, e.DominoPlaced)
    placed = log[at]
    assert isinstance(placed, e.DominoPlaced)
    turned = replace(
        placed,
        first=replace(placed.first, animal=placed.second.animal),
        second=replace(placed.second, animal=placed.first.animal),
    )
    if turned == placed:  # a domino of two equal animals: claim another domino instead
        turned = replace(placed, domino=(placed.domino + 1) % 55)
    version, check, message = bad(audit(rechained([*log[:at], turned, *log[at + 1 :]])))
    assert (version, check) == (placed.version, "rules")
    assert "DominoPlaced differs from what the rules give" in message


def test_an_event_from_another_game_is_caught() -> None:
    log = events_of()
    at = first_index(log, e.DominoDrawn)
    foreign = rechained([*log[:at], replace(log[at], game_id="another"), *log[at + 1 :]])
    version, check, message = bad(audit(foreign))
    assert (version, check) == (log[at].version, "rules")
    assert "game_id: stored 'another'" in message


def test_a_batch_without_its_command_is_caught() -> None:
    log = events_of()
    at = first_index(log, e.PlantPlaced)
    forged = rechained([*log[:at], replace(log[at], cause=None), *log[at + 1 :]])
    version, check, _ = bad(audit(forged))
    # without its cause the plant joins the batch before it, which the rules did not give
    assert version == log[at].version
    assert check == "rules"


def test_the_creation_of_an_unfinished_game_is_checked_up_to_its_deal() -> None:
    """Before the seed is revealed the deal cannot be checked, everything else can."""
    groups = batches(events_of())
    part = [event for group in groups[:30] for event in group]  # whole batches
    created = part[0]
    assert isinstance(created, e.GameCreated)
    assert audit(part).ok
    changed = rechained([replace(created, players=4), *part[1:]])
    version, check, message = bad(audit(changed))
    assert (version, check) == (1, "rules")
    assert "players: stored 4, rules give 3" in message
    # an event slipped in after the creation, as if the creation had caused it
    slipped = replace(part[5], cause=None)
    forged = renumbered([created, slipped, *part[1:]])
    version, check, message = bad(audit(forged))
    assert (version, check) == (2, "rules")
    assert "the command gives 1 event, the stream holds 2" in message
    assert f"event 2 ({type(slipped).__name__}) is extra" in message


def test_a_stream_cut_in_the_middle_of_a_command_is_caught() -> None:
    log = events_of()
    group = next(g for g in batches(log) if len(g) >= 3)
    cut = log[: group[1].version]  # the command's first two events, not the rest
    version, check, message = bad(audit(cut))
    assert (version, check) == (group[2].version, "rules")
    assert f"the stream holds 2 events: event {group[2].version}" in message
    assert "is missing" in message
