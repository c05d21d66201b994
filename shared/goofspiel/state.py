"""The state of a game: an immutable value folded from its events.

``hands`` hold the cards a seat has not yet shown: a sealed bid stays in its hand until both
bids are revealed. ``bids`` holds each seat's sealed bid: ``NO_BID`` before it bids, the card
after (``SEALED`` in another seat's perspective, where the card is not known).
"""

from __future__ import annotations

from typing import Literal, get_args

import msgspec

from gameplatform.clock import ClockState

NO_BID = -1
SEALED = 0
Phase = Literal["lobby", "bidding", "final_scoring", "finished", "cancelled"]
PHASES: tuple[str, ...] = get_args(Phase)
SeatStatus = Literal["playing", "bot", "resigned", "removed"]
"""``bot``: timed out, the rules bid for it (rulings, 10); ``resigned``: conceded;
``removed``: timed out in a game whose clock removes such seats (it loses)."""


class GameState(msgspec.Struct, frozen=True):
    game_id: str
    version: int
    cards: int
    ties: str
    commitment: str
    prizes: tuple[int, ...]
    """The prize deck, top first (the first ``turn`` of them are turned up)."""
    chosen_seed: bool = False
    names: tuple[str | None, ...] = (None, None)
    phase: Phase = "lobby"
    turn: int = 0
    """The turn being bid for (1-based; 0 in the lobby)."""
    pot: tuple[int, ...] = ()
    """The prizes the current turn's winner takes."""
    hands: tuple[tuple[int, ...], ...] = ((), ())
    bids: tuple[int, ...] = (NO_BID, NO_BID)
    won: tuple[tuple[int, ...], ...] = ((), ())
    shown: tuple[tuple[int, ...], ...] = ((), ())
    """The cards each seat has bid, revealed, in turn order."""
    scores: tuple[int, ...] = (0, 0)
    discarded: tuple[int, ...] = ()
    ranking: tuple[int, ...] = ()
    winners: tuple[int, ...] = ()
    resigned: int | None = None
    """The seat that conceded (or was removed when its time ran out), if one did."""
    statuses: tuple[SeatStatus, ...] = ("playing", "playing")
    clock: ClockState | None = None
    """The turn clock (rulings, 10), where the game has one."""
    seed: str = ""
    salt: str = ""
    last_hash: str = ""

    @property
    def is_over(self) -> bool:
        return self.phase == "finished"

    @property
    def is_closed(self) -> bool:
        """Nothing more will happen: the game ended or was cancelled."""
        return self.phase in ("finished", "cancelled")

    @property
    def to_move(self) -> int | None:
        """The seat the game waits for: bids are taken in seat order (see the rulings)."""
        if self.phase != "bidding":
            return None
        return next((seat for seat, bid in enumerate(self.bids) if bid == NO_BID), None)

    @property
    def prize(self) -> int | None:
        """The prize turned up for this turn."""
        return self.prizes[self.turn - 1] if self.phase == "bidding" else None
