"""The board as an SVG picture, shared by ``renature replay --svg`` and the web client.

Pure: a state in, SVG text out. What is drawn is public only (no hand, reserve, token id or
token back before the end), so the picture of any state may be shown to anyone: areas shaded by
the colour that controls them, dominoes with their animals' full names, plants by type (size)
and colour, clouds, area tokens still lying in their areas, and a side panel with the scores,
the tokens each seat holds, the joker and a legend.

Colours stay apart for colour-blind players: every plant and seat colour also carries a letter
(O, B, K, W, N), so no information is given by hue alone. Every board cell carries
``data-cell`` (its flat index), ``data-x``/``data-y`` (as commands name it) and its kind, so a
client can highlight legal moves on the very drawing the export shows.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from renature.areas import live_areas
from renature.board import AREA, OFF, PATH, Board
from renature.components import COLOURS, PLANT_TYPES, components, plant_colour, plant_type
from renature.scoring import colour_totals, majority_ranks
from renature.state import GameState

CELL = 44
MARGIN = 22
"""The board's edges: the column numbers (x) above it, the row numbers (y) left of it, as
commands, moves and the log name spaces."""
PANEL = 250
FOOT = 30
FILL = {
    "orange": "#e69f00",  # Okabe-Ito orange
    "blue": "#0072b2",  # Okabe-Ito blue
    "black": "#222222",
    "white": "#f4f4f4",
    "neutral": "#8a9a5b",
}
INK = {"orange": "#000", "blue": "#fff", "black": "#fff", "white": "#000", "neutral": "#000"}
LETTER = {"orange": "O", "blue": "B", "black": "K", "white": "W", "neutral": "N"}
PLANT_RADIUS = {"turf": 6, "bush": 9, "pine": 12, "oak": 15}
AREA_SOIL, AREA_SCORED, AREA_EDGE = "#9c7445", "#4f7a3a", "#6b4e2e"
PATH_FILL = {"brook": "#bfe3f5", "meadow": "#b9dba0"}
SPLIT = {
    "butterfly": ("butter", "fly"),
    "salamander": ("sala", "mander"),
    "woodpecker": ("wood", "pecker"),
    "hedgehog": ("hedge", "hog"),
}
"""Animal names too long for one line of a space at 11 px, cut where a reader expects."""
GROUNDS = (
    (AREA_SOIL, "area (soil); tinted: who leads it"),
    (AREA_SCORED, "area already scored (Valley)"),
    (PATH_FILL["brook"], "brook (path)"),
    (PATH_FILL["meadow"], "meadow (path)"),
    ("#6e4b2a", "tree stump"),
)
"""The grounds of the board's spaces, each explained in the legend."""


def controlling_colour(state: GameState, area: int) -> str | None:
    """The colour that would take the main points if the area were scored now."""
    _, ranks = majority_ranks(colour_totals(state, area))
    for colour, rank in ranks:
        if rank in ("sole", "main"):
            return COLOURS[colour]
    return None


def board_svg(state: GameState, title: str = "") -> str:
    """The whole picture: the board on the left, the score panel and legend on the right."""
    board = state.board
    width = MARGIN + board.width * CELL + PANEL
    height = max(MARGIN + board.height * CELL, 720) + FOOT
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" role="img" '
        f'aria-labelledby="picture-title">',
        f'<title id="picture-title">{escape(title or f"Renature game {state.game_id}")}</title>',
        f'<rect width="{width}" height="{height}" fill="#fbf8ef"/>',
    ]
    out += _edges(board)
    out += _cells(state)
    out += _dominoes(state)
    out += _plants(state)
    out += _area_labels(state)
    out += _panel(state, MARGIN + board.width * CELL + 10)
    out.append(
        f'<text class="footer" x="6" y="{height - 10}" font-size="13">'
        f"{escape(_footer(state))}</text>"
    )
    out.append("</svg>")
    return "\n".join(out)


def _cells(state: GameState) -> list[str]:
    board = state.board
    control = {area: controlling_colour(state, area) for area in live_areas(state)}
    scored = {a for a, token in enumerate(state.area_tokens) if token is None}
    on_closing = board.scoring == "on_closing"
    first_cell: dict[int, int] = {}
    for cell in board.cells:
        if state.area_of[cell] >= 0:
            first_cell.setdefault(state.area_of[cell], cell)
    out: list[str] = []
    for cell in board.cells:
        kind = board.kinds[cell]
        if kind == OFF:
            continue
        px, py = _corner(board, cell)
        area = state.area_of[cell]
        if area >= 0:
            soil = AREA_SCORED if on_closing and area in scored else AREA_SOIL
            out += _area_cell(board, cell, area, soil, control.get(area))
        elif kind == PATH:
            out += _path_cell(state, cell)
        if state.clouds[cell]:
            out.append(_cloud(px + CELL - 12, py + 9, state.clouds[cell]))
        token = state.area_tokens[area] if area >= 0 and area < len(state.area_tokens) else None
        if token is not None and cell == first_cell.get(area):
            out.append(_token(board, token, px + CELL - 10, py + CELL - 10))
    return out


