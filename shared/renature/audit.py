"""Dispute audit: prove from the stored events alone that a game was played by the rules.

The audit checks, in order of the stream:
- the hash chain: every event's ``prev_hash`` is its predecessor's ``hash``, and its ``hash`` is
  the SHA-256 of its canonical bytes (so a changed, dropped or reordered event is caught);
- versions run 1, 2, 3, ... without gaps;
- every batch starts with its cause (the recorded command) and re-deciding that command on the
  replayed state gives exactly the stored events (an illegal move is caught here even when its
  forger recomputed the hash chain);
- the revealed seed and salt match the commitment made at creation (an HMAC-SHA256 of the seed
  keyed with the salt; a bare SHA-256 for an unsalted game) and the seed reproduces the
  recorded deal (the creation is re-decided with the revealed seed and salt);
- the final scoring is recomputed (the FinishGame command is re-decided) and every seat's final
  score equals the sum of the points its events award.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
from msgspec.structs import replace

from renature import commands as c
from renature import events as e
from renature.deal import commitment
from renature.errors import RuleError
from renature.rules import evolve, execute
from renature.state import GameState

UNREVEALED = "seed not revealed yet"
"""Stands in for the secret seed when the creation of an unfinished game is re-decided."""

CHECK_ORDER = (
    "stream",
    "versions",
    "hash chain",
    "provenance",
    "seed",
    "deal",
    "legality",
    "rules",
    "scores",
)


class Finding(msgspec.Struct, frozen=True):
    """One thing that does not hold: which event (its version, 1-based), which check, what."""

    version: int
    check: str
    message: str


class AuditReport(msgspec.Struct, frozen=True):
    game_id: str
    ok: bool
    events: int
    batches: int
    finished: bool
    checks: list[str]
    first_bad: Finding | None = None
    findings: list[Finding] = []
    scores: list[int] = []
    winners: list[int] = []


def _differences(stored: e.Event, expected: e.Event) -> str:
    if type(stored) is not type(expected):
        return f"it is a {type(stored).__name__}, the rules give a {type(expected).__name__}"
    ours = msgspec.to_builtins(stored)
    theirs = msgspec.to_builtins(expected)
    fields = [k for k in theirs if k not in ("hash", "prev_hash") and ours.get(k) != theirs[k]]
    if not fields:
        fields = [k for k in theirs if ours.get(k) != theirs[k]]
    shown = "; ".join(_shown(k, ours.get(k), theirs[k]) for k in fields)
    return f"{type(stored).__name__} differs from what the rules give ({shown})"


def _shown(name: str, ours: object, theirs: object) -> str:
    """``name: stored X, rules give Y``, narrowed to the differing parts of a nested object
    (a forged deal names ``deal.hands``, not the whole deal)."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        keys = [k for k in theirs if ours.get(k) != theirs[k]]
        keys += [k for k in ours if k not in theirs]
        if keys:
            return "; ".join(_shown(f"{name}.{k}", ours.get(k), theirs.get(k)) for k in keys)
    return f"{name}: stored {ours!r}, rules give {theirs!r}"


def _count(events: int) -> str:
    return f"{events} event" if events == 1 else f"{events} events"


def check_chain(events: Sequence[e.Event]) -> list[Finding]:
    findings = []
    prev = ""
    for position, event in enumerate(events, start=1):
        if event.version != position:
            findings.append(
                Finding(
                    position,
                    "versions",
                    f"event number {position} carries version {event.version}: "
                    "an event was dropped, added or moved",
                )
            )
        if event.prev_hash != prev:
            findings.append(
                Finding(
                    position,
                    "hash chain",
                    f"event {position} ({type(event).__name__}) does not link to the event "
                    "before it: an event was changed, dropped or reordered",
                )
            )
        if event.hash != e.chain_hash(event):
            findings.append(
                Finding(
                    position,
                    "hash chain",
                    f"event {position} ({type(event).__name__}) does not match its own hash: "
                    "it was changed after it was written",
                )
            )
        prev = event.hash
    return findings


def batches(events: Sequence[e.Event]) -> list[list[e.Event]]:
    """Events grouped by the command that caused them (a batch starts with its cause)."""
    out: list[list[e.Event]] = []
    for event in events:
        if event.cause is not None or not out:
            out.append([])
        out[-1].append(event)
    return out


class Revealed(msgspec.Struct, frozen=True):
    """What ``GameEnded`` reveals: the seed and the salt of its commitment."""

    seed: str
    salt: str = ""


def _revealed_seed(events: Sequence[e.Event]) -> Revealed | None:
    for event in reversed(events):
        if isinstance(event, e.GameEnded):
            return Revealed(event.seed, event.salt)
    return None


