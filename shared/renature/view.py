"""What a seat (or a spectator) may see: views of the state and redacted events.

Secrets: a hand is seen only by its owner; nobody sees a reserve's order (not even the owner:
it lies face down); the back (and so the identity) of a collected area token is seen only by the
seat that holds it, until the final scoring reveals it; spare tokens and the box stay unseen.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar, cast

import msgspec
from msgspec.structs import replace

from renature import events as e
from renature.areas import areas_closed_by, is_closed
from renature.board import PATH
from renature.components import COLOURS, NEUTRAL, PLANT_TYPES, components, plant_colour, plant_type
from renature.position import board_capacity
from renature.scoring import area_awards
from renature.seating import ClockView, clock_view
from renature.state import GameState


class DominoView(msgspec.Struct, frozen=True):
    id: int
    animals: tuple[str, str]


class TokenView(msgspec.Struct, frozen=True):
    """An area token. ``id`` and ``back`` only for the seat that holds it (or after the end)."""

    main: int
    minor: int
    id: str | None = None
    back: int | None = None


class PlantSpace(msgspec.Struct, frozen=True):
    colour: str
    plant: str
    present: int
    spaces: int


class SeatView(msgspec.Struct, frozen=True):
    seat: int
    colour: str
    name: str | None
    score: int
    clouds: int
    hand_count: int
    reserve_count: int
    player_board: list[PlantSpace]
    tokens: list[TokenView]
    hand: list[DominoView] | None = None
    status: str = "playing"
    """playing, bot (timed out: a bot plays on), resigned, removed (timed out)."""


class HalfView(msgspec.Struct, frozen=True):
    x: int
    y: int
    animal: str


class PlacedDomino(msgspec.Struct, frozen=True):
    domino: int
    first: HalfView
    second: HalfView


class PlantView(msgspec.Struct, frozen=True):
    x: int
    y: int
    area: str
    colour: str
    plant: str


class CloudView(msgspec.Struct, frozen=True):
    x: int
    y: int
    count: int


class MushroomView(msgspec.Struct, frozen=True):
    """Valley: a mushroom on a meadow space, now a space of ``area`` (as merged)."""

    x: int
    y: int
    area: str


class AreaView(msgspec.Struct, frozen=True):
    """An area now: plant totals per colour and what each would get if it were scored now."""

    id: str
    size: int
    token: TokenView | None
    scored: bool
    closed: bool
    totals: dict[str, int]
    cancelled: list[str]
    would_score: list[e.Award]


class GameView(msgspec.Struct, frozen=True):
    game_id: str
    version: int
    board: str
    players: int
    viewer: int | None
    phase: str
    current_seat: int | None
    turn: int
    joker: str
    seats: list[SeatView]
    dominoes: list[PlacedDomino]
    plants: list[PlantView]
    clouds: list[CloudView]
    areas: list[AreaView]
    placed: list[HalfView]
    mushrooms: list[MushroomView]
    mushrooms_left: int
    winners: list[int]
    ranking: list[int]
    seed: str | None = None
    clock: ClockView | None = None
    """The turn clock of a game with a time control (None without one)."""
    chosen_seed: bool = False
    """Dealt from a seed a caller chose (tests, bots, tournaments): whoever chose it knows
    every hand. Every seat's view says so from the creation on."""


def _seat_view(state: GameState, seat: int, viewer: int | None) -> SeatView:
    """A seat's part of the view (memoised per game, seat and viewer: most events change one
    seat or none)."""
    s = state.seats[seat]
    inputs = (s, viewer == seat, state.is_over, state.board_id, state.players)
    return _memoised(
        state, f"seat {seat} to {viewer}", inputs, lambda: _seat_view_now(state, seat, viewer)
    )


