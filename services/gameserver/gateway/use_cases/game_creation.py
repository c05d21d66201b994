"""Creating a game (``POST /games``): its body read for any hosted game, a chosen seed staged,
the creation sent to the rules service, the game recorded in the lobby; with an idempotency key
the game id comes from the key, so a retry answers the same game and nothing new
(`gameserver.gateway.idempotency`)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from gameplatform.creation import CreationError, NotHosted, options_dict, read_creation
from gameserver.gateway.idempotency import fingerprint, game_id_for, key_reused
from gameserver.gateway.use_cases.outcomes import outcome_of
from gameserver.gateway.use_cases.ports import (
    CommandBus,
    CreationRecords,
    GameMarks,
    KeyLeases,
    SeedStaging,
)
from gameserver.gateway.use_cases.refusals import Refusal
from gameserver.runtime.bus import CommandEnvelope


@dataclass(frozen=True, slots=True)
class Created:
    """A game created: its facts and the secrets shown once (the host token, the code)."""

    game_id: str
    game: str
    players: int
    board: str
    version: int
    seed: str
    """``public`` (a game whose seed deals nothing hidden), ``chosen`` or ``secret``."""
    host_token: str
    invite_code: str | None


@dataclass(frozen=True, slots=True)
class Asked:
    """What a creation body asks for, as `read_creation` reads it."""

    game: Any
    creation: Any
    options: Any


def now_ms() -> int:
    return int(time.time() * 1000)


class CreateGame:
    """Create a game of any hosted game, safely retried under an idempotency key."""

    def __init__(
        self,
        bus: CommandBus,
        records: CreationRecords,
        seeds: SeedStaging,
        marks: GameMarks,
        leases: KeyLeases,
        *,
        allow_chosen_seeds: bool,
        clock_ms: Callable[[], int] = now_ms,
        new_id: Callable[[], str] = lambda: uuid.uuid4().hex,
    ) -> None:
        """``allow_chosen_seeds``: whether a body may name the seed (test, bot and tournament
        servers); ``clock_ms`` and ``new_id`` the creation time and the id of an unkeyed game."""
        self._bus = bus
        self._records = records
        self._seeds = seeds
        self._marks = marks
        self._leases = leases
        self._allow_chosen_seeds = allow_chosen_seeds
        self._clock_ms = clock_ms
        self._new_id = new_id

    async def __call__(self, body: Mapping[str, Any], key: str | None) -> Created:
        """Create the game ``body`` asks for. With ``key`` a retry creates nothing new and
        answers the same game; the key with another body is refused (``invalid``,
        ``idempotency_key_reused``), and so is a retry while the first request is still
        answered (``conflict``, ``idempotency_key_in_flight``)."""
        asked = read(body)
        if key is None:
            return await self._create(self._new_id(), asked, None)
        game_id = game_id_for(key)
        async with self._leases.hold(game_id, "create"):
            return await self._keyed(game_id, asked, key)

    async def _keyed(self, game_id: str, asked: Asked, key: str) -> Created:
        """A keyed creation: its body's fingerprint is recorded first, so that the key with
        another body changes nothing; a refused creation forgets the fingerprint it
        recorded."""
        # The body as read (defaults filled in): the same request always gives the same one.
        read_body = [asked.game.name, asked.creation, asked.options]
        request = fingerprint(key, msgspec.json.encode(read_body))
        held = await self._records.hold_request(game_id, request)
        if held is False:
            raise key_reused()
        try:
            return await self._create(game_id, asked, key)
        except Refusal as refusal:
            if held and not refusal.retryable:  # ours, and no game may come of it
                await self._records.forget_request(game_id, request)
            raise

    async def _create(self, game_id: str, asked: Asked, key: str | None) -> Created:
        game, creation = asked.game, asked.creation
        board = creation.board
        command = game.create_command(game_id, creation.players, board, options_dict(asked.options))
        if game.seed_secret and creation.seed is not None:
            await self._choose_seed(game_id, creation.seed or "", retry=key is not None)
        elif creation.seed is not None:  # a seed that deals nothing hidden is public
            command = game.with_seed(command, creation.seed)
        # A secret seed stays blank on the bus: the rules service takes it from its vault.
        reply = await self._bus.send(CommandEnvelope(game_id, "create", command, None, game.name))
        outcome = outcome_of(reply, "create")
        public = not game.seed_secret
        chosen = creation.seed is not None
        await self._marks.mark_created(game_id, chosen_seed=chosen, public=public)
        host_token, invite_code = await self._records.register(
            game_id, seating=creation.seating, created_ms=self._clock_ms(), idempotency_key=key
        )
        return Created(
            game_id=game_id,
            game=game.name,
            players=creation.players,
            board=board,
            version=outcome.version,
            seed="public" if public else "chosen" if chosen else "secret",
            host_token=host_token,
            invite_code=invite_code,
        )

    async def _choose_seed(self, game_id: str, seed: str, *, retry: bool) -> None:
        """Stage a caller's seed before the game exists: ``forbidden`` where chosen seeds are
        off, ``conflict`` when the id has a seed already (unless this may be a keyed retry:
        the id is derived from the caller's secret key, so the seed there is its own)."""
        if not self._allow_chosen_seeds:
            raise Refusal(
                "forbidden",
                "chosen_seeds_disabled",
                "This server deals every game from a secret seed; it does not take a chosen "
                "seed (test and tournament servers set RENATURE_ALLOW_CHOSEN_SEEDS=1).",
            )
        if not await self._seeds.choose(game_id, seed) and not retry:
            raise Refusal("conflict", "game_exists", "A game with this id exists already; retry.")


def read(body: Mapping[str, Any]) -> Asked:
    """The game, creation and options a body asks for (`read_creation`), or ``invalid``
    naming what is wrong: an unknown field (and the game), a value, or a game not hosted
    here (``unknown_game``)."""
    try:
        return Asked(*read_creation(body))
    except CreationError as error:
        code = "unknown_game" if isinstance(error, NotHosted) else "malformed_request"
        raise Refusal("invalid", code, str(error)) from None