def _redecide(
    state: GameState | None, batch: list[e.Event], seed: Revealed | None
) -> tuple[list[Finding], GameState | None, bool]:
    """Re-run the batch's recorded command. Returns (findings, state after, verified)."""
    first = batch[0]
    if first.cause is None:
        return [Finding(first.version, "provenance", "the batch records no command")], None, False
    command = first.cause.command
    unrevealed = isinstance(command, c.CreateGame) and seed is None
    if isinstance(command, c.CreateGame):
        # Until the seed is revealed the deal cannot be checked: the creation is re-decided
        # with a stand-in seed and compared in everything but the commitment and the deal.
        if seed is None:
            command = replace(command, seed=UNREVEALED)
        else:
            command = replace(command, seed=seed.seed, salt=seed.salt)
    elif isinstance(command, c.FinishGame) and seed is not None:
        # The cause leaves the seed out; GameEnded reveals it (and the rules check it).
        command = replace(command, seed=seed.seed, salt=seed.salt)
    try:
        expected, after = execute(
            state, command, command_id=first.cause.command_id, time=first.cause.time
        )
    except RuleError as err:
        name = type(command).__name__
        return (
            [Finding(first.version, "legality", f"the recorded {name} is illegal: {err.message}")],
            None,
            False,
        )
    if unrevealed and isinstance(first, e.GameCreated) and isinstance(expected[0], e.GameCreated):
        masked = replace(expected[0], seed_commitment=first.seed_commitment, deal=first.deal)
        expected = [e.seal(masked, ""), *expected[1:]]
    for stored, wanted in zip(batch, expected, strict=False):
        if stored != wanted:
            check = "rules"
            if (
                isinstance(stored, e.GameCreated)
                and isinstance(wanted, e.GameCreated)
                and stored.deal != wanted.deal
            ):
                check = "deal"
            return [Finding(stored.version, check, _differences(stored, wanted))], None, False
    if len(batch) != len(expected):
        given = f"the command gives {_count(len(expected))}, the stream holds {_count(len(batch))}"
        if len(batch) > len(expected):  # the first event the stream holds beyond the rules'
            extra = batch[len(expected)]
            at, what = extra.version, f"event {extra.version} ({type(extra).__name__}) is extra"
        else:  # the first event the rules give that the stream lacks
            missing = expected[len(batch)]
            at = missing.version
            what = f"event {missing.version} ({type(missing).__name__}) is missing"
        return [Finding(at, "rules", f"{given}: {what}")], None, False
    if unrevealed:  # the stored creation stands, but its deal is not vouched for yet
        return [], None, False
    return [], after, True


def audit(events: Sequence[e.Event]) -> AuditReport:
    """Audit a whole game from its events; ``ok`` only when every check holds."""
    game_id = events[0].game_id if events else ""
    if not events:
        finding = Finding(0, "stream", "there are no events")
        return AuditReport(game_id, False, 0, 0, False, [], finding, [finding])
    findings = check_chain(events)
    revealed = _revealed_seed(events)
    seed = _check_seed(events, revealed, findings)
    groups = batches(events)
    state = _redecide_all(groups, seed, revealed, findings)
    if state is not None and state.is_over and not findings:
        findings += _check_scores(events, state)
    findings.sort(key=lambda f: (f.version, CHECK_ORDER.index(f.check)))
    finished = state is not None and state.is_over
    checks = ["hash chain", "versions", "every command re-decided"]
    if revealed is not None:
        checks += ["seed matches commitment", "deal reproduced from seed", "final scoring"]
    return AuditReport(
        game_id=game_id,
        ok=not findings,
        events=len(events),
        batches=len(groups),
        finished=finished,
        checks=checks,
        first_bad=findings[0] if findings else None,
        findings=findings,
        scores=[s.score for s in state.seats] if state is not None and not findings else [],
        winners=list(state.winners) if state is not None and not findings else [],
    )


def _check_seed(
    events: Sequence[e.Event], seed: Revealed | None, findings: list[Finding]
) -> Revealed | None:
    """The revealed seed if it matches the creation's commitment, else None (and a finding;
    one too for a stream that does not start with the creation)."""
    created = events[0]
    if not isinstance(created, e.GameCreated):
        findings.append(Finding(1, "stream", "the first event is not the game's creation"))
    elif seed is not None and commitment(seed.seed, seed.salt) != created.seed_commitment:
        ended = next(ev for ev in reversed(events) if isinstance(ev, e.GameEnded))
        how = "its HMAC with the revealed salt" if seed.salt else "its SHA-256"
        findings.append(
            Finding(
                ended.version,
                "seed",
                f"the revealed seed {seed.seed!r} does not match the commitment made at creation "
                f"({created.seed_commitment}): {how} is {commitment(seed.seed, seed.salt)}",
            )
        )
        # A seed that fails its commitment cannot show the deal forged: the fault is the seed.
        return None
    return seed


def _redecide_all(
    groups: Sequence[list[e.Event]],
    seed: Revealed | None,
    revealed: Revealed | None,
    findings: list[Finding],
) -> GameState | None:
    """Every batch re-decided in order, up to the first bad one; the state reached."""
    state: GameState | None = None
    for batch in groups:
        cause = batch[0].cause
        if (
            seed is None
            and revealed is not None
            and cause
            and isinstance(cause.command, c.FinishGame)
        ):
            break  # the finish cannot be re-decided without a seed that holds (found above)
        problems, after, verified = _redecide(state, batch, seed)
        findings += problems
        if problems:
            break  # everything after the first bad batch stands on a false state
        if verified:
            state = after
        else:
            for event in batch:
                state = evolve(state, event)
    return state


def _check_scores(events: Sequence[e.Event], state: GameState) -> list[Finding]:
    """Each seat's points, added up from the events, against its final score."""
    totals = [0] * state.players
    for event in events:
        for seat, points, _ in e.points_awarded(event):
            totals[seat] += points
    return [
        Finding(
            events[-1].version,
            "scores",
            f"seat {seat}'s points add up to {totals[seat]}, not {seat_state.score}",
        )
        for seat, seat_state in enumerate(state.seats)
        if totals[seat] != seat_state.score
    ]