def _seat_view_now(state: GameState, seat: int, viewer: int | None) -> SeatView:
    s = state.seats[seat]
    comps = components()
    capacity = board_capacity(state)
    own = viewer == seat or state.is_over
    board = [
        PlantSpace(
            colour=COLOURS[s.colour if slot < 4 else NEUTRAL],
            plant=PLANT_TYPES[slot % 4],
            present=s.plants[slot],
            spaces=capacity[slot],
        )
        for slot in range(8)
    ]
    tokens = []
    for token_id in s.tokens:
        token = state.board.token(token_id)
        tokens.append(
            TokenView(token.main, token.minor, token.id, token.back)
            if own
            else TokenView(token.main, token.minor)
        )
    hand = None
    if viewer == seat:
        hand = [
            DominoView(
                d, (comps.animals[comps.dominoes[d][0]], comps.animals[comps.dominoes[d][1]])
            )
            for d in s.hand
        ]
    return SeatView(
        seat=seat,
        colour=COLOURS[s.colour],
        name=s.name,
        score=s.score,
        clouds=s.clouds,
        hand_count=len(s.hand),
        reserve_count=len(s.reserve),
        player_board=board,
        tokens=tokens,
        hand=hand,
        status=s.status,
    )


_T = TypeVar("_T")
E = TypeVar("E", bound=e.Event)
_MEMO_SIZE = 32768
_memo: OrderedDict[tuple[str, str], tuple[tuple[tuple[Any, ...], Any], Any]] = OrderedDict()
"""The last rendering of each view part per game: (game id, part) -> ((inputs, changing),
rendering) (`_memoised`).

A spectator view is rendered after every event, while most events leave the areas, plants,
clouds, mushrooms and most seats as they were (a turn ends, a domino is drawn): a part is
rendered again only when one of its inputs changed, and of the areas only those where a plant
came or went. The inputs are compared by value, so the result is exactly what rendering afresh
gives; the memo holds the most recent ``_MEMO_SIZE`` parts (a game of four seats followed by
each of them and a spectator holds about two dozen)."""


def _memoised(
    state: GameState,
    part: str,
    inputs: tuple[Any, ...],
    render: Callable[[], _T],
    changing: Any = None,
    again: Callable[[Any, Any], _T | None] | None = None,
) -> _T:
    """The game's ``part``, as ``render()`` renders it, rendered again only when ``inputs``
    or ``changing`` changed since the game's last rendering of it. A part that can be brought
    up to date from that rendering while ``inputs`` stay says how: ``again(was, rendering)``
    is the rendering for ``changing`` now from the one made when it was ``was`` (None when it
    cannot be: the part is rendered afresh)."""
    key = (state.game_id, part)
    held = _memo.get(key)
    if held is not None and held[0][0] == inputs:
        (_, was), rendering = held
        if was == changing:
            _memo.move_to_end(key)
            return cast("_T", rendering)
        updated = None if again is None else again(was, rendering)
        if updated is not None:
            _memo[key] = ((inputs, changing), updated)
            _memo.move_to_end(key)
            return updated
    fresh = render()
    _memo[key] = ((inputs, changing), fresh)
    if len(_memo) > _MEMO_SIZE:
        _memo.popitem(last=False)
    return fresh


def area_views(state: GameState) -> list[AreaView]:
    """Every live area's view (memoised per game: see `_memoised`): what each scores depends on
    its own plants and token, whether it is closed on the brook, so each is rendered again only
    when its own inputs changed."""
    layout = (
        state.board_id,
        state.area_of,
        state.area_sizes,
        tuple(seat.colour for seat in state.seats),
    )
    views = _memoised(
        state,
        "areas",
        layout,
        lambda: tuple(_area_views(state)),
        (state.area_tokens, state.plants),
        lambda was, views: _areas_changed(state, was[0], was[1], views),  # a plant or a token
    )
    if state.board.scoring != "on_closing":
        return [view for _, view in views]
    closed = _closed_areas(state, views)
    return [replace(view, closed=True) if a in closed else view for a, view in views]


