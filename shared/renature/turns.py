"""What every decider of a turn shares: the batch, the checks that it is a seat's turn, a cell
on the board, and the end of a turn (step C 2, step D, ruling 10), which ``seating`` uses too
when a seat leaves on its turn."""

from __future__ import annotations

from gameplatform import execution
from renature import commands as c
from renature import events as e
from renature.areas import areas_closed_by
from renature.components import COLOURS, components
from renature.errors import GameOver, InvalidCommand, NotYourTurn, RuleError, WrongPhase
from renature.legal_moves import can_spend_clouds
from renature.scoring import area_awards
from renature.state import GameState, SeatState

Batch = execution.Batch[GameState, e.Event]
"""Events of one command (the platform's batch): each applied as it is emitted, the first
recording the cause, every one sealed into the hash chain."""


def check_seat_number(s: GameState, seat: int) -> None:
    if not 0 <= seat < s.players:
        raise InvalidCommand(f"There is no seat {seat} in a {s.players}-player game.")


def check_turn(s: GameState, seat: int) -> SeatState:
    if s.phase == "lobby":
        raise WrongPhase("The game has not started yet.")
    if s.phase in ("final_scoring", "finished"):
        raise GameOver("The game is over: nobody has any dominoes left.")
    if s.phase == "cancelled":
        raise GameOver("The game was cancelled.")
    check_seat_number(s, seat)
    if seat != s.current:
        current = COLOURS[s.seats[s.current].colour]
        raise NotYourTurn(f"It is {current}'s turn, not {COLOURS[s.seats[seat].colour]}'s.")
    if s.phase == "place_mushroom":
        raise WrongPhase("Place the mushroom you gained first.")
    return s.seats[seat]


def cell_index(s: GameState, cell: c.Cell, broken: type[RuleError]) -> int:
    """The board index of ``cell``; a cell off the board breaks the rule ``broken`` (every
    piece lies inside the grid), like any other space the piece may not go on."""
    if not s.board.contains(cell.x, cell.y):
        raise broken(f"({cell.x}, {cell.y}) is not on the board.")
    return s.board.index(cell.x, cell.y)


def animal_name(animal: int) -> str:
    return components().animals[animal]


def finish_turn_steps(b: Batch, seat: int) -> None:
    """Step C 2 (score the areas this turn's domino closed), step D (refill), and the end of
    the turn when no cloud action is possible (ruling 10)."""
    s = b.state
    if s.placed and s.board.scoring == "on_closing":
        for area in areas_closed_by(s, s.placed):
            score_area(b, area, closer=seat)
    if b.state.seats[seat].reserve:
        b.emit(
            e.DominoDrawn(
                game_id=b.game_id,
                version=b.next_version,
                seat=seat,
                domino=b.state.seats[seat].reserve[0],
            )
        )
    if not can_spend_clouds(b.state, seat):
        end_turn(b, seat)


def score_area(b: Batch, area: int, closer: int | None, final: bool = False) -> None:
    s = b.state
    token_id = s.area_tokens[area]
    if token_id is not None:
        token = s.board.token(token_id)
        main, minor = token.main, token.minor
    else:  # Valley: by area size
        main = s.area_sizes[area]
        minor = main // 2
    totals, cancelled, awards = area_awards(s, area, main, minor)
    b.emit(
        e.AreaScored(
            game_id=b.game_id,
            version=b.next_version,
            seat=closer,
            area=s.board.area_ids[area],
            size=s.area_sizes[area],
            token=token_id,
            main=main,
            minor=minor,
            totals=totals,
            cancelled=cancelled,
            awards=awards,
            final=final,
        )
    )


def end_turn(b: Batch, seat: int) -> None:
    s = b.state
    skipped: list[int] = []
    for step in range(1, s.players + 1):
        candidate = (seat + step) % s.players
        if s.seats[candidate].hand:
            b.emit(
                e.TurnEnded(
                    game_id=b.game_id,
                    version=b.next_version,
                    seat=seat,
                    next_seat=candidate,
                    skipped=skipped,
                )
            )
            return
        if candidate != seat:
            skipped.append(candidate)
    b.emit(
        e.TurnEnded(
            game_id=b.game_id, version=b.next_version, seat=seat, next_seat=None, skipped=[]
        )
    )
