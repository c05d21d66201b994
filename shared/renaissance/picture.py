"""The board as pictures: SVG (pieces in their own colours, markers as gold and silver discs)
and plain text for a terminal. Pure: a state in, text out. Before the first set (the lobby, or
a game cancelled there) nothing lies on the board: both draw it empty and say who has sat down."""

from __future__ import annotations

from xml.sax.saxutils import escape

from renaissance.components import CENTRE, COLOURS, EMPTY, MONOMINO, components
from renaissance.state import GameState

CELL = 48
PIECE_FILL = (
    "#d98c5f",  # domino-1
    "#d9a35f",
    "#d9b95f",
    "#c9c75a",  # domino-4
    "#7fb069",  # tri-I-1
    "#5fa37f",
    "#5f9fb0",  # tri-V-1
    "#5f7fb0",
    "#8c6fb0",  # tetra-I
    "#b06f9f",  # tetra-O
    "#b05f6f",  # tetra-T
    "#a3685a",  # tetra-L
    "#6f8c5f",  # tetra-S
)
MARKER_FILL = {"silver": "#c0c0c8", "gold": "#d4af37"}
TEXT_LETTER = "ABCDEFGHIOTLS"
"""Letters of the pieces in the terminal picture, in piece order (A-D dominoes, E F the I
triominoes, G H the V triominoes, then the I O T L S tetrominoes)."""


def _board(state: GameState) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """What lies on each square and the markers; an empty board before the first set."""
    if state.cover:
        return state.cover, state.markers
    comps = components()
    cover = tuple(CENTRE if sq in comps.blocked else EMPTY for sq in range(comps.squares))
    return cover, (-1,) * comps.squares


def _caption(state: GameState) -> str:
    """The set, the step and the scores by colour; before the first set, who has sat down."""
    if not state.set_number:
        seated = ", ".join(name for name in state.names if name is not None) or "nobody"
        step = "waiting for the first set" if state.phase == "lobby" else state.phase
        return f"{step} (seated: {seated})"
    seats = "   ".join(f"{COLOURS[state.colour_of(seat)]} {state.scores[seat]}" for seat in (0, 1))
    return f"set {state.set_number}, {state.phase}   {seats}"


def board_svg(state: GameState, title: str = "") -> str:
    comps = components()
    cover_of, markers = _board(state)
    size = comps.width * CELL
    height = comps.height * CELL + 30
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{height}" '
        f'viewBox="0 0 {size} {height}" font-family="sans-serif">',
        f"<title>{escape(title or f'Renaissance game {state.game_id}')}</title>",
        f'<rect width="{size}" height="{height}" fill="#f6f1e3"/>',
    ]
    for square, cover in enumerate(cover_of):
        x, y = comps.xy(square)
        px, py = x * CELL, y * CELL
        if cover == CENTRE:
            fill, label = "#3b3b3b", "centre"
        elif cover == MONOMINO:
            fill, label = "#e8e0c8", "monomino"
        elif cover == EMPTY:
            fill, label = "#fbf8ef", "free"
        else:
            fill, label = PIECE_FILL[cover], comps.pieces[cover].id
        out.append(
            f'<rect class="square" data-piece="{label}" x="{px}" y="{py}" width="{CELL}" '
            f'height="{CELL}" fill="{fill}" stroke="#8a7f66"><title>{label}</title></rect>'
        )
        marker = markers[square]
        if marker >= 0:
            colour = COLOURS[marker]
            out.append(
                f'<circle class="marker" data-colour="{colour}" cx="{px + CELL / 2}" '
                f'cy="{py + CELL / 2}" r="{CELL / 3}" fill="{MARKER_FILL[colour]}" '
                f'stroke="#333"><title>{colour} marker</title></circle>'
            )
    out.append(
        f'<text x="6" y="{comps.height * CELL + 21}" font-size="14">'
        f"{escape(_caption(state))}</text>"
    )
    out.append("</svg>")
    return "\n".join(out)


def board_text(state: GameState) -> str:
    """Two characters a square: the piece (letter, ``m`` monomino, ``.`` free, ``#`` centre)
    and the marker (``s`` silver, ``g`` gold, space for none); before the first set, the empty
    board and who has sat down."""
    comps = components()
    cover_of, markers = _board(state)
    lines = ["   " + "".join(f"{x}  " for x in range(comps.width))]
    for y in range(comps.height):
        row = f"{y}  "
        for x in range(comps.width):
            square = comps.square(x, y)
            cover = cover_of[square]
            piece = {CENTRE: "#", MONOMINO: "m", EMPTY: "."}.get(cover)
            if piece is None:
                piece = TEXT_LETTER[cover]
            marker = markers[square]
            row += piece + ("sg"[marker] if marker >= 0 else " ") + " "
        lines.append(row.rstrip())
    legend = ", ".join(f"{TEXT_LETTER[p.index]} {p.id}" for p in comps.pieces)
    lines.append(f"pieces: {legend}; m monomino; s/g a silver/gold marker")
    if not state.cover:
        lines.append(_caption(state))
    return "\n".join(lines)