def _area_cell(board: Board, cell: int, area: int, soil: str, owner: str | None) -> list[str]:
    """An area space: its soil, shaded by the colour that controls the area, a mushroom."""
    px, py = _corner(board, cell)
    out = [
        f'<rect class="cell area" data-cell="{cell}" {_xy(board, cell)} '
        f'data-area="{board.area_ids[area]}" x="{px}" y="{py}" width="{CELL}" '
        f'height="{CELL}" fill="{soil}" stroke="{AREA_EDGE}"/>'
    ]
    if owner:
        out.append(
            f'<rect x="{px}" y="{py}" width="{CELL}" height="{CELL}" '
            f'fill="{FILL[owner]}" fill-opacity="0.35" pointer-events="none"/>'
        )
    if board.kinds[cell] != AREA:  # a Valley mushroom
        out.append(
            f'<circle class="mushroom" cx="{px + 7}" cy="{py + 7}" r="5" fill="#c0392b">'
            "<title>mushroom</title></circle>"
        )
    return out


def _path_cell(state: GameState, cell: int) -> list[str]:
    """A brook (meadow) space: a starting space ringed, an uncovered stump drawn."""
    board = state.board
    px, py = _corner(board, cell)
    fill = PATH_FILL["brook" if board.path_name == "brook" else "meadow"]
    out = [
        f'<rect class="cell path" data-cell="{cell}" {_xy(board, cell)} x="{px}" '
        f'y="{py}" width="{CELL}" height="{CELL}" fill="{fill}" stroke="#9cc"/>'
    ]
    if cell in board.starts:
        out.append(
            f'<circle class="start" cx="{px + CELL / 2}" cy="{py + CELL / 2}" '
            f'r="{CELL / 3}" fill="none" stroke="#1a5276" stroke-width="2">'
            "<title>starting space</title></circle>"
        )
    if cell in board.stumps and state.cover[cell] < 0:
        out.append(
            f'<rect class="stump" x="{px + 14}" y="{py + 14}" width="16" height="16" '
            'fill="#6e4b2a"><title>tree stump</title></rect>'
        )
    return out


def _dominoes(state: GameState) -> list[str]:
    board = state.board
    animals = components().animals
    out: list[str] = []
    for domino, first, second in state.dominoes:
        (x1, y1), (x2, y2) = board.xy(first), board.xy(second)
        left, top = MARGIN + min(x1, x2) * CELL + 2, MARGIN + min(y1, y2) * CELL + 2
        w = (abs(x1 - x2) + 1) * CELL - 4
        h = (abs(y1 - y2) + 1) * CELL - 4
        names = f"{animals[state.cover[first]]} and {animals[state.cover[second]]}"
        out.append(f'<g class="domino" data-domino="{domino}" aria-label={quoteattr(names)}>')
        out.append(
            f'<rect x="{left}" y="{top}" width="{w}" height="{h}" rx="6" fill="#fffdf5" '
            'stroke="#333"/>'
        )
        for cell in (first, second):
            px, py = _corner(board, cell)
            out.append(_animal(px, py, animals[state.cover[cell]]))
        out.append("</g>")
    return out


def _plants(state: GameState) -> list[str]:
    board = state.board
    out: list[str] = []
    for cell, code in enumerate(state.plants):
        if code < 0:
            continue
        px, py = _corner(board, cell)
        colour, plant = COLOURS[plant_colour(code)], PLANT_TYPES[plant_type(code)]
        cx, cy, r = px + CELL / 2, py + CELL / 2, PLANT_RADIUS[plant]
        # A white ring with a dark rim under every plant: it stands out on soil, shading
        # and meadow alike, whatever its own colour.
        out.append(
            f'<circle class="halo" cx="{cx}" cy="{cy}" r="{r + 2.5}" fill="#fff" '
            'stroke="#000" stroke-width="1" pointer-events="none"/>'
        )
        out.append(
            f'<circle class="plant" data-cell="{cell}" data-colour="{colour}" '
            f'data-plant="{plant}" cx="{cx}" cy="{cy}" r="{r}" fill="{FILL[colour]}" '
            f'stroke="#000"><title>{colour} {plant}</title></circle>'
        )
        if r >= 9:  # the letter keeps colours apart without hue; a turf is too small for it
            out.append(
                f'<text x="{cx}" y="{cy + 4}" font-size="11" text-anchor="middle" '
                f'fill="{INK[colour]}" pointer-events="none" aria-hidden="true">'
                f"{LETTER[colour]}</text>"
            )
    return out


