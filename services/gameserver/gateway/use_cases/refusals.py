"""A use case's "no": a stable code, a sentence a player can act on, and what kind of refusal it
is. The HTTP layer gives each kind its status (`gameserver.gateway.http_errors`); nothing here
knows HTTP.
"""

from __future__ import annotations

from typing import Literal

Kind = Literal[
    "malformed",  # the request cannot be read at all
    "unauthenticated",  # no credential where one is needed
    "forbidden",  # a credential that does not allow this
    "not_found",  # no such game or seat
    "conflict",  # refused as things stand (a rule, a seat taken, a request still answered)
    "too_large",
    "invalid",  # a request that does not fit what is asked for
    "limited",
    "failed",  # the service's own failure
    "unavailable",  # the store or the rules service cannot be reached: retry
    "timeout",  # the rules service did not answer in time: retry
]

RETRYABLE: frozenset[Kind] = frozenset({"unavailable", "timeout"})
"""Kinds after which the request may still have taken effect (a retry finds out)."""

REJECTION_KINDS: dict[str, Kind] = {
    "invalid_command": "invalid",
    "malformed": "invalid",
    "game_not_found": "not_found",
    "not_your_seat": "forbidden",
    "contended": "unavailable",
    "store_unavailable": "unavailable",  # the rules service could not reach Redis: retry
    "internal_error": "failed",
}
"""The kinds of rejection codes that do not mean "the rules refuse this now" (a conflict):
malformed commands, a seat mismatch the rules service caught, the service's own failures."""


class Refusal(Exception):
    """What a use case raises instead of answering: ``kind``, ``code`` and ``message``."""

    def __init__(self, kind: Kind, code: str, message: str) -> None:
        super().__init__(message)
        self.kind: Kind = kind
        self.code = code
        self.message = message

    @property
    def retryable(self) -> bool:
        """The refused request may still take effect (a timeout, an outage)."""
        return self.kind in RETRYABLE


def rejection_kind(code: str | None) -> Kind:
    """The kind of a command the rules service rejected with ``code``: a conflict for every
    rule the command breaks now (``not_your_turn``, ``illegal_placement``, ...)."""
    return REJECTION_KINDS.get(code or "", "conflict")
