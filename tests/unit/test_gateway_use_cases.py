"""The gateway's use cases over in-memory fakes of their ports: what the routes rely on
(idempotent retries, a seat taken, a seat the game has not, leaving before the start, the host's
rights, refusals of every kind), without Redis or a rules service."""

from __future__ import annotations

from typing import Any

import pytest
from use_case_fakes import (
    FakeBus,
    FakeClaims,
    FakeGame,
    FakeGames,
    FakeIdentities,
    FakeLeases,
    FakeLobby,
    FakeRecovery,
    FakeSeeds,
    FakeTokens,
    rejected,
    seated,
    table,
)

from gameplatform import game_names, get_game
from gameserver.gateway.http_errors import REJECTION_STATUS, STATUS, ApiError, api_error
from gameserver.gateway.idempotency import game_id_for
from gameserver.gateway.use_cases.game_creation import CreateGame
from gameserver.gateway.use_cases.refusals import Refusal
from gameserver.gateway.use_cases.seat_taking import ReclaimSeat, SeatAsk, TakeSeat, Users

KEY = "a-secret-key-of-the-client-0123456789"
SECRET_GAME = next(name for name in game_names() if get_game(name).seed_secret)
PUBLIC_GAME = next(name for name in game_names() if not get_game(name).seed_secret)


def body(game: str = SECRET_GAME, **fields: Any) -> dict[str, Any]:
    return {"game": game, "players": get_game(game).player_counts[0], **fields}


class Creation:
    def __init__(self, *, allow_chosen_seeds: bool = False) -> None:
        self.bus, self.lobby, self.seeds = FakeBus(), FakeLobby(), FakeSeeds()
        self.tokens, self.leases = FakeTokens(), FakeLeases()
        self.create = CreateGame(
            self.bus,
            self.lobby,
            self.seeds,
            self.tokens,
            self.leases,
            allow_chosen_seeds=allow_chosen_seeds,
            clock_ms=lambda: 1234,
            new_id=lambda: "new-game",
        )


async def test_a_game_is_created_sent_marked_and_registered() -> None:
    case = Creation()
    created = await case.create(body(seating="invite"), None)
    assert (created.game_id, created.game, created.seed) == ("new-game", SECRET_GAME, "secret")
    assert [(e.game_id, e.command_id, e.seat) for e in case.bus.sent] == [
        ("new-game", "create", None)
    ]
    assert created.host_token == case.lobby.hosts["new-game"]
    assert created.invite_code == case.lobby.invites["new-game"]
    assert case.tokens.marks == {"new-game": "secret"}


async def test_a_game_whose_seed_deals_nothing_hidden_keeps_a_given_seed_public() -> None:
    case = Creation()
    created = await case.create(body(PUBLIC_GAME, seed="anything"), None)
    assert created.seed == "public"
    assert case.seeds.staged == {}  # nothing to keep secret: the seed travels in the command


async def test_a_keyed_creation_retried_answers_the_same_game_and_creates_nothing_new() -> None:
    case = Creation()
    first = await case.create(body(), KEY)
    again = await case.create(body(), KEY)
    assert first == again
    assert first.game_id == game_id_for(KEY)
    assert {(e.game_id, e.command_id) for e in case.bus.sent} == {(first.game_id, "create")}
    assert case.lobby.index == [first.game_id]


async def test_the_key_with_another_body_is_refused_and_changes_nothing() -> None:
    case = Creation()
    await case.create(body(), KEY)
    with pytest.raises(Refusal) as refused:
        await case.create(body(seating="invite"), KEY)
    assert (refused.value.kind, refused.value.code) == ("invalid", "idempotency_key_reused")
    assert len(case.bus.sent) == 1
    assert case.lobby.seatings[game_id_for(KEY)] == "open"


async def test_a_keyed_retry_while_the_first_is_answered_is_a_conflict() -> None:
    case = Creation()
    case.leases.held.add((game_id_for(KEY), "create"))
    with pytest.raises(Refusal) as refused:
        await case.create(body(), KEY)
    assert (refused.value.kind, refused.value.code) == ("conflict", "idempotency_key_in_flight")
    assert case.bus.sent == []


async def test_a_refused_creation_forgets_its_fingerprint_but_a_timeout_keeps_it() -> None:
    case = Creation()
    case.bus.decide = rejected("invalid_command")
    with pytest.raises(Refusal) as refused:
        await case.create(body(), KEY)
    assert (refused.value.kind, refused.value.code) == ("invalid", "invalid_command")
    assert case.lobby.requests == {}  # the key may be used again, with any body
    case.bus.decide = lambda _: Refusal("timeout", "rules_timeout", "No answer in time.")
    other_key = KEY.upper()
    with pytest.raises(Refusal) as timed_out:
        await case.create(body(), other_key)
    assert timed_out.value.retryable
    assert game_id_for(other_key) in case.lobby.requests  # the game may still come of it