def _area_labels(state: GameState) -> list[str]:
    """Each area's name and size in its top-left cell's corner, above plants and shading."""
    board = state.board
    out: list[str] = []
    for area in live_areas(state):
        cells = [c for c in board.cells if state.area_of[c] == area]
        px, py = _corner(board, min(cells))
        label = f"{board.area_ids[area]}{state.area_sizes[area]}"
        out.append(
            f'<g class="area-label" data-area="{board.area_ids[area]}">'
            f'<rect x="{px + 1}" y="{py + 1}" width="{7 * len(label) + 4}" height="14" rx="2" '
            f'fill="#000" fill-opacity="0.7"/>'
            f'<text x="{px + 3}" y="{py + 12}" font-size="11" fill="#fff">{escape(label)}</text>'
            "</g>"
        )
    return out


def _panel(state: GameState, left: int) -> list[str]:
    """Scores, tokens held, clouds, the joker and the legend."""
    animals = components().animals
    out = [f'<g class="panel" transform="translate({left},0)">']
    out.append('<text x="0" y="20" font-size="15" font-weight="bold">Scores</text>')
    y = 42
    for number, seat in enumerate(state.seats):
        colour = COLOURS[seat.colour]
        marker = "▶ " if number == state.current and not state.is_over else ""
        name = f" ({seat.name})" if seat.name else ""
        out.append(
            f'<g class="seat" data-seat="{number}" data-colour="{colour}">'
            f'<rect x="0" y="{y - 12}" width="16" height="16" fill="{FILL[colour]}" '
            f'stroke="#000"/><text x="8" y="{y}" font-size="11" text-anchor="middle" '
            f'fill="{INK[colour]}">{LETTER[colour]}</text>'
            f'<text x="22" y="{y}" font-size="13">{escape(marker)}{colour} {seat.score}'
            f"{escape(name)}</text></g>"
        )
        out.append(
            f'<text x="22" y="{y + 15}" font-size="11" fill="#444">clouds {seat.clouds}, '
            f"tokens held: {len(seat.tokens)}</text>"
        )
        fronts = [_token_front(state, t) for t in seat.tokens]
        for row in range(0, len(fronts), 4):  # four tokens a line keep the panel's width
            y += 13
            out.append(
                f'<text class="tokens" x="22" y="{y + 15}" font-size="11" fill="#444">'
                f"{escape(', '.join(fronts[row : row + 4]))}</text>"
            )
        y += 38
    out.append(f'<text x="0" y="{y}" font-size="12">joker: {escape(animals[state.joker])}</text>')
    out.append(f'<text x="0" y="{y + 16}" font-size="12">phase: {escape(state.phase)}</text>')
    out += _legend(y + 40)
    out.append("</g>")
    return out


def _legend(top: int) -> list[str]:
    out = [
        f'<g class="legend"><text x="0" y="{top}" font-size="13" font-weight="bold">Legend</text>'
    ]
    y = top + 20
    for plant, r in PLANT_RADIUS.items():
        out.append(
            f'<circle cx="12" cy="{y - 4}" r="{r * 0.6:.1f}" fill="#ccc" stroke="#000"/>'
            f'<text x="30" y="{y}" font-size="11">{plant} ({PLANT_TYPES.index(plant) + 1})</text>'
        )
        y += 18
    for colour in COLOURS:
        out.append(
            f'<rect x="4" y="{y - 11}" width="14" height="14" fill="{FILL[colour]}" '
            f'stroke="#000"/><text x="30" y="{y}" font-size="11">{LETTER[colour]} = {colour}'
            "</text>"
        )
        y += 18
    for fill, words in GROUNDS:
        out.append(
            f'<rect x="4" y="{y - 11}" width="14" height="14" fill="{fill}" stroke="#000"/>'
            f'<text x="30" y="{y}" font-size="11">{escape(words)}</text>'
        )
        y += 18
    out.append(
        f'<circle cx="11" cy="{y - 4}" r="5" fill="#c0392b"/>'
        f'<text x="30" y="{y}" font-size="11">mushroom (Valley)</text>'
    )
    y += 18
    out.append(
        f'<circle cx="11" cy="{y - 4}" r="7" fill="none" stroke="#1a5276" stroke-width="2"/>'
        f'<text x="30" y="{y}" font-size="11">starting space</text>'
    )
    y += 18
    out.append(_cloud(11, y - 5, 1))
    out.append(f'<text x="30" y="{y}" font-size="11">cloud(s) on a space</text>')
    y += 18
    out.append(_token_shape(11, y - 5, "T"))
    out.append(f'<text x="30" y="{y}" font-size="11">area token still in its area</text>')
    out.append("</g>")
    return out


