"""The board as an SVG picture: areas shaded by the colour that controls them, dominoes with
their animals, plants by type (size) and colour. Pure: a state in, SVG text out."""

from __future__ import annotations

from xml.sax.saxutils import escape

from renature.board import AREA, OFF, PATH
from renature.components import COLOURS, PLANT_TYPES, components, plant_colour, plant_type
from renature.rules import colour_totals, live_areas, majority_ranks
from renature.state import GameState

CELL = 36
FILL = {
    "orange": "#f28c28",
    "blue": "#2f6fd6",
    "black": "#222222",
    "white": "#f4f4f4",
    "neutral": "#8a9a5b",
}
PLANT_RADIUS = {"turf": 5, "bush": 8, "pine": 11, "oak": 14}


def controlling_colour(state: GameState, area: int) -> str | None:
    """The colour that would take the main points if the area were scored now."""
    _, ranks = majority_ranks(colour_totals(state, area))
    for colour, rank in ranks:
        if rank in ("sole", "main"):
            return COLOURS[colour]
    return None


def board_svg(state: GameState, title: str = "") -> str:
    board = state.board
    animals = components().animals
    width, height = board.width * CELL, board.height * CELL + 28
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif">',
        f"<title>{escape(title or f'Renature game {state.game_id}')}</title>",
        f'<rect width="{width}" height="{height}" fill="#fbf8ef"/>',
    ]
    control = {area: controlling_colour(state, area) for area in live_areas(state)}
    scored = {a for a, token in enumerate(state.area_tokens) if token is None}
    on_closing = board.scoring == "on_closing"
    for cell in board.cells:
        kind = board.kinds[cell]
        if kind == OFF:
            continue
        x, y = board.xy(cell)
        px, py = x * CELL, y * CELL
        area = state.area_of[cell]
        if area >= 0:
            base = "#4f7a3a" if on_closing and area in scored else "#9c7445"
            out.append(
                f'<rect class="area" data-area="{board.area_ids[area]}" x="{px}" y="{py}" '
                f'width="{CELL}" height="{CELL}" fill="{base}" stroke="#6b4e2e"/>'
            )
            owner = control.get(area)
            if owner:
                out.append(
                    f'<rect x="{px}" y="{py}" width="{CELL}" height="{CELL}" '
                    f'fill="{FILL[owner]}" fill-opacity="0.35"/>'
                )
            if kind != AREA:  # a Valley mushroom
                out.append(
                    f'<circle class="mushroom" cx="{px + 6}" cy="{py + 6}" r="4" fill="#c0392b"/>'
                )
        elif kind == PATH:
            fill = "#bfe3f5" if board.path_name == "brook" else "#b9dba0"
            out.append(
                f'<rect x="{px}" y="{py}" width="{CELL}" height="{CELL}" fill="{fill}" '
                f'stroke="#9cc"/>'
            )
            if cell in board.starts:
                out.append(
                    f'<circle cx="{px + CELL / 2}" cy="{py + CELL / 2}" r="{CELL / 3}" '
                    f'fill="none" stroke="#1a5276" stroke-width="2"/>'
                )
            if cell in board.stumps and state.cover[cell] < 0:
                out.append(
                    f'<rect x="{px + 11}" y="{py + 11}" width="14" height="14" fill="#6e4b2a"/>'
                )
        if state.clouds[cell]:
            out.append(
                f'<text x="{px + CELL - 4}" y="{py + 12}" font-size="10" text-anchor="end" '
                f'fill="#1a5276">☁{state.clouds[cell]}</text>'
            )
    for area in live_areas(state):
        cells = [c for c in board.cells if state.area_of[c] == area]
        x, y = board.xy(min(cells))
        out.append(
            f'<text x="{x * CELL + 3}" y="{y * CELL + CELL - 4}" font-size="9" '
            f'fill="#fff">{board.area_ids[area]}{state.area_sizes[area]}</text>'
        )
    for domino, first, second in state.dominoes:
        (x1, y1), (x2, y2) = board.xy(first), board.xy(second)
        left, top = min(x1, x2) * CELL + 2, min(y1, y2) * CELL + 2
        w = (abs(x1 - x2) + 1) * CELL - 4
        h = (abs(y1 - y2) + 1) * CELL - 4
        out.append(f'<g class="domino" data-domino="{domino}">')
        out.append(
            f'<rect x="{left}" y="{top}" width="{w}" height="{h}" rx="5" fill="#fffdf5" '
            f'stroke="#333"/>'
        )
        for cell in (first, second):
            x, y = board.xy(cell)
            name = animals[state.cover[cell]]
            out.append(
                f'<text x="{x * CELL + CELL / 2}" y="{y * CELL + CELL / 2 + 4}" font-size="10" '
                f'text-anchor="middle"><title>{name}</title>{escape(name[:4])}</text>'
            )
        out.append("</g>")
    for cell, code in enumerate(state.plants):
        if code < 0:
            continue
        x, y = board.xy(cell)
        colour, plant = COLOURS[plant_colour(code)], PLANT_TYPES[plant_type(code)]
        out.append(
            f'<circle class="plant" data-colour="{colour}" data-plant="{plant}" '
            f'cx="{x * CELL + CELL / 2}" cy="{y * CELL + CELL / 2}" r="{PLANT_RADIUS[plant]}" '
            f'fill="{FILL[colour]}" stroke="#000"><title>{colour} {plant}</title></circle>'
        )
    scores = "   ".join(f"{COLOURS[s.colour]} {s.score}" for s in state.seats)
    out.append(
        f'<text x="6" y="{board.height * CELL + 19}" font-size="14">'
        f"joker: {animals[state.joker]}   {escape(scores)}</text>"
    )
    out.append("</svg>")
    return "\n".join(out)
