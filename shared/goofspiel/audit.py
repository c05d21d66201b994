"""Dispute audit: prove from the stored events alone that a game was played by the rules.

The checks, in order of the stream:
- the hash chain and versions (``for_platform.check_chain``);
- the seed revealed at the end matches the commitment made at creation (the HMAC-SHA256 of the
  seed keyed with the revealed salt; a bare SHA-256 unsalted), and reproduces the prize deck
  (the creation is re-decided with it);
- every batch starts with its cause, and re-deciding that command on the replayed state gives
  exactly the stored events: every sealed bid was a card of its seat's hand, every reveal names
  the bids that were sealed, the pot went to the higher bid or was discarded or carried as the
  game's tie rule says;
- at the end, the scores are the sums of the pots won, and the cards add up: each seat showed
  each card of its suit once, and every prize was won or discarded exactly once.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
from msgspec.structs import replace

from goofspiel import commands as c
from goofspiel import events as e
from goofspiel.for_platform import (
    AuditReport,
    Finding,
    batches,
    check_chain,
    commitment,
    compare_batch,
    redecide,
    report,
)
from goofspiel.rules import execute
from goofspiel.state import GameState

STAND_IN = "stand-in seed"


class Revealed(msgspec.Struct, frozen=True):
    seed: str
    salt: str = ""


def revealed(events: Sequence[e.Event]) -> Revealed | None:
    """What ``GameEnded`` reveals: the seed and the salt of its commitment."""
    last = events[-1] if events else None
    return Revealed(last.seed, last.salt) if isinstance(last, e.GameEnded) else None


def _seeded(command: c.Command, seed: Revealed | None) -> c.Command:
    if isinstance(command, c.CreateGame):
        return replace(
            command, seed=seed.seed if seed else STAND_IN, salt=seed.salt if seed else ""
        )
    if isinstance(command, c.FinishGame) and seed is not None:
        return replace(command, seed=seed.seed, salt=seed.salt)
    return command


def _batch_findings(
    state: GameState | None, batch: list[e.Event], seed: Revealed | None
) -> tuple[list[Finding], GameState | None]:
    first = batch[0]
    if first.cause is None:
        return [Finding(first.version, "provenance", "the batch records no command")], None
    problems, expected, after = redecide(state, batch, _seeded(first.cause.command, seed), execute)
    if problems:
        return problems, None
    if isinstance(first, e.GameCreated) and seed is None:
        # Unfinished: the seed is still secret, so the deck cannot be checked yet.
        masked = replace(expected[0], seed_commitment=first.seed_commitment, prizes=first.prizes)
        expected = [e.seal(masked, "")]
        after = replace(
            after,
            commitment=first.seed_commitment,
            prizes=tuple(first.prizes),
            last_hash=first.hash,
        )
    problems = compare_batch(batch, expected)
    return problems, None if problems else after


def _seed_findings(created: e.Event, seed: Revealed | None) -> list[Finding]:
    if seed is None or not isinstance(created, e.GameCreated):
        return []
    found = commitment(seed.seed, seed.salt)
    if found == created.seed_commitment:
        return []
    return [
        Finding(
            1,
            "seed",
            f"the revealed seed {seed.seed!r} does not match the commitment made at creation "
            f"({created.seed_commitment}): it gives {found}",
        )
    ]


def recount(events: Sequence[e.Event], state: GameState) -> list[str]:
    """What does not add up at the end: the scores against the pots won, and the cards."""
    problems = []
    totals = [0, 0]
    for event in events:
        for seat, points, _ in e.points_awarded(event):
            totals[seat] += points
    suit = list(range(1, state.cards + 1))
    for seat in (0, 1):
        if totals[seat] != state.scores[seat]:
            problems.append(
                f"seat {seat}'s pots add up to {totals[seat]}, not {state.scores[seat]}"
            )
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
    if not events:
        return report(events, [Finding(0, "stream", "there are no events")], [], False, None)
    findings = check_chain(events)
    if not isinstance(events[0], e.GameCreated):
        findings.append(Finding(1, "stream", "the first event is not the game's creation"))
    seed = revealed(events)
    seed_problems = _seed_findings(events[0], seed)
    findings += seed_problems
    state: GameState | None = None
    for batch in batches(events):
        problems, state = _batch_findings(state, batch, None if seed_problems else seed)
        findings += problems
        if problems:
            break  # everything after the first bad batch stands on a false state
    finished = state is not None and state.is_over
    checks = ["hash chain", "versions", "every command re-decided"]
    if state is not None and finished:
        checks += ["seed matches commitment", "prize deck reproduced from seed"]
        checks.append("scores and cards recounted")
        if not findings:
            findings += [Finding(events[-1].version, "scores", p) for p in recount(events, state)]
    result = None if state is None else (list(state.scores), list(state.winners))
    return report(events, findings, checks, finished, result)
