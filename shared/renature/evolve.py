"""``evolve``: an event applied to a state without checks (the event was decided already), one
evolver per event kind (``EVOLVERS``, with the seats' own from ``seating``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec.structs import replace

from renature import events as e
from renature import seating
from renature.board import Board, load_board
from renature.components import COLOURS, PLANT_TYPES, components, plant_code
from renature.position import board_slot, set_at, with_seat
from renature.state import GameState, SeatState


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
    return load_board(board_id)


def _joined(s: GameState, ev: e.PlayerJoined) -> GameState:
    assert ev.seat is not None
    return replace(s, seats=with_seat(s, ev.seat, name=ev.name))


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
        clouds = set_at(set_at(clouds, first, 0), second, 0)
    return replace(
        s,
        cover=tuple(cover),
        seats=with_seat(s, ev.seat, hand=tuple(hand), clouds=seat.clouds + ev.clouds_taken),
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
        seats=with_seat(s, ev.seat, hand=tuple(hand)),
        box_dominoes=(*s.box_dominoes, ev.domino),
        phase="end_of_turn",
    )


def _plant_placed(s: GameState, ev: e.PlantPlaced) -> GameState:
    assert ev.seat is not None
    cell = s.board.index(ev.x, ev.y)
    code = plant_code(COLOURS.index(ev.colour), PLANT_TYPES.index(ev.plant))
    seat = s.seats[ev.seat]
    slot = board_slot(seat, code)
    assert slot is not None
    return replace(
        s,
        plants=set_at(s.plants, cell, code),
        clouds=set_at(s.clouds, cell, 0),
        box_clouds=s.box_clouds + ev.clouds_returned,
        seats=with_seat(
            s,
            ev.seat,
            plants=set_at(seat.plants, slot, seat.plants[slot] - 1),
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
    return replace(s, seats=tuple(seats), area_tokens=set_at(s.area_tokens, area, None))


def _drawn(s: GameState, ev: e.DominoDrawn) -> GameState:
    assert ev.seat is not None
    seat = s.seats[ev.seat]
    return replace(
        s,
        seats=with_seat(s, ev.seat, hand=(*seat.hand, seat.reserve[0]), reserve=seat.reserve[1:]),
    )


def _pay(s: GameState, seat: int, cost: int) -> tuple[SeatState, ...]:
    return with_seat(s, seat, clouds=s.seats[seat].clouds - cost)


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
    slot = board_slot(seat, s.plants[cell])
    assert slot is not None
    seats = with_seat(
        s,
        ev.seat,
        plants=set_at(seat.plants, slot, seat.plants[slot] + 1),
        clouds=seat.clouds - ev.cost,
    )
    return replace(
        s, plants=set_at(s.plants, cell, -1), seats=seats, box_clouds=s.box_clouds + ev.cost
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
    return replace(s, seats=with_seat(s, ev.seat, score=s.seats[ev.seat].score + ev.points))


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
