"""Seed commitments hide the seed: a salted (keyed) commitment cannot be brute-forced, the salt is
revealed with the seed at the end and the audit checks both; a chosen seed is said so."""

from __future__ import annotations

import hashlib
import secrets

import pytest
from msgspec.structs import replace

from renature import commands as c
from renature import events as e
from renature.audit import audit
from renature.deal import SALTED, commitment
from renature.game import setup_commands
from renature.rules import execute, legal_actions
from renature.state import GameState
from renature.view import view as game_view
from renature.view import visible_event

CHOSEN = "731337"  # a small chosen seed: once found from a bare SHA-256 in 0.33 s
SALT = "5a" * 32


def brute_force(target: str, limit: int) -> str | None:
    """The attack on a bare commitment: try every small number as the seed (bare SHA-256)."""
    for n in range(limit):
        if hashlib.sha256(str(n).encode()).hexdigest() == target:
            return str(n)
    return None


def test_an_unsalted_commitment_of_a_small_seed_gives_the_seed_away() -> None:
    assert brute_force(commitment(CHOSEN), 800_000) == CHOSEN  # the attack works on that format


def test_a_salted_commitment_of_a_small_seed_gives_nothing_away() -> None:
    salted = commitment(CHOSEN, SALT)
    assert salted.startswith(SALTED)
    digest = salted.removeprefix(SALTED)
    assert brute_force(digest, 800_000) is None
    assert brute_force(salted, 800_000) is None
    # Keyed: the same seed under another salt commits to something unrelated.
    assert commitment(CHOSEN, secrets.token_hex(32)) != salted


def finished_game(salt: str, chosen: bool) -> list[e.Event]:
    """A whole 2-player game created with ``salt``, finished with it."""
    log: list[e.Event] = []
    state: GameState | None = None
    commands: list[c.Command] = list(setup_commands("salted", 2, CHOSEN, "base", ["a", "b"]))
    commands[0] = replace(commands[0], salt=salt, chosen_seed=chosen)
    for command in commands:
        events, state = execute(state, command)
        log += events
    assert state is not None
    while state.phase != "final_scoring":
        seat = state.current
        events, state = execute(state, legal_actions(state, seat)[0])
        log += events
    events, state = execute(state, c.FinishGame(CHOSEN, salt))
    return log + events


@pytest.fixture(scope="module")
def salted_log() -> list[e.Event]:
    return finished_game(SALT, chosen=True)


def test_the_salt_is_revealed_with_the_seed_and_the_audit_checks_both(
    salted_log: list[e.Event],
) -> None:
    created, ended = salted_log[0], salted_log[-1]
    assert isinstance(created, e.GameCreated)
    assert isinstance(ended, e.GameEnded)
    assert created.seed_commitment == commitment(CHOSEN, SALT)
    assert (ended.seed, ended.salt) == (CHOSEN, SALT)
    report = audit(salted_log)
    assert report.ok, report.findings
    assert "seed matches commitment" in report.checks


def test_a_wrong_salt_fails_the_audit(salted_log: list[e.Event]) -> None:
    ended = salted_log[-1]
    assert isinstance(ended, e.GameEnded)
    forged = [*salted_log[:-1], e.seal(replace(ended, salt="00" * 32), ended.prev_hash)]
    report = audit(forged)
    assert not report.ok
    assert report.first_bad is not None
    assert report.first_bad.check == "seed"
    assert "HMAC with the revealed salt" in report.first_bad.message


def test_finishing_with_the_seed_but_not_the_salt_is_refused(salted_log: list[e.Event]) -> None:
    from renature.errors import SeedMismatch
    from renature.game import replay

    at = max(i for i, ev in enumerate(salted_log) if ev.cause is not None)
    before = replay(salted_log[:at])
    assert before is not None
    assert before.phase == "final_scoring"
    with pytest.raises(SeedMismatch):
        execute(before, c.FinishGame(CHOSEN))


def test_no_event_but_game_ended_carries_the_seed_or_the_salt(salted_log: list[e.Event]) -> None:
    """By design, not by luck: the finish's cause (on an event spectators see) records neither;
    GameEnded reveals them."""
    for event in salted_log[:-1]:
        for viewer in (None, 0, 1):
            text = e.encode(visible_event(event, viewer)).decode()
            assert SALT not in text
            assert f'"seed":"{CHOSEN}"' not in text
    finish = max(i for i, ev in enumerate(salted_log) if ev.cause is not None)
    cause = salted_log[finish].cause
    assert cause is not None
    assert cause.command == c.FinishGame(seed="", salt="")


def test_a_game_dealt_from_a_chosen_seed_says_so_in_every_view(salted_log: list[e.Event]) -> None:
    from renature.game import replay

    state = replay(salted_log[:1])
    assert state is not None
    assert all(game_view(state, viewer).chosen_seed for viewer in (None, 0, 1))
    secret = replay(finished_game(SALT, chosen=False)[:1])
    assert secret is not None
    assert not any(game_view(secret, viewer).chosen_seed for viewer in (None, 0, 1))
