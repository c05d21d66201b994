"""The rules of Renature: ``decide`` validates a command and returns events, ``evolve`` applies an
event without checks, ``legal_actions`` lists every command a seat may give now.

Rule references in docstrings point at the English online rules ("A:", "B:", "C:", "D:", "Cloud
actions", "End of the game") and at the rulings page (``ruling N``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from msgspec.structs import replace

from gameplatform import execution
from renature import commands as c
from renature import events as e
from renature import seating
from renature.board import PATH, Board
from renature.components import (
    COLOURS,
    NEUTRAL,
    PLANT_TYPES,
    components,
    plant_code,
    plant_colour,
    plant_type,
    plant_value,
)
from renature.deal import commitment, deal
from renature.errors import (
    GameOver,
    IllegalCloudAction,
    IllegalMushroom,
    IllegalPlacement,
    IllegalPlant,
    InvalidCommand,
    NotEnoughClouds,
    NotInHand,
    NotYourTurn,
    RuleError,
    SeedMismatch,
    WrongPhase,
)
from renature.geometry import geometry
from renature.state import GameState, SeatState

ALL_ANIMALS = (1 << 10) - 1

# --- small helpers -----------------------------------------------------------------------------


def seat_of_colour(state: GameState, colour: int) -> int | None:
    for seat, s in enumerate(state.seats):
        if s.colour == colour:
            return seat
    return None


def _slot(seat: SeatState, code: int) -> int | None:
    """Index of the player-board slot that holds this plant, or None if not this seat's."""
    colour = plant_colour(code)
    if colour == seat.colour:
        return plant_type(code)
    if colour == NEUTRAL:
        return 4 + plant_type(code)
    return None


def board_capacity(state: GameState) -> tuple[int, ...]:
    return components().player_boards[state.players].capacity(state.players)


def _plant_label(code: int) -> str:
    return f"{COLOURS[plant_colour(code)]} {PLANT_TYPES[plant_type(code)]}"


def _with_seat(state: GameState, seat: int, **changes: Any) -> tuple[SeatState, ...]:
    seats = list(state.seats)
    seats[seat] = replace(seats[seat], **changes)
    return tuple(seats)