def _areas_changed(
    state: GameState,
    tokens: tuple[str | None, ...],
    plants: tuple[int, ...],
    views: tuple[tuple[int, AreaView], ...],
) -> tuple[tuple[int, AreaView], ...]:
    """``views``, rendered when the areas were as now but the tokens were ``tokens`` and the
    plants ``plants``, with every area whose token or a plant of whose spaces differs rendered
    again: an area's view depends on its own token and spaces alone (a plant placed changes
    one area of a dozen or more, a token taken one)."""
    area_of = state.area_of
    replanted = zip(plants, state.plants, strict=True)
    changed = {area_of[cell] for cell, (was, now) in enumerate(replanted) if was != now}
    retokened = zip(tokens, state.area_tokens, strict=True)
    changed.update(area for area, (was, now) in enumerate(retokened) if was != now)
    return tuple(
        (area, _area_view(state, area) if area in changed else view) for area, view in views
    )


def _closed_areas(state: GameState, views: tuple[tuple[int, AreaView], ...]) -> frozenset[int]:
    """The areas not yet scored that are closed on the brook (memoised per game). While the
    areas and tokens stay as they were and dominoes are only added, a closed area stays closed
    (a space covered stays covered, one isolated stays isolated), and only areas beside the
    spaces covered since, or beside their neighbours, can have closed: only those are checked
    again (`areas.areas_closed_by`, as the rules check them when a domino is placed)."""

    def closing(was: tuple[int, ...], closed: frozenset[int]) -> frozenset[int] | None:
        covered = tuple(
            cell for cell, (old, new) in enumerate(zip(was, state.cover, strict=True)) if old != new
        )
        if any(was[cell] >= 0 for cell in covered):  # uncovered: a history taken back
            return None
        return closed.union(areas_closed_by(state, covered))  # not scored: still holds its token

    return _memoised(
        state,
        "closed",
        (state.board_id, state.area_of, state.area_tokens),
        lambda: frozenset(a for a, view in views if not view.scored and is_closed(state, a)),
        state.cover,
        closing,
    )


def _area_views(state: GameState) -> list[tuple[int, AreaView]]:
    """(area, view) of every live area; an area not yet scored is marked open here."""
    return [(area, _area_view(state, area)) for area, size in enumerate(state.area_sizes) if size]


