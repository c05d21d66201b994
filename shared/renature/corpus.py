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

import hashlib

import msgspec

from renature import commands as c
from renature import events as e
from renature.errors import RuleError
from renature.game import play, setup_commands, simulation_id
from renature.rules import execute, legal_actions
from renature.state import GameState

GAMES: tuple[tuple[str, int, str], ...] = tuple(
    (board, players, bot)
    for board in ("base", "valley", "valley-back")
    for players in (2, 3, 4)
    for bot in ("random", "greedy")
)
"""(board, players, bot for every seat) of the corpus games."""


class CorpusGame(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    board: str
    players: int
    seed: str
    bots: list[str]
    commands: list[c.SeatCommand]
    legal_actions: list[int]
    """How many legal actions the acting seat had just before each command."""
    events: int
    log_sha256: str
    """SHA-256 of the event log as ``renature simulate --events`` writes it."""
    scores: list[int]
    ranking: list[int]
    winners: list[int]


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
    if len(game.legal_actions) != len(game.commands):
        return ["the record has not one legal-action count per command"]
    try:
        found = _replayed(game.board, game.players, game.seed, game.bots, game.commands)
    except RuleError as error:
        return [f"a recorded command is refused: {error.message}"]
    for number, (command, counted, recorded) in enumerate(
        zip(game.commands, found.legal_actions, game.legal_actions, strict=True), start=1
    ):
        if counted != recorded:
            return [
                f"command {number}: seat {command.seat} has {counted} legal actions, not {recorded}"
            ]
    problems = []
    found_result = (found.events, found.scores, found.ranking)
    expected_result = (game.events, game.scores, game.ranking)
    if found_result != expected_result:
        problems.append(f"(events, scores, ranking) {found_result}, not {expected_result}")
    if found.winners != game.winners:
        problems.append(f"winners {found.winners}, not {game.winners}")
    if found.log_sha256 != game.log_sha256:
        problems.append("the event log differs from the recorded one")
    return problems


def log_digest(log: list[e.Event]) -> str:
    digest = hashlib.sha256()
    for event in log:
        digest.update(e.encode(event) + b"\n")
    return digest.hexdigest()


def _replayed(
    board: str, players: int, seed: str, bots: list[str], played: list[c.SeatCommand]
) -> CorpusGame:
    """The record of a game: set it up, count the acting seat's legal actions before each
    command and play it, then finish the game. Raises `RuleError` for a command the rules
    refuse or a game that does not end with the last command."""
    log: list[e.Event] = []
    state: GameState | None = None
    for command in setup_commands(simulation_id(seed), players, seed, board, bots):
        events, state = execute(state, command)
        log += events
    assert state is not None
    counts = []
    for command in played:
        counts.append(len(legal_actions(state, command.seat)))
        events, state = execute(state, command)
        log += events
    events, state = execute(state, c.FinishGame(seed))  # refused unless the game has ended
    log += events
    return CorpusGame(
        board=board,
        players=players,
        seed=seed,
        bots=bots,
        commands=played,
        legal_actions=counts,
        events=len(log),
        log_sha256=log_digest(log),
        scores=[seat.score for seat in state.seats],
        ranking=list(state.result),
        winners=list(state.winners),
    )