def _set(values: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    return (*values[:index], value, *values[index + 1 :])


def area_cells(state: GameState, area: int) -> tuple[int, ...]:
    """The spaces of an area now (Valley mushrooms add spaces and merge areas)."""
    board = state.board
    if board.mushrooms == 0:
        return geometry(board.id).area_cells[area]
    return tuple(i for i, a in enumerate(state.area_of) if a == area)


def live_areas(state: GameState) -> list[int]:
    return [a for a, size in enumerate(state.area_sizes) if size > 0]


# --- the brook: placement and closing ----------------------------------------------------------


def is_free_path(state: GameState, cell: int) -> bool:
    return state.board.kinds[cell] == PATH and state.cover[cell] < 0 and state.area_of[cell] < 0


def allowed_animals(state: GameState, cell: int) -> tuple[int, bool]:
    """Bit mask of the animals that may lie on a free cell, and whether it is anchored.

    Every animal beside the cell must match: same animal, or either is the joker (ruling 1).
    Anchored: on a starting space, or beside at least one animal.
    """
    cover = state.cover
    neighbours = [cover[n] for n in state.board.neighbours[cell] if cover[n] >= 0]
    anchored = bool(neighbours) or cell in state.board.starts
    others = {a for a in neighbours if a != state.joker}
    if not others:
        return ALL_ANIMALS, anchored
    if len(others) == 1:
        return (1 << others.pop()) | (1 << state.joker), anchored
    return 1 << state.joker, anchored


def legal_placements(state: GameState, hand: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """Every (domino, first cell, second cell) placement for the dominoes of ``hand``."""
    board = state.board
    cover, kinds, area_of, neighbours = state.cover, board.kinds, state.area_of, board.neighbours

    def free(cell: int) -> bool:
        return kinds[cell] == PATH and cover[cell] < 0 and area_of[cell] < 0

    # Anchored free cells: a starting space, or beside an animal.
    anchors = {cell for cell in board.starts if free(cell)}
    for _, p, q in state.dominoes:
        for cell in (p, q):
            anchors.update(n for n in neighbours[cell] if free(n))
    masks: dict[int, tuple[int, bool]] = {}
    edges: set[tuple[int, int]] = set()
    for cell in anchors:
        for n in neighbours[cell]:
            if free(n):
                edges.add((min(cell, n), max(cell, n)))
    for edge in edges:
        for cell in edge:
            if cell not in masks:
                masks[cell] = allowed_animals(state, cell)
    dominoes = components().dominoes
    out: list[tuple[int, int, int]] = []
    for domino in sorted(set(hand)):
        a, b = dominoes[domino]
        bit_a, bit_b = 1 << a, 1 << b
        for p, q in sorted(edges):
            mask_p, _ = masks[p]
            mask_q, _ = masks[q]
            if mask_p & bit_a and mask_q & bit_b:
                out.append((domino, p, q))
            if mask_q & bit_a and mask_p & bit_b:
                out.append((domino, q, p))
    return out


def is_isolated(state: GameState, cell: int) -> bool:
    """A free brook space with no free brook space beside it: no domino can ever cover it."""
    return not any(is_free_path(state, n) for n in state.board.neighbours[cell])


def is_closed(state: GameState, area: int) -> bool:
    """Closed off: every brook space beside the area is covered or isolated (ruling 6)."""
    for cell in geometry(state.board_id).area_border[area]:
        if state.cover[cell] < 0 and not is_isolated(state, cell):
            return False
    return True


def areas_closed_by(state: GameState, cells: tuple[int, ...]) -> list[int]:
    """Areas still holding their token that are closed now and that covering ``cells`` could
    have closed (only a domino changes the brook)."""
    closable = geometry(state.board_id).closable_by
    candidates = sorted({a for cell in cells for a in closable.get(cell, ())})
    return [a for a in candidates if state.area_tokens[a] is not None and is_closed(state, a)]


# --- scoring -----------------------------------------------------------------------------------


def plant_points(state: GameState, cell: int, code: int) -> tuple[int, int]:
    """Points for a plant placed on ``cell``: 1 for itself and 1 for every other plant of any
    colour in that area with equal or lower value (step C 1, ruling 5). Returns (points, count)."""
    value = plant_value(code)
    plants = state.plants
    counted = sum(
        1
        for other in area_cells(state, state.area_of[cell])
        if other != cell and plants[other] >= 0 and plant_value(plants[other]) <= value
    )
    return 1 + counted, counted


def colour_totals(state: GameState, area: int) -> list[int]:
    totals = [0] * len(COLOURS)
    plants = state.plants
    for cell in area_cells(state, area):
        if plants[cell] >= 0:
            totals[plant_colour(plants[cell])] += plant_value(plants[cell])
    return totals


def majority_ranks(totals: list[int]) -> tuple[list[int], list[tuple[int, str]]]:
    """Who ranks in an area scoring (ruling 7), by colour: colours whose totals tie cancel;
    a sole remaining colour ranks ``sole`` (main + minor), otherwise the highest ``main`` and
    the second ``minor``. Returns (cancelled colours, [(colour, rank)]). Neutral still takes
    its rank here; it is the caller who gives a neutral rank no points."""
    present = [(t, colour) for colour, t in enumerate(totals) if t > 0]
    if not present:
        return [], []
    values = [t for t, _ in present]  # at most five: counting beats a Counter here
    cancelled = [col for t, col in present if values.count(t) > 1]
    remaining = sorted(((t, col) for t, col in present if values.count(t) == 1), reverse=True)
    if len(remaining) == 1:
        return cancelled, [(remaining[0][1], "sole")]
    return cancelled, [
        (col, rank) for (_, col), rank in zip(remaining, ("main", "minor"), strict=False)
    ]


RANK_REASONS = {
    "sole": "sole colour: main + minor points",
    "main": "highest total: main points",
    "minor": "second-highest total: minor points",
}


def rank_points(rank: str, main: int, minor: int) -> int:
    return {"sole": main + minor, "main": main, "minor": minor}[rank]


def area_awards(
    state: GameState, area: int, main: int, minor: int
) -> tuple[dict[str, int], list[str], list[e.Award]]:
    """Area scoring (ruling 7) of an area now: (totals by colour, cancelled colours, awards)."""
    totals = colour_totals(state, area)
    cancelled, ranks = majority_ranks(totals)
    area_id = state.board.area_ids[area]
    awards = []
    for colour, rank in ranks:
        seat = seat_of_colour(state, colour)
        if seat is not None and colour != NEUTRAL:
            points = rank_points(rank, main, minor)
            reason = f"{RANK_REASONS[rank]} in area {area_id}"
            awards.append(e.Award(seat, COLOURS[colour], points, reason))
    named = {COLOURS[col]: t for col, t in enumerate(totals) if t > 0}
    return named, [COLOURS[col] for col in cancelled], awards


# --- evolve ------------------------------------------------------------------------------------


def _created(_: GameState | None, ev: e.GameCreated) -> GameState:
    comps = components()
    board = Board_of(ev.board)
    deal_ = ev.deal
    capacity = comps.player_boards[ev.players].capacity(ev.players)
    seats = tuple(
        SeatState(
            colour=COLOURS.index(colour),
            hand=tuple(deal_.hands[s]) if deal_ else (),
            reserve=tuple(deal_.reserves[s]) if deal_ else (),
            plants=capacity,
            clouds=comps.cloud_spaces,
        )
        for s, colour in enumerate(ev.seat_colours)
    )
    tokens = deal_.area_tokens if deal_ else {}
    n_cells = board.width * board.height
    on_board = sum(board.clouds)
    return GameState(
        game_id=ev.game_id,
        board_id=ev.board,
        players=ev.players,
        commitment=ev.seed_commitment,
        chosen_deal=ev.chosen_seed,
        board=board,
        version=ev.version,
        seats=seats,
        cover=(-1,) * n_cells,
        plants=(-1,) * n_cells,
        area_of=board.area_of,
        clouds=board.clouds,
        area_tokens=tuple(tokens.get(a) for a in board.area_ids),
        area_sizes=board.area_sizes,
        joker=comps.starting_joker,
        mushrooms_left=board.mushrooms,
        box_dominoes=tuple(deal_.box) if deal_ else (),
        box_clouds=board.cloud_tokens - on_board - comps.cloud_spaces * ev.players,
    )


def Board_of(board_id: str) -> Board:  # noqa: N802 - reads as a constructor
    from renature.board import load_board

    return load_board(board_id)


def _joined(s: GameState, ev: e.PlayerJoined) -> GameState:
    assert ev.seat is not None
    return replace(s, seats=_with_seat(s, ev.seat, name=ev.name))


def _started(s: GameState, ev: e.GameStarted) -> GameState:
    seats = tuple(
        replace(seat, score=score) for seat, score in zip(s.seats, ev.starting_scores, strict=True)
    )
    return replace(s, seats=seats, phase="place_domino", current=ev.first_seat, turn=1)


def _domino_placed(s: GameState, ev: e.DominoPlaced) -> GameState:
    assert ev.seat is not None
    board = s.board
    first = board.index(ev.first.x, ev.first.y)
    second = board.index(ev.second.x, ev.second.y)
    a, b = components().dominoes[ev.domino]
    cover = list(s.cover)
    cover[first], cover[second] = a, b
    seat = s.seats[ev.seat]
    hand = list(seat.hand)
    hand.remove(ev.domino)
    clouds = s.clouds
    if ev.clouds_taken or ev.clouds_returned:
        clouds = _set(_set(clouds, first, 0), second, 0)
    return replace(
        s,
        cover=tuple(cover),
        seats=_with_seat(s, ev.seat, hand=tuple(hand), clouds=seat.clouds + ev.clouds_taken),
        clouds=clouds,
        box_clouds=s.box_clouds + ev.clouds_returned,
        placed=(first, second),
        dominoes=(*s.dominoes, (ev.domino, first, second)),
        phase="place_plant",
    )


def _discarded(s: GameState, ev: e.DominoDiscarded) -> GameState:
    assert ev.seat is not None
    assert ev.domino is not None
    hand = list(s.seats[ev.seat].hand)
    hand.remove(ev.domino)
    return replace(
        s,
        seats=_with_seat(s, ev.seat, hand=tuple(hand)),
        box_dominoes=(*s.box_dominoes, ev.domino),
        phase="end_of_turn",
    )


def _plant_placed(s: GameState, ev: e.PlantPlaced) -> GameState:
    assert ev.seat is not None
    cell = s.board.index(ev.x, ev.y)
    code = plant_code(COLOURS.index(ev.colour), PLANT_TYPES.index(ev.plant))
    seat = s.seats[ev.seat]
    slot = _slot(seat, code)
    assert slot is not None
    return replace(
        s,
        plants=_set(s.plants, cell, code),
        clouds=_set(s.clouds, cell, 0),
        box_clouds=s.box_clouds + ev.clouds_returned,
        seats=_with_seat(
            s,
            ev.seat,
            plants=_set(seat.plants, slot, seat.plants[slot] - 1),
            score=seat.score + ev.points,
            clouds=seat.clouds + ev.clouds_taken,
        ),
        phase="end_of_turn",
    )


def _plant_skipped(s: GameState, _: e.PlantSkipped) -> GameState:
    return replace(s, phase="end_of_turn")


def _area_scored(s: GameState, ev: e.AreaScored) -> GameState:
    seats = list(s.seats)
    for award in ev.awards:
        seats[award.seat] = replace(seats[award.seat], score=seats[award.seat].score + award.points)
    if ev.token is not None and not ev.final and ev.seat is not None:
        closer = seats[ev.seat]
        seats[ev.seat] = replace(closer, tokens=(*closer.tokens, ev.token))
    area = s.board.area_ids.index(ev.area)
    return replace(s, seats=tuple(seats), area_tokens=_set(s.area_tokens, area, None))


def _drawn(s: GameState, ev: e.DominoDrawn) -> GameState:
    assert ev.seat is not None
    seat = s.seats[ev.seat]
    return replace(
        s,
        seats=_with_seat(s, ev.seat, hand=(*seat.hand, seat.reserve[0]), reserve=seat.reserve[1:]),
    )


def _pay(s: GameState, seat: int, cost: int) -> tuple[SeatState, ...]:
    return _with_seat(s, seat, clouds=s.seats[seat].clouds - cost)


def _joker_changed(s: GameState, ev: e.JokerChanged) -> GameState:
    assert ev.seat is not None
    return replace(
        s,
        joker=components().animal(ev.to_animal),
        seats=_pay(s, ev.seat, ev.cost),
        box_clouds=s.box_clouds + ev.cost,
    )


def _plant_returned(s: GameState, ev: e.PlantReturned) -> GameState:
    assert ev.seat is not None
    cell = s.board.index(ev.x, ev.y)
    seat = s.seats[ev.seat]
    slot = _slot(seat, s.plants[cell])
    assert slot is not None
    seats = _with_seat(
        s,
        ev.seat,
        plants=_set(seat.plants, slot, seat.plants[slot] + 1),
        clouds=seat.clouds - ev.cost,
    )
    return replace(
        s, plants=_set(s.plants, cell, -1), seats=seats, box_clouds=s.box_clouds + ev.cost
    )


def _extra_turn(s: GameState, ev: e.ExtraTurnTaken) -> GameState:
    assert ev.seat is not None
    return replace(
        s,
        seats=_pay(s, ev.seat, ev.cost),
        box_clouds=s.box_clouds + ev.cost,
        phase="place_domino",
        placed=(),
        turn=s.turn + 1,
    )


def _mushroom_gained(s: GameState, ev: e.MushroomGained) -> GameState:
    return replace(s, mushrooms_left=ev.mushrooms_left, phase="place_mushroom")


def _mushroom_placed(s: GameState, ev: e.MushroomPlaced) -> GameState:
    board = s.board
    cell = board.index(ev.x, ev.y)
    target = board.area_ids.index(ev.area)
    joined = {board.area_ids.index(a) for a in ev.joined}
    area_of = tuple(target if (a in joined or i == cell) else a for i, a in enumerate(s.area_of))
    sizes = tuple(
        ev.size if a == target else (0 if a in joined else size)
        for a, size in enumerate(s.area_sizes)
    )
    return replace(s, area_of=area_of, area_sizes=sizes, phase="place_plant")


def _mushroom_lost(s: GameState, _: e.MushroomLost) -> GameState:
    return replace(s, phase="place_plant")


def _mushroom_declined(s: GameState, ev: e.MushroomDeclined) -> GameState:
    return replace(s, mushrooms_left=ev.mushrooms_left, phase="place_plant")


def _turn_ended(s: GameState, ev: e.TurnEnded) -> GameState:
    if ev.next_seat is None:
        return replace(s, phase="final_scoring", current=-1, placed=())
    return replace(s, phase="place_domino", current=ev.next_seat, placed=(), turn=s.turn + 1)


def _points(s: GameState, ev: e.CloudsScored | e.PlantsPenalised | e.TokensRevealed) -> GameState:
    assert ev.seat is not None
    return replace(s, seats=_with_seat(s, ev.seat, score=s.seats[ev.seat].score + ev.points))


def _ended(s: GameState, ev: e.GameEnded) -> GameState:
    return replace(
        s,
        phase="finished",
        result=tuple(ev.ranking),
        winners=tuple(ev.winners),
        revealed_seed=ev.seed,
    )


_EVOLVERS: dict[type[e.Event], Callable[[Any, Any], GameState]] = {
    e.GameCreated: _created,
    e.PlayerJoined: _joined,
    e.GameStarted: _started,
    e.DominoPlaced: _domino_placed,
    e.DominoDiscarded: _discarded,
    e.PlantPlaced: _plant_placed,
    e.PlantSkipped: _plant_skipped,
    e.AreaScored: _area_scored,
    e.DominoDrawn: _drawn,
    e.JokerChanged: _joker_changed,
    e.PlantReturned: _plant_returned,
    e.ExtraTurnTaken: _extra_turn,
    e.MushroomGained: _mushroom_gained,
    e.MushroomPlaced: _mushroom_placed,
    e.MushroomLost: _mushroom_lost,
    e.MushroomDeclined: _mushroom_declined,
    e.TurnEnded: _turn_ended,
    e.CloudsScored: _points,
    e.PlantsPenalised: _points,
    e.TokensRevealed: _points,
    e.GameEnded: _ended,
    **seating.EVOLVERS,
}


def evolve(state: GameState | None, event: e.Event) -> GameState:
    """Apply one event, without checks (the event was decided already)."""
    new = _EVOLVERS[type(event)](state, event)
    if new.clock is not None or type(event) is e.GameCreated:
        new = seating.after_event(new, event)
    return replace(new, version=event.version, last_hash=event.hash)


# --- decide ------------------------------------------------------------------------------------


Batch = execution.Batch[GameState, e.Event]
"""Events of one command (the platform's batch): each applied as it is emitted, the first
recording the cause, every one sealed into the hash chain."""


def _create(cmd: c.CreateGame) -> e.GameCreated:
    comps = components()
    if cmd.players not in comps.seat_colours:
        raise InvalidCommand("Renature is played by 2, 3 or 4 players.")
    if not cmd.game_id or len(cmd.game_id) > 64:
        raise InvalidCommand("A game id must have 1 to 64 characters.")
    if not cmd.seed:
        raise InvalidCommand("A game needs a seed for its deal.")
    if (problem := seating.time_control_problem(cmd.clock)) is not None:
        raise InvalidCommand(problem)
    board = Board_of_checked(cmd.board)
    return e.GameCreated(
        game_id=cmd.game_id,
        version=1,
        board=board.id,
        players=cmd.players,
        seat_colours=list(comps.seat_colours[cmd.players]),
        seed_commitment=commitment(cmd.seed, cmd.salt),
        deal=deal(cmd.seed, cmd.players, board),
        dominoes=[(comps.animals[a], comps.animals[b]) for a, b in comps.dominoes],
        clock=cmd.clock,
        chosen_seed=cmd.chosen_seed,
    )


def Board_of_checked(board_id: str) -> Board:  # noqa: N802
    from renature.board import UnknownBoard

    try:
        return Board_of(board_id)
    except UnknownBoard as err:
        raise InvalidCommand(str(err)) from None


def _join(b: Batch, cmd: c.JoinGame) -> None:
    s = b.state
    if s.phase != "lobby":
        raise WrongPhase("The game has started; no more players can join.")
    _check_seat_number(s, cmd.seat)
    if s.seats[cmd.seat].name is not None:
        raise InvalidCommand(f"Seat {cmd.seat} is taken already.")
    name = cmd.name.strip()
    if not 1 <= len(name) <= 40:
        raise InvalidCommand("A player name must have 1 to 40 characters.")
    b.emit(e.PlayerJoined(game_id=b.game_id, version=b.next_version, seat=cmd.seat, name=name))


def _start(b: Batch, _: c.StartGame) -> None:
    s = b.state
    if s.phase != "lobby":
        raise WrongPhase("The game has started already.")
    empty = [seat for seat, st in enumerate(s.seats) if st.name is None]
    if empty:
        raise WrongPhase(f"Seats {empty} have no player yet.")
    scores = list(components().starting_scores[: s.players])
    b.emit(
        e.GameStarted(
            game_id=b.game_id, version=b.next_version, first_seat=0, starting_scores=scores
        )
    )


def _check_seat_number(s: GameState, seat: int) -> None:
    if not 0 <= seat < s.players:
        raise InvalidCommand(f"There is no seat {seat} in a {s.players}-player game.")


def _check_turn(s: GameState, seat: int) -> SeatState:
    if s.phase == "lobby":
        raise WrongPhase("The game has not started yet.")
    if s.phase in ("final_scoring", "finished"):
        raise GameOver("The game is over: nobody has any dominoes left.")
    if s.phase == "cancelled":
        raise GameOver("The game was cancelled.")
    _check_seat_number(s, seat)
    if seat != s.current:
        current = COLOURS[s.seats[s.current].colour]
        raise NotYourTurn(f"It is {current}'s turn, not {COLOURS[s.seats[seat].colour]}'s.")
    if s.phase == "place_mushroom":
        raise WrongPhase("Place the mushroom you gained first.")
    return s.seats[seat]


def _cell(s: GameState, cell: c.Cell, broken: type[RuleError]) -> int:
    """The board index of ``cell``; a cell off the board breaks the rule ``broken`` (every
    piece lies inside the grid), like any other space the piece may not go on."""
    if not s.board.contains(cell.x, cell.y):
        raise broken(f"({cell.x}, {cell.y}) is not on the board.")
    return s.board.index(cell.x, cell.y)


def _animal_name(animal: int) -> str:
    return components().animals[animal]


def _check_step_a(s: GameState, seat_no: int, domino: int) -> SeatState:
    """Step A: once per turn, with a domino from one's own hand."""
    seat = _check_turn(s, seat_no)
    if s.phase != "place_domino":
        raise WrongPhase("You have already placed or discarded a domino this turn.")
    if domino not in seat.hand:
        raise NotInHand(f"Domino {domino} is not in your hand.")
    return seat


def _place_domino(b: Batch, cmd: c.PlaceDomino) -> None:
    s = b.state
    seat = _check_step_a(s, cmd.seat, cmd.domino)
    first = _cell(s, cmd.first, IllegalPlacement)
    second = _cell(s, cmd.second, IllegalPlacement)
    board = s.board
    if second not in board.neighbours[first]:
        raise IllegalPlacement("The two halves of a domino must lie on two spaces side by side.")
    path = board.path_name
    for cell in (first, second):
        where = board.xy(cell)
        if board.kinds[cell] != PATH or s.area_of[cell] >= 0:
            raise IllegalPlacement(
                f"Both halves must lie on {path} spaces; {where} is not a {path} space."
            )
        if s.cover[cell] >= 0:
            raise IllegalPlacement(f"The {path} space {where} is already covered.")
    animals = components().dominoes[cmd.domino]
    anchored = False
    for cell, animal in zip((first, second), animals, strict=True):
        mask, cell_anchored = allowed_animals(s, cell)
        anchored = anchored or cell_anchored
        if not mask & (1 << animal):
            clash = next(
                n
                for n in board.neighbours[cell]
                if s.cover[n] >= 0 and s.cover[n] not in (animal, s.joker) and animal != s.joker
            )
            raise IllegalPlacement(
                f"All animals beside each other must match: the {_animal_name(animal)} on "
                f"{board.xy(cell)} would lie beside the {_animal_name(s.cover[clash])} on "
                f"{board.xy(clash)} (the joker is the {_animal_name(s.joker)})."
            )
    if not anchored:
        raise IllegalPlacement(
            "At least one half must lie on a starting space or beside a matching animal."
        )
    taken = returned = 0
    if any(s.clouds[cell] for cell in (first, second)):
        found = s.clouds[first] + s.clouds[second]
        taken = min(found, components().cloud_spaces - seat.clouds)
        returned = found - taken
    stumps = sum(1 for cell in (first, second) if cell in board.stumps)
    b.emit(
        e.DominoPlaced(
            game_id=b.game_id,
            version=b.next_version,
            seat=cmd.seat,
            domino=cmd.domino,
            first=e.Half(*board.xy(first), _animal_name(animals[0])),
            second=e.Half(*board.xy(second), _animal_name(animals[1])),
            joker=_animal_name(s.joker),
            clouds_taken=taken,
            clouds_returned=returned,
            stumps_covered=stumps,
        )
    )
    if stumps:
        _gain_mushroom(b, cmd.seat)


def _gain_mushroom(b: Batch, seat: int) -> None:
    """Valley: covering a stump gives a mushroom while any are left; the player places it at
    once or declines it ("you may immediately take a mushroom"; declined, it stays in the
    supply). It is lost when no meadow space beside an area space is free (rulings)."""
    s = b.state
    if s.mushrooms_left == 0:
        return
    b.emit(
        e.MushroomGained(
            game_id=b.game_id,
            version=b.next_version,
            seat=seat,
            mushrooms_left=s.mushrooms_left - 1,
        )
    )
    if not mushroom_spaces(b.state):
        b.emit(
            e.MushroomLost(
                game_id=b.game_id,
                version=b.next_version,
                seat=seat,
                reason="no free meadow space beside an area space",
            )
        )


def mushroom_spaces(s: GameState) -> list[int]:
    board = s.board
    return [
        cell
        for cell in geometry(board.id).path
        if is_free_path(s, cell) and any(s.area_of[n] >= 0 for n in board.neighbours[cell])
    ]


def _check_mushroom_holder(s: GameState, seat: int) -> None:
    if s.phase != "place_mushroom":
        raise WrongPhase("You have no mushroom to place or decline.")
    _check_seat_number(s, seat)
    if seat != s.current:
        raise NotYourTurn("Only the player who covered the stump decides about the mushroom.")


def _place_mushroom(b: Batch, cmd: c.PlaceMushroom) -> None:
    s = b.state
    _check_mushroom_holder(s, cmd.seat)
    cell = _cell(s, cmd.cell, IllegalMushroom)
    if cell not in mushroom_spaces(s):
        raise IllegalMushroom(
            "A mushroom goes on a free meadow space orthogonally beside at least one area space."
        )
    board = s.board
    joined = sorted({s.area_of[n] for n in board.neighbours[cell] if s.area_of[n] >= 0})
    target = joined[0]
    size = 1 + sum(s.area_sizes[a] for a in joined)
    b.emit(
        e.MushroomPlaced(
            game_id=b.game_id,
            version=b.next_version,
            seat=cmd.seat,
            x=cmd.cell.x,
            y=cmd.cell.y,
            area=board.area_ids[target],
            joined=[board.area_ids[a] for a in joined],
            size=size,
        )
    )


def _skip_mushroom(b: Batch, cmd: c.SkipMushroom) -> None:
    s = b.state
    _check_mushroom_holder(s, cmd.seat)
    b.emit(
        e.MushroomDeclined(
            game_id=b.game_id,
            version=b.next_version,
            seat=cmd.seat,
            mushrooms_left=s.mushrooms_left + 1,
        )
    )


def _discard(b: Batch, cmd: c.DiscardDomino) -> None:
    _check_step_a(b.state, cmd.seat, cmd.domino)
    b.emit(
        e.DominoDiscarded(
            game_id=b.game_id, version=b.next_version, seat=cmd.seat, domino=cmd.domino
        )
    )
    _finish_turn_steps(b, cmd.seat)


def plant_spots(s: GameState) -> list[int]:
    """Free area spaces beside the domino placed this turn (step B)."""
    neighbours = s.board.neighbours
    spots = {
        n for cell in s.placed for n in neighbours[cell] if s.area_of[n] >= 0 and s.plants[n] < 0
    }
    return sorted(spots)


def _place_plant(b: Batch, cmd: c.PlacePlant) -> None:
    s = b.state
    seat = _check_turn(s, cmd.seat)
    _check_plant_phase(s)
    cell = _cell(s, cmd.cell, IllegalPlant)
    where = (cmd.cell.x, cmd.cell.y)
    if s.area_of[cell] < 0:
        raise IllegalPlant(f"Plants go on area spaces; {where} is not an area space.")
    if s.plants[cell] >= 0:
        raise IllegalPlant(f"There is already a plant on {where}.")
    if cell not in plant_spots(s):
        raise IllegalPlant("A plant must go on an area space beside the domino you just placed.")
    if cmd.colour not in COLOURS or cmd.plant not in PLANT_TYPES:
        raise InvalidCommand(f"There is no {cmd.colour} {cmd.plant}.")
    colour = COLOURS.index(cmd.colour)
    if colour not in (seat.colour, NEUTRAL):
        raise IllegalPlant("You may only plant your own colour or neutral plants.")
    code = plant_code(colour, PLANT_TYPES.index(cmd.plant))
    slot = _slot(seat, code)
    assert slot is not None
    if seat.plants[slot] == 0:
        raise IllegalPlant(f"You have no {cmd.colour} {cmd.plant} left on your player board.")
    points, counted = plant_points(s, cell, code)
    found = s.clouds[cell]  # cloud area spaces (base game, Valley variant)
    taken = min(found, components().cloud_spaces - seat.clouds)
    b.emit(
        e.PlantPlaced(
            game_id=b.game_id,
            version=b.next_version,
            seat=cmd.seat,
            x=cmd.cell.x,
            y=cmd.cell.y,
            area=s.board.area_ids[s.area_of[cell]],
            colour=cmd.colour,
            plant=cmd.plant,
            value=plant_value(code),
            points=points,
            reason=f"{cmd.plant}: 1 for itself + {counted} for plants of equal or lower value "
            f"in area {s.board.area_ids[s.area_of[cell]]}",
            clouds_taken=taken,
            clouds_returned=found - taken,
        )
    )
    _finish_turn_steps(b, cmd.seat)


def _check_plant_phase(s: GameState) -> None:
    if s.phase == "place_domino":
        raise WrongPhase("Place a domino first: a plant goes beside the domino placed this turn.")
    if s.phase != "place_plant":
        raise WrongPhase("You may place one plant only, right after placing your domino.")


def _skip_plant(b: Batch, cmd: c.SkipPlant) -> None:
    _check_turn(b.state, cmd.seat)
    _check_plant_phase(b.state)
    b.emit(e.PlantSkipped(game_id=b.game_id, version=b.next_version, seat=cmd.seat))
    _finish_turn_steps(b, cmd.seat)


def _finish_turn_steps(b: Batch, seat: int) -> None:
    """Step C 2 (score the areas this turn's domino closed), step D (refill), and the end of
    the turn when no cloud action is possible (ruling 10)."""
    s = b.state
    if s.placed and s.board.scoring == "on_closing":
        for area in areas_closed_by(s, s.placed):
            _score_area(b, area, closer=seat)
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
        _end_turn(b, seat)


def _score_area(b: Batch, area: int, closer: int | None, final: bool = False) -> None:
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


def _end_turn(b: Batch, seat: int) -> None:
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


def _end_turn_command(b: Batch, cmd: c.EndTurn) -> None:
    s = b.state
    _check_turn(s, cmd.seat)
    if s.phase == "place_domino":
        raise WrongPhase("Place or discard a domino before ending your turn.")
    if s.phase == "place_plant":
        raise WrongPhase("Place a plant or skip it before ending your turn.")
    _end_turn(b, cmd.seat)


def _cloud_action(b: Batch, cmd: c.CloudAction) -> None:
    seat = _check_turn(b.state, cmd.seat)
    _check_cloud_action_fields(cmd)
    if cmd.kind == "change_joker":
        _cloud_change_joker(b, cmd, seat)
    elif cmd.kind == "extra_turn":
        _cloud_extra_turn(b, cmd, seat)
    elif cmd.kind == "return_plant":
        _cloud_return_plant(b, cmd, seat)
    else:  # pragma: no cover - msgspec rejects other kinds when decoding
        raise InvalidCommand(f"Unknown cloud action {cmd.kind!r}.")


def _cloud_change_joker(b: Batch, cmd: c.CloudAction, seat: SeatState) -> None:
    s, comps = b.state, components()
    if cmd.animal not in comps.animals:
        raise InvalidCommand(f"Name the new joker animal, one of: {', '.join(comps.animals)}.")
    if comps.animal(cmd.animal) == s.joker:
        raise IllegalCloudAction(f"The {cmd.animal} is the joker already.")
    _pay_check(seat, comps.joker_cost, "change the joker")
    b.emit(
        e.JokerChanged(
            game_id=b.game_id,
            version=b.next_version,
            seat=cmd.seat,
            from_animal=_animal_name(s.joker),
            to_animal=cmd.animal,
            cost=comps.joker_cost,
        )
    )


def _cloud_extra_turn(b: Batch, cmd: c.CloudAction, seat: SeatState) -> None:
    s, comps = b.state, components()
    if s.phase != "end_of_turn":
        raise WrongPhase("Another turn can only be taken at the end of your turn.")
    _pay_check(seat, comps.extra_turn_cost, "take another turn")
    if not seat.hand:
        raise IllegalCloudAction("You have no domino left to take another turn with.")
    b.emit(
        e.ExtraTurnTaken(
            game_id=b.game_id, version=b.next_version, seat=cmd.seat, cost=comps.extra_turn_cost
        )
    )


def _cloud_return_plant(b: Batch, cmd: c.CloudAction, seat: SeatState) -> None:
    s = b.state
    if cmd.cell is None:
        raise InvalidCommand("Name the cell of the plant to return.")
    cell = _cell(s, cmd.cell, IllegalCloudAction)
    code = s.plants[cell]
    if code < 0:
        raise IllegalCloudAction(f"There is no plant on ({cmd.cell.x}, {cmd.cell.y}).")
    slot = _slot(seat, code)
    if slot is None:
        raise IllegalCloudAction("You may only return plants of your colour or neutral plants.")
    if seat.plants[slot] >= board_capacity(s)[slot]:
        raise IllegalCloudAction(f"Your player board has no free space for a {_plant_label(code)}.")
    _pay_check(seat, plant_value(code), f"return a {_plant_label(code)}")
    b.emit(
        e.PlantReturned(
            game_id=b.game_id,
            version=b.next_version,
            seat=cmd.seat,
            x=cmd.cell.x,
            y=cmd.cell.y,
            area=s.board.area_ids[s.area_of[cell]],
            colour=COLOURS[plant_colour(code)],
            plant=PLANT_TYPES[plant_type(code)],
            cost=plant_value(code),
        )
    )


def _check_cloud_action_fields(cmd: c.CloudAction) -> None:
    """A cloud action names what its kind needs and nothing else, so that every command
    ``decide`` accepts is one ``legal_actions`` lists."""
    if cmd.kind == "change_joker" and cmd.cell is not None:
        raise InvalidCommand("Changing the joker names an animal, not a cell.")
    if cmd.kind == "extra_turn" and (cmd.animal is not None or cmd.cell is not None):
        raise InvalidCommand("Another turn names neither an animal nor a cell.")
    if cmd.kind == "return_plant" and cmd.animal is not None:
        raise InvalidCommand("Returning a plant names its cell, not an animal.")


def _pay_check(seat: SeatState, cost: int, what: str) -> None:
    if seat.clouds < cost:
        raise NotEnoughClouds(f"To {what} you need {cost} clouds; you have {seat.clouds}.")


def _finish(b: Batch, cmd: c.FinishGame) -> None:
    """Final scoring (End of the game, ruling 11)."""
    s = b.state
    if s.phase != "final_scoring":
        raise WrongPhase("The game can only be finished when nobody has any dominoes left.")
    if commitment(cmd.seed, cmd.salt) != s.commitment:
        raise SeedMismatch("The revealed seed does not match the commitment made at creation.")
    if s.board.scoring == "on_closing":
        for area, token in enumerate(s.area_tokens):
            if token is not None:
                _score_area(b, area, closer=None, final=True)
    else:
        for area in live_areas(s):
            _score_area(b, area, closer=None, final=True)
    for seat_no in range(s.players):
        _score_seat_at_the_end(b, seat_no)
    scores, tiebreak, ranking, winners = _result(b.state)
    b.emit(
        e.GameEnded(
            game_id=b.game_id,
            version=b.next_version,
            seed=cmd.seed,
            scores=scores,
            tiebreak=tiebreak,
            ranking=ranking,
            winners=winners,
            salt=cmd.salt,
        )
    )


def _score_seat_at_the_end(b: Batch, seat_no: int) -> None:
    """A seat's clouds, the plants left on its board and its tokens' backs (ruling 11)."""
    seat = b.state.seats[seat_no]
    b.emit(
        e.CloudsScored(
            game_id=b.game_id,
            version=b.next_version,
            seat=seat_no,
            clouds=seat.clouds,
            points=seat.clouds,
        )
    )
    left = [
        plant_code(seat.colour if slot < 4 else NEUTRAL, slot % 4)
        for slot, count in enumerate(seat.plants)
        for _ in range(count)
    ]
    b.emit(
        e.PlantsPenalised(
            game_id=b.game_id,
            version=b.next_version,
            seat=seat_no,
            plants=[_plant_label(p) for p in left],
            points=-sum(plant_value(p) for p in left),
        )
    )
    if b.state.board.tokens:
        backs = [b.state.board.token(t).back for t in seat.tokens]
        b.emit(
            e.TokensRevealed(
                game_id=b.game_id,
                version=b.next_version,
                seat=seat_no,
                tokens=list(seat.tokens),
                backs=backs,
                points=sum(backs),
            )
        )


def _result(final: GameState) -> tuple[list[int], list[list[int]], list[int], list[int]]:
    """Scores, tie-break keys, ranking and winners of a finished game."""
    scores = [seat.score for seat in final.seats]
    tiebreak = tiebreak_keys(final)
    out = seating.out_of_game(final)  # resigned and removed seats rank last, never win
    ranking = sorted(
        range(final.players), key=lambda p: (p in out, -scores[p], [-k for k in tiebreak[p]], p)
    )
    best = ranking[0]
    winners = [
        p
        for p in ranking
        if p not in out and (scores[p], tiebreak[p]) == (scores[best], tiebreak[best])
    ]
    return scores, tiebreak, ranking, winners


def tiebreak_keys(s: GameState) -> list[list[int]]:
    """Per seat, what breaks a tie in points (higher first).

    Base game: the number of area tokens. Valley, "the player with the majority in the
    largest area": per area size, largest first, the number of areas of that size where the
    seat's colour holds the majority, i.e. ranks first once tied totals have cancelled (ruling
    7). So the seat holding the majority in the largest area wins the tie; where none of the
    tied seats holds it, the next largest decides, and so on. Areas of one size count alike,
    whatever their place on the board."""
    if s.board.tokens:
        return [[len(seat.tokens)] for seat in s.seats]
    seat_of = {seat.colour: number for number, seat in enumerate(s.seats)}
    held: dict[int, list[int]] = {}
    for area in live_areas(s):
        counts = held.setdefault(s.area_sizes[area], [0] * s.players)
        _, ranks = majority_ranks(colour_totals(s, area))
        if ranks and ranks[0][0] in seat_of:
            counts[seat_of[ranks[0][0]]] += 1
    sizes = sorted(held, reverse=True)
    return [[held[size][seat] for size in sizes] for seat in range(s.players)]


_DECIDERS: dict[type[c.Command], Callable[[Batch, Any], None]] = {
    c.JoinGame: _join,
    c.StartGame: _start,
    c.PlaceDomino: _place_domino,
    c.DiscardDomino: _discard,
    c.PlacePlant: _place_plant,
    c.SkipPlant: _skip_plant,
    c.CloudAction: _cloud_action,
    c.PlaceMushroom: _place_mushroom,
    c.SkipMushroom: _skip_mushroom,
    c.EndTurn: _end_turn_command,
    c.FinishGame: _finish,
    **seating.DECIDERS,
}

RULES: execution.Rulebook[GameState, c.Command, e.Event] = execution.Rulebook(
    creation=c.CreateGame,
    create=_create,
    deciders=_DECIDERS,
    evolve=evolve,
    cause=lambda command, command_id, time: e.Cause(e.public_command(command), command_id, time),
    after=lambda batch: seating.play_on(batch, _DECIDERS),  # timed-out seats played on by a bot
)
execute = RULES.execute
"""Decide a command; its events and the state after them (``command_id`` and ``time`` are
provenance given by the caller, recorded in the first event's ``cause``)."""
decide = RULES.decide
"""Validate a command against a state; its events, or a ``RuleError``."""


# --- legal actions -----------------------------------------------------------------------------


def can_spend_clouds(s: GameState, seat_no: int) -> bool:
    """Whether any cloud action is open to the seat now (same answer as ``cloud_actions``)."""
    if seat_no != s.current or s.phase not in ("place_domino", "place_plant", "end_of_turn"):
        return False
    seat = s.seats[seat_no]
    if seat.clouds >= components().joker_cost:
        return True  # the joker can always move to another animal
    if seat.clouds < 1:
        return False
    capacity = board_capacity(s)
    for code in s.plants:
        if code >= 0 and plant_value(code) <= seat.clouds:
            slot = _slot(seat, code)
            if slot is not None and seat.plants[slot] < capacity[slot]:
                return True
    return False


def cloud_actions(s: GameState, seat_no: int) -> list[c.CloudAction]:
    """Every cloud action the seat can pay for now (only on its own turn)."""
    if seat_no != s.current or s.phase not in ("place_domino", "place_plant", "end_of_turn"):
        return []
    seat = s.seats[seat_no]
    comps = components()
    out: list[c.CloudAction] = []
    if seat.clouds >= comps.joker_cost:
        out += [
            c.CloudAction(seat_no, "change_joker", animal=name)
            for a, name in enumerate(comps.animals)
            if a != s.joker
        ]
    if s.phase == "end_of_turn" and seat.clouds >= comps.extra_turn_cost and seat.hand:
        out.append(c.CloudAction(seat_no, "extra_turn"))
    if seat.clouds >= 1:
        capacity = board_capacity(s)
        board = s.board
        for cell, code in enumerate(s.plants):
            if code < 0 or plant_value(code) > seat.clouds:
                continue
            slot = _slot(seat, code)
            if slot is not None and seat.plants[slot] < capacity[slot]:
                out.append(c.CloudAction(seat_no, "return_plant", cell=c.Cell(*board.xy(cell))))
    return out


def plant_options(s: GameState, seat_no: int) -> Iterator[c.PlacePlant]:
    seat = s.seats[seat_no]
    board = s.board
    kinds = [
        (COLOURS[seat.colour if slot < 4 else NEUTRAL], PLANT_TYPES[slot % 4])
        for slot, count in enumerate(seat.plants)
        if count > 0
    ]
    for cell in plant_spots(s):
        where = c.Cell(*board.xy(cell))
        for colour, plant in kinds:
            yield c.PlacePlant(seat_no, where, colour, plant)  # type: ignore[arg-type]


def legal_actions(s: GameState, seat_no: int) -> list[c.Command]:
    """Every command ``seat_no`` may give now; ``decide`` accepts exactly these."""
    if s.phase in ("lobby", "final_scoring", "finished") or seat_no != s.current:
        return []
    if s.phase == "place_mushroom":
        spaces = [c.PlaceMushroom(seat_no, c.Cell(*s.board.xy(m))) for m in mushroom_spaces(s)]
        return [*spaces, c.SkipMushroom(seat_no)]
    seat = s.seats[seat_no]
    out: list[c.Command] = []
    board = s.board
    if s.phase == "place_domino":
        out += [
            c.PlaceDomino(seat_no, d, c.Cell(*board.xy(p)), c.Cell(*board.xy(q)))
            for d, p, q in legal_placements(s, seat.hand)
        ]
        out += [c.DiscardDomino(seat_no, d) for d in sorted(set(seat.hand))]
    elif s.phase == "place_plant":
        out += plant_options(s, seat_no)
        out.append(c.SkipPlant(seat_no))
    elif s.phase == "end_of_turn":
        out.append(c.EndTurn(seat_no))
    out += cloud_actions(s, seat_no)
    return out