def _area_view(state: GameState, area: int) -> AreaView:
    """One live area's view (Valley: a merged area has size 0 and no view)."""
    board = state.board
    on_closing = board.scoring == "on_closing"
    size = state.area_sizes[area]
    token_id = state.area_tokens[area] if on_closing else None
    if token_id is not None:
        token = board.token(token_id)
        front: TokenView | None = TokenView(token.main, token.minor)
        main, minor = token.main, token.minor
    else:
        front = None
        main, minor = (size, size // 2) if not on_closing else (0, 0)
    totals, cancelled, awards = area_awards(state, area, main, minor)
    scored = on_closing and token_id is None
    return AreaView(
        id=board.area_ids[area],
        size=size,
        token=front,
        scored=scored,
        closed=scored,
        totals=totals,
        cancelled=cancelled,
        would_score=[] if scored else awards,
    )


def _placed_dominoes(state: GameState) -> tuple[PlacedDomino, ...]:
    """The dominoes on the board, in the order they were placed (memoised per game). Dominoes
    are only ever added, and a placed domino's view never changes (the animals of its two
    spaces are set when it is placed and never again), so when the last rendering's dominoes
    begin the game's, only the dominoes placed since are rendered."""
    dominoes = state.dominoes

    def since(was: tuple[Any, ...], views: tuple[PlacedDomino, ...]) -> Any:
        if dominoes[: len(was)] != was:  # a history taken back
            return None
        return views + _dominoes_view(state, dominoes[len(was) :])

    return _memoised(
        state,
        "dominoes",
        (state.board_id,),
        lambda: _dominoes_view(state, dominoes),
        dominoes,
        since,
    )


def _dominoes_view(
    state: GameState, dominoes: tuple[tuple[int, int, int], ...]
) -> tuple[PlacedDomino, ...]:
    width, cover = state.board.width, state.cover
    return tuple(_placed_domino(width, d, p, q, (cover[p], cover[q])) for d, p, q in dominoes)


@lru_cache(maxsize=65536)
def _placed_domino(
    width: int, domino: int, first: int, second: int, animals: tuple[int, int]
) -> PlacedDomino:
    """A placed domino's view (the same for every game on a board as wide: cached)."""
    names = components().animals
    return PlacedDomino(
        domino,
        HalfView(first % width, first // width, names[animals[0]]),
        HalfView(second % width, second // width, names[animals[1]]),
    )


def view(state: GameState, viewer: int | None) -> GameView:
    """What ``viewer`` (a seat number, or None for a spectator) may see of the game now."""
    board = state.board
    comps = components()

    def half(cell: int) -> HalfView:
        x, y = board.xy(cell)
        return HalfView(x, y, comps.animals[state.cover[cell]])

    spaces = (state.board_id, state.area_of)
    plants = _memoised(state, "plants", (*spaces, state.plants), lambda: _plant_views(state))
    clouds = _memoised(state, "clouds", (*spaces, state.clouds), lambda: _cloud_views(state))
    mushrooms = _memoised(state, "mushrooms", spaces, lambda: _mushroom_views(state))
    return GameView(
        game_id=state.game_id,
        version=state.version,
        board=state.board_id,
        players=state.players,
        viewer=viewer,
        phase=state.phase,
        current_seat=state.current if state.current >= 0 else None,
        turn=state.turn,
        joker=comps.animals[state.joker],
        seats=[_seat_view(state, seat, viewer) for seat in range(state.players)],
        dominoes=list(_placed_dominoes(state)),
        plants=list(plants),
        clouds=list(clouds),
        areas=area_views(state),
        placed=[half(cell) for cell in state.placed],
        # A mushroom is the only meadow space that belongs to an area.
        mushrooms=list(mushrooms),
        mushrooms_left=state.mushrooms_left,
        winners=list(state.winners),
        ranking=list(state.result),
        seed=state.revealed_seed,
        clock=clock_view(state),
        chosen_seed=state.chosen_deal,
    )


def _plant_views(state: GameState) -> tuple[PlantView, ...]:
    """The plants on the board, each with its area."""
    board, area_of = state.board, state.area_of
    return tuple(
        PlantView(
            *board.xy(cell),
            area=board.area_ids[area_of[cell]],
            colour=COLOURS[plant_colour(code)],
            plant=PLANT_TYPES[plant_type(code)],
        )
        for cell, code in enumerate(state.plants)
        if code >= 0
    )


def _cloud_views(state: GameState) -> tuple[CloudView, ...]:
    """The clouds on the board (in areas and on paths)."""
    board, area_of = state.board, state.area_of
    return tuple(
        CloudView(*board.xy(cell), count)
        for cell, count in enumerate(state.clouds)
        if count and (area_of[cell] >= 0 or board.kinds[cell] == PATH)
    )


def _mushroom_views(state: GameState) -> tuple[MushroomView, ...]:
    """The mushrooms: a mushroom is the only meadow (path) space that belongs to an area."""
    board = state.board
    return tuple(
        MushroomView(*board.xy(cell), area=board.area_ids[area])
        for cell, area in enumerate(state.area_of)
        if area >= 0 and board.kinds[cell] == PATH
    )


def visible_event(event: E, viewer: int | None) -> E:
    """The event as ``viewer`` may see it (live updates): secrets are blanked, never dropped,
    so every viewer sees the same versions. The hash chain is left out: it is for the audit
    of the stored stream, and a hash of a redacted event would give its secret away. The
    event keeps its type."""
    return cast(E, _visible_event(event, viewer))


def _visible_event(event: e.Event, viewer: int | None) -> e.Event:
    # A hash (or the next event's prev_hash) would let a viewer test every candidate for a
    # blanked value (55 dominoes, a few tokens): views carry no hash chain at all.
    event = replace(event, hash="", prev_hash="")
    if event.cause is not None and event.seat != viewer:
        event = replace(event, cause=None)  # a command may name a hidden domino
    match event:
        case e.GameCreated():
            return replace(event, deal=None)
        case e.DominoDrawn(seat=seat) | e.DominoDiscarded(seat=seat) if seat != viewer:
            return replace(event, domino=None)
        case e.AreaScored(token=str(), final=True):
            return replace(event, token=None)  # goes back to the box unseen
        case e.AreaScored(seat=seat, token=str()) if seat != viewer:
            return replace(event, token=None)
    return event