async def test_chosen_seeds_are_refused_unless_allowed_and_staged_when_they_are() -> None:
    refusing = Creation()
    with pytest.raises(Refusal) as refused:
        await refusing.create(body(seed="mine"), None)
    assert (refused.value.kind, refused.value.code) == ("forbidden", "chosen_seeds_disabled")
    assert refusing.bus.sent == []
    allowing = Creation(allow_chosen_seeds=True)
    created = await allowing.create(body(seed="mine"), None)
    assert created.seed == "chosen"
    assert allowing.seeds.staged == {"new-game": "mine"}
    with pytest.raises(Refusal) as exists:  # the id has a seed already and this is no retry
        await allowing.create(body(seed="mine"), None)
    assert (exists.value.kind, exists.value.code) == ("conflict", "game_exists")


@pytest.mark.parametrize(
    ("asked", "code"),
    [({"game": "no-such-game"}, "unknown_game"), (body(colour="mauve"), "malformed_request")],
)
async def test_a_body_that_asks_for_nothing_hosted_is_invalid(
    asked: dict[str, Any], code: str
) -> None:
    case = Creation()
    with pytest.raises(Refusal) as refused:
        await case.create(asked, None)
    assert (refused.value.kind, refused.value.code) == ("invalid", code)
    assert case.bus.sent == []
    assert case.lobby.index == []


class Seating:
    def __init__(self, *, identity: FakeIdentities | None = None) -> None:
        self.game = FakeGame()
        self.games = FakeGames({"g1": (self.game, table())})
        self.bus, self.lobby, self.leases = FakeBus(), FakeLobby(), FakeLeases()
        self.claims, self.recovery, self.tokens = FakeClaims(), FakeRecovery(), FakeTokens()
        users = Users(identity)
        self.take = TakeSeat(
            self.games, self.bus, self.lobby, users, self.leases, self.claims, self.recovery
        )
        self.reclaim = ReclaimSeat(self.games, users, self.recovery, self.tokens)

    def sit(self, seat: int) -> None:
        """The game shows ``seat`` taken (its join landed)."""
        game, state = self.games.games["g1"]
        self.games.games["g1"] = (game, seated(state, seat))


def ask(name: str = "Ann", **fields: Any) -> SeatAsk:
    request = f"{name}|{sorted(fields.items())}".encode()
    return SeatAsk(name, fields.get("invite"), fields.get("id_token"), request)


async def test_a_seat_is_taken_with_a_token_and_a_recovery_code() -> None:
    case = Seating()
    taken = await case.take("g1", 1, ask(), None)
    assert (taken.seat, taken.bound, taken.version, taken.seed) == (1, False, 2, "secret")
    assert taken.token
    assert taken.recovery
    assert taken.token != taken.recovery
    assert case.recovery.bound[("g1", 1)] == (taken.recovery, None)
    assert case.bus.kinds() == ["JoinGame"]
    assert case.bus.sent[0].seat == 1


async def test_a_seat_the_game_has_not_is_not_found() -> None:
    case = Seating()
    with pytest.raises(Refusal) as refused:
        await case.take("g1", 2, ask(), None)
    assert (refused.value.kind, refused.value.code) == ("not_found", "no_such_seat")
    assert "2-player game" in refused.value.message
    assert case.claims.claims == {}


async def test_a_seat_another_claimant_holds_is_taken_and_the_join_is_not_sent() -> None:
    case = Seating()
    await case.take("g1", 0, ask("Ann"), None)
    with pytest.raises(Refusal) as refused:
        await case.take("g1", 0, ask("Bob"), None)
    assert (refused.value.kind, refused.value.code) == ("conflict", "seat_taken")
    assert case.bus.kinds() == ["JoinGame"]


async def test_a_full_game_takes_nobody_and_keeps_no_claim() -> None:
    case = Seating()
    case.sit(0)
    case.sit(1)  # both seats show a player, whatever the claims say
    for seat in (0, 1):
        with pytest.raises(Refusal) as refused:
            await case.take("g1", seat, ask("Cid"), None)
        assert (refused.value.kind, refused.value.code) == ("conflict", "seat_taken")
    assert case.claims.claims == {}
    assert case.bus.sent == []


async def test_a_seat_freed_between_its_read_and_its_claim_is_judged_as_it_is_now() -> None:
    """The state is read before the seat is claimed; a write lost in between (a power cut
    under ``everysec`` takes the last second back: the seat's join and its claim) leaves the
    seat free by the time of the claim. The join goes ahead instead of answering
    ``seat_taken`` from the older read (seen once in the chaos run)."""
    case = Seating()
    case.sit(0)  # as last read: seat 0 taken by a join the power cut then lost
    claim = case.claims.claim

    async def lost_then_claimed(game_id: str, seat: int, token: str, request: str = "") -> Any:
        game, _ = case.games.games["g1"]
        case.games.games["g1"] = (game, table())  # Redis back without that join
        return await claim(game_id, seat, token, request)

    case.claims.claim = lost_then_claimed  # type: ignore[method-assign]
    taken = await case.take("g1", 0, ask("Bob"), KEY)
    assert taken.seat == 0
    assert case.bus.kinds() == ["JoinGame"]


