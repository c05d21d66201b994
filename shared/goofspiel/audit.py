"""Dispute audit: prove from the stored events alone that a game was played by the rules.

The checks, in order of the stream:
- the hash chain, versions, re-decisions and points (``gameplatform.audit``);
- the seed revealed at the end matches the commitment made at creation (the HMAC-SHA256 of the
  seed keyed with the revealed salt; a bare SHA-256 unsalted), and reproduces the prize deck
  (the creation is re-decided with it);
- every batch starts with its cause, and re-deciding that command on the replayed state gives
  exactly the stored events: every sealed bid was a card of its seat's hand, every reveal names
  the bids that were sealed, the pot went to the higher bid or was discarded or carried as the
  game's tie rule says; a timeout claim is re-decided at its recorded time against the clock
  folded from the times recorded before it (a claim recorded before its deadline is refused),
  and a bot's bids for a timed-out seat are re-decided with the batch that made them;
- at the end, the scores are the sums of the pots won, and the cards add up: each seat showed
  each card of its suit once, and every prize was won or discarded exactly once.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
from msgspec.structs import replace

from gameplatform.audit import Auditor, AuditReport, Finding, points_add_up
from gameplatform.dealing import commitment
from goofspiel import commands as c
from goofspiel import events as e
from goofspiel.rules import RULES
from goofspiel.state import GameState

STAND_IN = "stand-in seed"


class Revealed(msgspec.Struct, frozen=True):
    seed: str
    salt: str = ""


def revealed(events: Sequence[e.Event]) -> Revealed | None:
    """What ``GameEnded`` reveals: the seed and the salt of its commitment."""
    last = events[-1] if events else None
    return Revealed(last.seed, last.salt) if isinstance(last, e.GameEnded) else None


class GoofspielAuditor(Auditor[GameState, e.Event]):
    """The platform's audit with Goofspiel's own checks: the seed against its commitment (and
    re-deciding the creation with it reproduces the prize deck), the cards at the end."""

    def __init__(self, events: Sequence[e.Event]) -> None:
        super().__init__(
            events,
            rules=RULES,
            created=e.GameCreated,
            scores=lambda state: list(state.scores),
            points_awarded=e.points_awarded,
        )
        self.seed = revealed(events)

    def check_start(self, findings: list[Finding]) -> None:
        created = self.events[0]
        if self.seed is None or not isinstance(created, e.GameCreated):
            return
        found = commitment(self.seed.seed, self.seed.salt)
        if found != created.seed_commitment:
            findings.append(
                Finding(
                    1,
                    "seed",
                    f"the revealed seed {self.seed.seed!r} does not match the commitment made at "
                    f"creation ({created.seed_commitment}): it gives {found}",
                )
            )
            self.seed = None  # a seed that fails its commitment cannot show the deck forged

    def command(self, command: c.Command) -> c.Command:
        seed = self.seed
        if isinstance(command, c.CreateGame):
            return replace(
                command, seed=seed.seed if seed else STAND_IN, salt=seed.salt if seed else ""
            )
        if isinstance(command, c.FinishGame) and seed is not None:
            return replace(command, seed=seed.seed, salt=seed.salt)
        return command

    def expected(
        self, batch: Sequence[e.Event], expected: list[e.Event]
    ) -> tuple[list[e.Event], bool]:
        first = batch[0]
        if not isinstance(first, e.GameCreated) or self.seed is not None:
            return expected, True
        # Unfinished (or a false seed): the deck cannot be checked; the stored creation stands.
        masked = replace(expected[0], seed_commitment=first.seed_commitment, prizes=first.prizes)
        return [e.seal(masked, "")], False

    def recount(self, state: GameState) -> list[str]:
        return points_add_up(self.events, list(state.scores), e.points_awarded) + cards(state)

    def checks(self, finished: bool) -> list[str]:
        if not finished:
            return []
        return ["seed matches commitment", "prize deck reproduced from seed", "cards recounted"]


def cards(state: GameState) -> list[str]:
    """What does not add up in the cards at the end: each seat's suit, each prize once."""
    problems = []
    suit = list(range(1, state.cards + 1))
    for seat in (0, 1):
        if sorted(state.shown[seat] + state.hands[seat]) != suit:
            problems.append(f"seat {seat} bid cards out of its suit: {list(state.shown[seat])}")
    unplayed = state.prizes[state.turn :] if state.resigned is not None else ()
    pot = state.pot if state.resigned is not None else ()
    prizes = sorted([*state.won[0], *state.won[1], *state.discarded, *pot, *unplayed])
    if prizes != suit:
        problems.append(f"the prizes won and discarded are {prizes}, not each prize once")
    return problems


def audit(events: Sequence[e.Event]) -> AuditReport:
    """Audit a whole game from its events; ``ok`` only when every check holds."""
    return GoofspielAuditor(events).report()
