"""Dispute audit: prove from the stored events alone that a game was played by the rules.

The platform's audit (`gameplatform.audit`: the hash chain, the versions, every command
re-decided, the final scores against the points awarded, one report shape for every game) and
Renature's own checks:
- the revealed seed and salt match the commitment made at creation (an HMAC-SHA256 of the seed
  keyed with the salt; a bare SHA-256 for an unsalted game) and the seed reproduces the
  recorded deal (the creation is re-decided with the revealed seed and salt);
- the final scoring is recomputed (the FinishGame command is re-decided).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
from msgspec.structs import replace

from gameplatform.audit import Auditor, AuditReport, Finding, batches, check_chain
from gameplatform.chain import seal
from renature import commands as c
from renature import events as e
from renature.deal import commitment
from renature.rules import RULES
from renature.state import GameState

__all__ = ["AuditReport", "Finding", "audit", "batches", "check_chain"]

UNREVEALED = "seed not revealed yet"
"""Stands in for the secret seed when the creation of an unfinished game is re-decided."""


class Revealed(msgspec.Struct, frozen=True):
    """What ``GameEnded`` reveals: the seed and the salt of its commitment."""

    seed: str
    salt: str = ""


def _revealed_seed(events: Sequence[e.Event]) -> Revealed | None:
    for event in reversed(events):
        if isinstance(event, e.GameEnded):
            return Revealed(event.seed, event.salt)
    return None


class _Audit(Auditor[GameState, e.Event]):
    """The platform's audit with the seed: checked against its commitment, then used to
    re-decide the creation (the deal) and the finish (the final scoring)."""

    def __init__(self, events: Sequence[e.Event]) -> None:
        super().__init__(
            events,
            rules=RULES,
            created=e.GameCreated,
            scores=lambda state: [seat.score for seat in state.seats],
            points_awarded=e.points_awarded,
        )
        self.revealed = _revealed_seed(events)
        self.seed = self.revealed
        """The revealed seed once it holds (None until the end, or when it fails)."""

    def check_start(self, findings: list[Finding]) -> None:
        created, seed = self.events[0], self.seed
        if not isinstance(created, e.GameCreated) or seed is None:
            return
        found = commitment(seed.seed, seed.salt)
        if found != created.seed_commitment:
            ended = next(ev for ev in reversed(self.events) if isinstance(ev, e.GameEnded))
            how = "its HMAC with the revealed salt" if seed.salt else "its SHA-256"
            findings.append(
                Finding(
                    ended.version,
                    "seed",
                    f"the revealed seed {seed.seed!r} does not match the commitment made at "
                    f"creation ({created.seed_commitment}): {how} is {found}",
                )
            )
            # A seed that fails its commitment cannot show the deal forged: the fault is the seed.
            self.seed = None

    def command(self, command: Any) -> Any | None:
        seed = self.seed
        if isinstance(command, c.CreateGame):
            # Until the seed is revealed the deal cannot be checked: the creation is re-decided
            # with a stand-in seed and compared in everything but the commitment and the deal.
            if seed is None:
                return replace(command, seed=UNREVEALED)
            return replace(command, seed=seed.seed, salt=seed.salt)
        if isinstance(command, c.FinishGame):
            if seed is None:
                # the finish cannot be re-decided without a seed that holds (found above)
                return None if self.revealed is not None else command
            # The cause leaves the seed out; GameEnded reveals it (and the rules check it).
            return replace(command, seed=seed.seed, salt=seed.salt)
        return command

    def expected(
        self, batch: Sequence[e.Event], expected: list[e.Event]
    ) -> tuple[list[e.Event], bool]:
        first = batch[0]
        if self.seed is not None or first.cause is None:
            return expected, True
        if not isinstance(first.cause.command, c.CreateGame):
            return expected, True
        # an unrevealed creation: the stored one stands, but its deal is not vouched for yet
        if isinstance(first, e.GameCreated) and isinstance(expected[0], e.GameCreated):
            masked = replace(expected[0], seed_commitment=first.seed_commitment, deal=first.deal)
            expected = [seal(masked, ""), *expected[1:]]
        return expected, False

    def mismatch(self, stored: e.Event, wanted: e.Event) -> str:
        deal_differs = (
            isinstance(stored, e.GameCreated)
            and isinstance(wanted, e.GameCreated)
            and stored.deal != wanted.deal
        )
        return "deal" if deal_differs else "rules"

    def checks(self, finished: bool) -> list[str]:
        if self.revealed is None:
            return []
        return ["seed matches commitment", "deal reproduced from seed", "final scoring"]


def audit(events: Sequence[e.Event]) -> AuditReport:
    """Audit a whole game from its events; ``ok`` only when every check holds."""
    return _Audit(events).report()