async def test_a_seat_still_taken_when_read_again_is_refused_and_its_claim_released() -> None:
    case = Seating()
    case.sit(0)  # taken by a join whose claim is gone
    with pytest.raises(Refusal) as refused:
        await case.take("g1", 0, ask("Bob"), KEY)
    assert (refused.value.kind, refused.value.code) == ("conflict", "seat_taken")
    assert case.claims.claims == {}
    assert case.bus.sent == []


async def test_a_keyed_join_retried_gets_the_same_seat_token_and_recovery_code() -> None:
    case = Seating()
    first = await case.take("g1", 0, ask(), KEY)
    case.sit(0)
    again = await case.take("g1", 0, ask(), KEY)
    assert (again.token, again.recovery) == (first.token, first.recovery)
    assert {e.command_id for e in case.bus.sent} == {case.bus.sent[0].command_id}
    with pytest.raises(Refusal) as reused:  # the key with another body changes nothing
        await case.take("g1", 0, ask("Bob"), KEY)
    assert reused.value.code == "idempotency_key_reused"
    assert len(case.bus.sent) == 2


async def test_a_join_the_rules_refuse_releases_the_claim_a_timeout_keeps_it() -> None:
    case = Seating()
    case.bus.decide = rejected("wrong_phase")
    with pytest.raises(Refusal) as refused:
        await case.take("g1", 0, ask(), None)
    assert (refused.value.kind, refused.value.code) == ("conflict", "wrong_phase")
    assert case.claims.claims == {}
    case.bus.decide = lambda _: Refusal("timeout", "rules_timeout", "No answer in time.")
    with pytest.raises(Refusal):
        await case.take("g1", 0, ask(), KEY)
    assert ("g1", 0) in case.claims.claims  # the join may still land: a retry finds it


async def test_an_abandoned_claim_of_a_free_seat_is_released_for_the_next_claimant() -> None:
    case = Seating()
    case.bus.decide = lambda _: Refusal("unavailable", "store_unavailable", "Retry.")
    with pytest.raises(Refusal):
        await case.take("g1", 0, ask("Ann"), None)
    case.bus.decide, case.claims.abandoned = None, True
    taken = await case.take("g1", 0, ask("Bob"), None)
    assert taken.seat == 0
    commands: list[Any] = [e.command for e in case.bus.sent]  # the fake game's own commands
    assert [command.name for command in commands] == ["Ann", "Bob"]


async def test_invitations_and_identities_are_checked_before_any_claim() -> None:
    case = Seating()
    case.lobby.invites["g1"] = "the-code"
    with pytest.raises(Refusal) as uninvited:
        await case.take("g1", 0, ask(), None)
    assert uninvited.value.kind == "forbidden"
    with pytest.raises(Refusal) as no_provider:
        await case.take("g1", 0, ask(invite="the-code", id_token="jwt"), None)
    assert (no_provider.value.kind, no_provider.value.code) == (
        "invalid",
        "identity_not_configured",
    )
    assert case.claims.claims == {}
    assert case.bus.sent == []
    bound = Seating(identity=FakeIdentities({"jwt": "user-1"}))
    taken = await bound.take("g1", 0, ask(id_token="jwt"), None)
    assert taken.bound
    assert bound.recovery.bound[("g1", 0)][1] == "user-1"


async def test_a_reclaimed_seat_gets_a_new_token_and_the_old_one_is_revoked() -> None:
    case = Seating()
    taken = await case.take("g1", 0, ask(), None)
    reclaimed = await case.reclaim("g1", 0, taken.recovery, None)
    assert (reclaimed.token, reclaimed.recovery) == ("fresh-token", "fresh-recovery")
    assert case.tokens.revoked == [("g1", "old-digest")]
    with pytest.raises(Refusal) as used:  # a recovery code works once
        await case.reclaim("g1", 0, taken.recovery, None)
    assert (used.value.kind, used.value.code) == ("forbidden", "not_your_seat")
    with pytest.raises(Refusal) as unknown:
        await case.reclaim("nope", 0, taken.recovery, None)
    assert unknown.value.kind == "not_found"


def test_every_kind_of_refusal_has_its_status_and_an_api_error_keeps_its_own() -> None:
    assert api_error(Refusal("conflict", "seat_taken", "Taken.")).status == 409
    assert {kind: STATUS[kind] for kind in ("invalid", "timeout", "unavailable")} == {
        "invalid": 422,
        "timeout": 504,
        "unavailable": 503,
    }
    own = ApiError(409, "idempotency_key_in_flight", "Still being answered.")
    assert api_error(own) is own
    assert own.kind == "conflict"
    assert not own.retryable
    assert ApiError(504, "rules_timeout", "Late.").retryable
    assert REJECTION_STATUS == {
        "invalid_command": 422,
        "malformed": 422,
        "game_not_found": 404,
        "not_your_seat": 403,
        "contended": 503,
        "store_unavailable": 503,
        "internal_error": 500,
    }