def _cloud(cx: float, cy: float, count: int) -> str:
    return (
        f'<g class="cloud" data-count="{count}"><title>{count} cloud(s)</title>'
        f'<ellipse cx="{cx}" cy="{cy}" rx="10" ry="8" fill="#fff" stroke="#1a5276"/>'
        f'<text x="{cx}" y="{cy + 4}" font-size="11" text-anchor="middle" fill="#1a5276">'
        f"{count}</text></g>"
    )


def _token(board: Board, token_id: str, cx: float, cy: float) -> str:
    """A token lying in its area, front up: its id would name its secret back."""
    token = board.token(token_id)
    return (
        f'<g class="area-token" data-main="{token.main}" data-minor="{token.minor}">'
        f"<title>area token: {token.main} main, {token.minor} minor</title>"
        + _token_shape(cx, cy, str(token.main))
        + "</g>"
    )


def _token_front(state: GameState, token_id: str) -> str:
    """A held token as everyone may see it: main/minor; its back only once the game is over."""
    token = state.board.token(token_id)
    back = f" back {token.back}" if state.is_over else ""
    return f"{token.main}/{token.minor}{back}"


def _token_shape(cx: float, cy: float, text: str) -> str:
    points = " ".join(
        f"{cx + dx:.1f},{cy + dy:.1f}"
        for dx, dy in ((-8, 0), (-4, -7), (4, -7), (8, 0), (4, 7), (-4, 7))
    )
    return (
        f'<polygon points="{points}" fill="#f7dc6f" stroke="#7d6608"/>'
        f'<text x="{cx}" y="{cy + 4}" font-size="11" text-anchor="middle">{escape(text)}</text>'
    )


def _footer(state: GameState) -> str:
    scores = ", ".join(f"{COLOURS[s.colour]} {s.score}" for s in state.seats)
    return f"after event {state.version}. scores: {scores}" if scores else "lobby"


def _xy(board: Board, cell: int) -> str:
    """The cell's grid coordinates as commands name them (``Cell(x, y)``)."""
    x, y = board.xy(cell)
    return f'data-x="{x}" data-y="{y}"'


def _corner(board: Board, cell: int) -> tuple[int, int]:
    x, y = board.xy(cell)
    return MARGIN + x * CELL, MARGIN + y * CELL


def _edges(board: Board) -> list[str]:
    """Column numbers above the board and row numbers left of it: a space is "(x, y)"."""
    out = ['<g class="edges" font-size="11" fill="#333" aria-hidden="true">']
    for x in range(board.width):
        out.append(
            f'<text class="edge-x" x="{MARGIN + x * CELL + CELL / 2}" y="15" '
            f'text-anchor="middle">{x}</text>'
        )
    for y in range(board.height):
        out.append(
            f'<text class="edge-y" x="{MARGIN - 4}" y="{MARGIN + y * CELL + CELL / 2 + 4}" '
            f'text-anchor="end">{y}</text>'
        )
    out.append("</g>")
    return out


def _animal(px: int, py: int, name: str) -> str:
    """An animal's name on its space, at 11 px: on two lines when one would not fit."""
    lines = SPLIT.get(name, (name,))
    top = py + CELL / 2 + 4 - 6 * (len(lines) - 1)
    spans = "".join(
        f'<tspan x="{px + CELL / 2}" y="{top + 12 * n}">{escape(part)}</tspan>'
        for n, part in enumerate(lines)
    )
    return (
        f'<text font-size="11" text-anchor="middle" fill="#1d1d1b"><title>{name}</title>'
        f"{spans}</text>"
    )


def board_text(state: GameState) -> str:
    """The board as plain text: ``~`` free path, area letters, an animal's first letter on a
    covered space, a plant's type letter (upper case for a colour, lower for neutral)."""
    board = state.board
    animals = components().animals
    lines = []
    for y in range(board.height):
        row = ""
        for x in range(board.width):
            cell = board.index(x, y)
            if board.kinds[cell] == OFF:
                row += " "
            elif state.plants[cell] >= 0:
                code = state.plants[cell]
                letter = PLANT_TYPES[plant_type(code)][0]
                row += letter if COLOURS[plant_colour(code)] == "neutral" else letter.upper()
            elif state.area_of[cell] >= 0:
                row += board.area_ids[state.area_of[cell]]
            elif state.cover[cell] >= 0:
                row += animals[state.cover[cell]][0]
            else:
                row += "~"
        lines.append(row.rstrip())
    return "\n".join(lines)
