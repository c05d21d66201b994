"""The platform's sealed choices (``gameplatform.sealed``): committed, masked, then revealed."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from gameplatform.sealed import (
    MAX_SALT,
    Sealed,
    SealedChoice,
    commitment,
    reveal_problem,
    salt_problem,
)

choices = st.text(min_size=1, max_size=20)
salts = st.text(max_size=MAX_SALT)


def test_a_commitment_is_the_sha256_of_the_choice_and_the_salt() -> None:
    expected = hashlib.sha256(b"rock:0123abcd").hexdigest()
    assert commitment("rock", "0123abcd") == expected
    assert SealedChoice.of("rock", "0123abcd") == SealedChoice(expected, "rock", "0123abcd")


@given(choice=choices, salt=salts, other=choices)
def test_a_reveal_opens_its_commitment_and_no_other_choice_does(
    choice: str, salt: str, other: str
) -> None:
    sealed = commitment(choice, salt)
    assert reveal_problem(sealed, choice, salt) is None
    if other != choice:
        problem = reveal_problem(sealed, other, salt)
        assert problem is not None
        assert sealed in problem


def test_nobody_has_chosen_in_a_new_decision_and_it_completes_when_every_seat_has() -> None:
    sealed = Sealed.open(3)
    assert sealed.waiting_for() == [0, 1, 2]
    sealed = sealed.put(2, SealedChoice.of("paper", "s2")).put(0, SealedChoice.of("rock", "s0"))
    assert (sealed.has_chosen(0), sealed.has_chosen(1), sealed.has_chosen(2)) == (True, False, True)
    assert sealed.waiting_for() == [1]
    assert not sealed.is_complete
    assert sealed.put(1, SealedChoice.of("rock", "s1")).is_complete


def test_until_every_seat_has_chosen_a_choice_is_masked_for_everyone_but_its_seat() -> None:
    sealed = Sealed.open(2).put(0, SealedChoice.of("scissors", "salt-0"))
    for viewer in (1, None):
        seen = sealed.masked(viewer)
        assert seen.slots[0] == SealedChoice(commitment("scissors", "salt-0"))
        assert "scissors" not in repr(seen)
        assert "salt-0" not in repr(seen)
    assert sealed.masked(0) == sealed
    complete = sealed.put(1, SealedChoice.of("rock", "salt-1"))
    assert complete.masked(None) == complete  # revealed to everyone once all are in


def test_a_salt_is_bounded() -> None:
    assert salt_problem("f" * MAX_SALT) is None
    assert salt_problem("") is None  # a service that draws none risks only its own seat
    assert salt_problem("f" * (MAX_SALT + 1)) == f"A salt has at most {MAX_SALT} characters."
