"""Turn clocks, decided from recorded times (a game's core never reads a clock): the platform's,
for every game (`Game.clock`, the clock service).

A game may be created with a `TimeControl`: a time per turn, or a total per seat with an
increment per turn. Every command is decided with the service's time (``execute(time=...)``,
recorded in the batch's ``cause``), so the clock of a game is a fold of those recorded times:
`tick` charges the seat whose turn ends the time it used, `deadline_ms` says when the seat to
move runs out. A game's timeout claim (`Game.timeout_command`, ``ClaimTimeout``) is refused
before that deadline and accepted after it; replay and the audit re-decide it from the same
recorded times. What a timeout does to the game is the game's rule.

Times are ISO 8601 strings as the services write them (``2026-11-23T11:24:45.123456+00:00``);
they are turned into milliseconds since the epoch here with plain arithmetic.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from gameplatform.errors import ClockRunning, InvalidCommand

OnTimeout = Literal["bot", "remove"]


class TimeControl(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Chosen at creation: ``per_turn`` seconds for each turn, or ``total`` seconds per seat
    for the whole game plus ``increment`` seconds per turn played. ``on_timeout``: what
    happens to a seat whose time runs out: ``bot`` (a bot plays on for it) or ``remove`` (the
    seat is removed from the game, as docs/rules.md says)."""

    per_turn: int | None = None
    total: int | None = None
    increment: int = 0
    on_timeout: OnTimeout = "bot"

    def problem(self) -> str | None:
        """Why this time control cannot be used, or None."""
        if (self.per_turn is None) == (self.total is None):
            return "A time control has either per_turn or total seconds (not both)."
        seconds = self.per_turn if self.per_turn is not None else self.total
        assert seconds is not None
        if not 1 <= seconds <= 7 * 24 * 3600:
            return "A time control gives 1 second to 7 days."
        if not 0 <= self.increment <= 24 * 3600:
            return "An increment is 0 seconds to 1 day."
        if self.per_turn is not None and self.increment:
            return "An increment goes with a total time, not with a time per turn."
        return None


class ClockState(msgspec.Struct, frozen=True):
    """The clock of a game with a time control. ``owner`` is the seat whose time runs (-1 for
    none), since ``turn_started_ms``; ``remaining_ms`` is each seat's bank (total mode) as of
    the start of the running turn; ``now_ms`` is the last recorded time."""

    control: TimeControl
    remaining_ms: tuple[int, ...] = ()
    owner: int = -1
    turn: int = 0
    turn_started_ms: int | None = None
    now_ms: int | None = None


def start(control: TimeControl, players: int) -> ClockState:
    total = control.total
    return ClockState(
        control=control, remaining_ms=(total * 1000,) * players if total is not None else ()
    )


def tick(clock: ClockState, now: str | None, owner: int, turn: int) -> ClockState:
    """The clock after an event: ``now`` is the batch's recorded time (None when the event
    carries none), ``owner`` the seat whose time runs now (-1 for none), ``turn`` the turn."""
    now_ms = clock.now_ms if now is None else epoch_ms(now)
    if owner == clock.owner and turn == clock.turn:
        return clock if now_ms == clock.now_ms else msgspec.structs.replace(clock, now_ms=now_ms)
    remaining = clock.remaining_ms
    if clock.owner >= 0 and remaining and clock.turn_started_ms is not None and now_ms is not None:
        used = now_ms - clock.turn_started_ms
        left = max(0, remaining[clock.owner] - used) + clock.control.increment * 1000
        remaining = (*remaining[: clock.owner], left, *remaining[clock.owner + 1 :])
    return ClockState(
        control=clock.control,
        remaining_ms=remaining,
        owner=owner,
        turn=turn,
        turn_started_ms=now_ms if owner >= 0 else None,
        now_ms=now_ms,
    )


def deadline_ms(clock: ClockState | None) -> int | None:
    """When the running turn's time is up (ms since the epoch), or None (no clock running)."""
    if clock is None or clock.owner < 0 or clock.turn_started_ms is None:
        return None
    if clock.control.per_turn is not None:
        return clock.turn_started_ms + clock.control.per_turn * 1000
    return clock.turn_started_ms + clock.remaining_ms[clock.owner]


# --- ISO 8601 <-> milliseconds, without the datetime module ------------------------------------


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm)."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(z: int) -> tuple[int, int, int]:
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return y + (m <= 2), m, d


def epoch_ms(text: str) -> int:
    """``YYYY-MM-DDTHH:MM:SS[.ffffff][Z|±HH:MM]`` as milliseconds since the epoch (UTC when
    no offset is given). Raises ValueError for anything else."""
    try:
        date, _, clock = text.partition("T")
        y, m, d = (int(part) for part in date.split("-"))
        offset = 0
        for sign in ("+", "-"):
            if sign in clock:
                clock, _, zone = clock.partition(sign)
                hours, _, minutes = zone.partition(":")
                offset = (int(hours) * 60 + int(minutes or 0)) * (1 if sign == "+" else -1)
        clock = clock.removesuffix("Z")
        hms, _, fraction = clock.partition(".")
        hh, mm, ss = (int(part) for part in hms.split(":"))
        millis = int((fraction + "000")[:3]) if fraction else 0
    except ValueError:
        raise ValueError(f"not an ISO 8601 time: {text!r}") from None
    seconds = _days_from_civil(y, m, d) * 86400 + hh * 3600 + mm * 60 + ss - offset * 60
    return seconds * 1000 + millis


def iso(ms: int) -> str:
    """Milliseconds since the epoch as ``YYYY-MM-DDTHH:MM:SS.mmmZ``."""
    seconds, millis = divmod(ms, 1000)
    days, rest = divmod(seconds, 86400)
    y, m, d = _civil_from_days(days)
    hh, rest = divmod(rest, 3600)
    mm, ss = divmod(rest, 60)
    return f"{y:04d}-{m:02d}-{d:02d}T{hh:02d}:{mm:02d}:{ss:02d}.{millis:03d}Z"


def deadline_passed(clock: ClockState | None, seat: int, now: str | None) -> str:
    """The deadline ``seat`` missed (ISO 8601) at the recorded time ``now``, or the rule error
    that refuses a timeout claim: no clock, the seat's time not running, or time left."""
    if clock is None:
        raise InvalidCommand("This game has no clock.")
    if clock.owner != seat:
        raise ClockRunning(f"Seat {seat}'s time is not running: the game does not wait for it.")
    deadline = deadline_ms(clock)
    if now is None or deadline is None:
        raise InvalidCommand("A timeout is decided at a recorded time; none was given.")
    left = deadline - epoch_ms(now)
    if left > 0:
        raise ClockRunning(f"Seat {seat} has {left / 1000:.1f} s left.")
    return iso(deadline)
