"""A corpus of recorded games to test any Renature implementation against (like perft in chess).

Each game is given by its board, player count and seed (the deal follows from the seed, see
docs/events.md) and the seat commands that were played; for each command it records how many
legal actions the acting seat had just before it, and at the end the final scores, ranking
and winners. Another implementation replays the commands from the same deal and must find the
same numbers of legal actions at every step and the same result. ``log_sha256`` pins this
implementation's event log byte for byte (a regression check of its own format).

The games are played by the bots: random ones walk through every kind of action (discards,
cloud actions, mushrooms declined), greedy ones play like people who want points.
"""

from __future__ import annotations

import msgspec

from gameplatform import corpus, simulation
from renature import commands as c
from renature.game import play, setup_commands, simulation_id
from renature.legal_moves import legal_actions
from renature.rules import RULES, execute

GAMES: tuple[tuple[str, int, str], ...] = tuple(
    (board, players, bot)
    for board in ("base", "valley", "valley-back")
    for players in (2, 3, 4)
    for bot in ("random", "greedy")
)
"""(board, players, bot for every seat) of the corpus games."""


class CorpusGame(corpus.Record[c.SeatCommand], frozen=True, forbid_unknown_fields=True):
    """The platform's record (commands, legal-action counts, result, log digest) of a game
    set up on ``board`` for ``players`` seats, dealt from ``seed``, played by ``bots``."""

    board: str
    players: int
    seed: str
    bots: list[str]


def seed_of(board: str, players: int, bot: str) -> str:
    return f"corpus-{board}-{players}-{bot}"


def record(board: str, players: int, bot: str) -> CorpusGame:
    """Play one corpus game with the bots and record it."""
    seed = seed_of(board, players, bot)
    bots = [bot] * players
    log, _ = play(players, seed, bots, board=board)
    played = [
        event.cause.command
        for event in log
        if event.cause is not None and isinstance(event.cause.command, c.SeatCommand)
    ]
    return _replayed(board, players, seed, bots, played)


def check(game: CorpusGame) -> list[str]:
    """Replay a corpus game; what differs from the record (empty when everything agrees)."""
    return corpus.check(game, _replayed_record)


def _replayed_record(game: CorpusGame) -> CorpusGame:
    return _replayed(game.board, game.players, game.seed, game.bots, game.commands)


def _replayed(
    board: str, players: int, seed: str, bots: list[str], played: list[c.SeatCommand]
) -> CorpusGame:
    """The record of a game: set it up, count the acting seat's legal actions before each
    command and play it, then finish the game. Raises `RuleError` for a command the rules
    refuse or a game that does not end with the last command."""
    setup = setup_commands(simulation_id(seed), players, seed, board, bots)
    log, counts, state = simulation.replay_counting(RULES, setup, played, legal_actions)
    events, state = execute(state, c.FinishGame(seed))  # refused unless the game has ended
    log += events
    result = ([seat.score for seat in state.seats], list(state.result), list(state.winners))
    return CorpusGame(
        board=board,
        players=players,
        seed=seed,
        bots=bots,
        **corpus.recorded(played, counts, log, result),
    )


_decoder = msgspec.json.Decoder(CorpusGame)


def records() -> list[CorpusGame]:
    """Every corpus game, played and recorded."""
    return [record(*game) for game in GAMES]


def check_line(line: bytes) -> tuple[str, list[str]]:
    """A corpus game from its JSON line: its name, and what differs from the record."""
    game = _decoder.decode(line)
    return f"{game.board}, {game.players} players, {game.seed!r}", check(game)
