"""The lobby's and the table's seat actions and the lobby's listing, as use cases over in-memory
fakes of their ports: who may start, cancel, leave, remove, resign or take a seat back, what
each sends, and which games a lobby page shows."""

from __future__ import annotations

from typing import Any

import pytest
from use_case_fakes import (
    FakeBus,
    FakeGame,
    FakeGames,
    FakeLobby,
    FakeTokens,
    rejected,
    replace_table,
    seated,
    table,
)

from gameserver.gateway.use_cases.game_listing import GameListing, Wanted
from gameserver.gateway.use_cases.refusals import Refusal
from gameserver.gateway.use_cases.seat_actions import SeatActions


class Table:
    """A two-seat game ``g1`` whose seat 0 is Ann's (token ``ann``), hosted by ``host``."""

    def __init__(self, game: FakeGame | None = None) -> None:
        self.games = FakeGames({"g1": (game or FakeGame(), seated(table(), 0))})
        self.bus, self.lobby, self.tokens = FakeBus(), FakeLobby(), FakeTokens()
        self.lobby.hosts["g1"] = "host"
        self.tokens.seats[("g1", "ann")] = 0
        self.actions = SeatActions(self.games, self.bus, self.tokens, self.lobby, self.tokens)

    def sent(self) -> list[tuple[str, int | None, int | None]]:
        """Each command sent: its kind, the seat it names and the envelope's seat."""
        commands: list[Any] = [e.command for e in self.bus.sent]  # each game's own struct
        return [(c.kind, c.seat, e.seat) for c, e in zip(commands, self.bus.sent, strict=True)]


async def test_a_player_leaves_their_own_seat_before_the_start_and_it_is_freed() -> None:
    case = Table()
    outcome = await case.actions.leave("g1", 0, "ann")
    assert outcome.command_id.startswith("Command:")
    assert outcome.version == 2
    assert case.sent() == [("LeaveGame", 0, 0)]
    assert case.tokens.freed == [("g1", 0)]
    with pytest.raises(Refusal) as gone:  # the token no longer holds the seat
        await case.actions.resign("g1", "ann")
    assert gone.value.code == "invalid_token"


async def test_the_host_removes_a_player_and_nobody_else_frees_anothers_seat() -> None:
    case = Table()
    case.tokens.seats[("g1", "bob")] = 1
    with pytest.raises(Refusal) as refused:
        await case.actions.leave("g1", 0, "bob")
    assert (refused.value.kind, refused.value.code) == ("forbidden", "not_your_seat")
    assert case.bus.sent == []
    assert case.tokens.freed == []
    await case.actions.leave("g1", 0, "host")
    assert case.sent() == [("RemoveSeat", 0, None)]
    assert case.tokens.freed == [("g1", 0)]


async def test_leaving_needs_a_game_and_a_token_and_a_refused_leave_frees_nothing() -> None:
    case = Table()
    with pytest.raises(Refusal) as unknown:
        await case.actions.leave("nope", 0, None)
    assert (unknown.value.kind, unknown.value.code) == ("not_found", "game_not_found")
    with pytest.raises(Refusal) as missing:
        await case.actions.leave("g1", 0, "")
    assert (missing.value.kind, missing.value.code) == ("unauthenticated", "missing_token")
    case.bus.decide = rejected("wrong_phase", "The game has started.")
    with pytest.raises(Refusal) as started:
        await case.actions.leave("g1", 0, "ann")
    assert (started.value.kind, started.value.code) == ("conflict", "wrong_phase")
    assert started.value.message == "The game has started."
    assert case.tokens.freed == []


async def test_the_host_or_a_seated_player_starts_and_a_stranger_does_not() -> None:
    case = Table()
    await case.actions.start("g1", "host")
    await case.actions.start("g1", "ann")
    assert case.sent() == [("StartGame", None, None), ("StartGame", None, 0)]
    assert [e.command_id.split(":")[:2] for e in case.bus.sent] == [
        ["start", "None"],
        ["start", "0"],
    ]
    with pytest.raises(Refusal) as stranger:
        await case.actions.start("g1", "someone")
    assert (stranger.value.kind, stranger.value.code) == ("forbidden", "invalid_token")


async def test_only_the_host_cancels() -> None:
    case = Table()
    with pytest.raises(Refusal) as player:
        await case.actions.cancel("g1", "ann")
    assert (player.value.kind, player.value.code) == ("forbidden", "not_host")
    with pytest.raises(Refusal) as nobody:
        await case.actions.cancel("g1", None)
    assert (nobody.value.kind, nobody.value.code) == ("unauthenticated", "missing_token")
    await case.actions.cancel("g1", "host")
    assert case.sent() == [("CancelGame", None, None)]


async def test_a_seated_player_resigns_and_takes_their_seat_back_where_the_game_offers_it() -> None:
    case = Table()
    await case.actions.resign("g1", "ann")
    await case.actions.take_back("g1", "ann")
    assert case.sent() == [("Resign", 0, 0), ("Reclaim", 0, 0)]
    plain = Table(FakeGame(offers_reclaim=False))
    with pytest.raises(Refusal) as refused:
        await plain.actions.take_back("g1", "ann")
    assert (refused.value.kind, refused.value.code) == ("conflict", "not_offered")
    assert refused.value.message == "A fake game does not offer this."
    assert plain.bus.sent == []


def lobby_of(count: int) -> tuple[FakeGames, FakeLobby, FakeTokens]:
    """``count`` games g0.. (newest first; every third full, g4 never created)."""
    games, lobby = FakeGames(), FakeLobby()
    for n in range(count):
        state = table(players=2 + n % 2)
        if n % 3 == 0:
            state = replace_table(state, names=["A", "B", "C"][: state.players])
        if n != 4:
            games.games[f"g{n}"] = (FakeGame(), state)
        lobby.index.append(f"g{n}")
    return games, lobby, FakeTokens()


async def test_a_lobby_page_filters_skips_games_never_created_and_goes_on_by_cursor() -> None:
    listing = GameListing(*lobby_of(12))
    first = await listing.page(Wanted(open_seats=True), None, 3)
    assert [listed.game_id for listed in first.games] == ["g1", "g2", "g5"]
    assert first.next_cursor == "g5"
    rest = await listing.page(Wanted(open_seats=True), first.next_cursor, 10)
    assert [listed.game_id for listed in rest.games] == ["g7", "g8", "g10", "g11"]
    assert rest.next_cursor is None
    three = await listing.page(Wanted(players=3, open_seats=False), None, 10)
    assert [listed.game_id for listed in three.games] == ["g3", "g9"]


async def test_a_scan_stops_at_its_limit_and_says_where_to_go_on() -> None:
    games, lobby, marks = lobby_of(12)
    listing = GameListing(games, lobby, marks, scan_limit=5)
    page = await listing.page(Wanted(phase="playing"), None, 3)
    assert page.games == []
    assert page.next_cursor == "g4"


async def test_a_summary_tells_the_table_the_seed_origin_and_the_seating() -> None:
    games, lobby, marks = lobby_of(2)
    marks.marks["g1"] = "chosen"
    lobby.seatings["g1"] = "invite"
    summary = await GameListing(games, lobby, marks).summary("g1")
    assert (summary.seed_origin, summary.seating, summary.table.players) == ("chosen", "invite", 3)
    with pytest.raises(Refusal) as unknown:
        await GameListing(games, lobby, marks).summary("g4")
    assert unknown.value.kind == "not_found"
