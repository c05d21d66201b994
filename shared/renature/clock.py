"""Renature's turn clocks are the platform's (`gameplatform.clock`); what a timeout does to a
Renature game is in `renature.seating`."""

from gameplatform.clock import (
    ClockState,
    OnTimeout,
    TimeControl,
    deadline_ms,
    epoch_ms,
    iso,
    start,
    tick,
)

__all__ = [
    "ClockState",
    "OnTimeout",
    "TimeControl",
    "deadline_ms",
    "epoch_ms",
    "iso",
    "start",
    "tick",
]
