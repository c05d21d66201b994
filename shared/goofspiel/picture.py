"""The table as pictures: SVG (the prize, the pot, each seat's cards) and plain text. Pure: a
state in, text out. A picture shows what a spectator may see (never a sealed bid's card)."""

from __future__ import annotations

from xml.sax.saxutils import escape

from goofspiel.state import NO_BID, GameState
from goofspiel.view import COLOURS, prizes_left

RANKS = {1: "A", 11: "J", 12: "Q", 13: "K"}
SUIT_MARK = {"spades": "\u2660", "hearts": "\u2665", "diamonds": "\u2666"}
CARD_W, CARD_H, GAP = 34, 48, 6
WIDTH = 13 * (CARD_W + GAP) + 2 * GAP + 110


def rank(card: int) -> str:
    return RANKS.get(card, str(card))


def _card(x: int, y: int, card: int | None, suit: str) -> str:
    """A card face (``card`` None: face down)."""
    fill = "#2f4f7f" if card is None else "#ffffff"
    colour = "#c0392b" if suit in ("hearts", "diamonds") else "#222222"
    out = (
        f'<rect x="{x}" y="{y}" width="{CARD_W}" height="{CARD_H}" rx="4" '
        f'fill="{fill}" stroke="#555"/>'
    )
    if card is not None:
        label = f"{rank(card)}{SUIT_MARK[suit]}"
        out += (
            f'<text x="{x + CARD_W // 2}" y="{y + CARD_H // 2 + 5}" text-anchor="middle" '
            f'font-size="14" fill="{colour}">{label}</text>'
        )
    return out


def _row(y: int, label: str, cards: list[int | None], suit: str) -> list[str]:
    out = [f'<text x="{GAP}" y="{y + CARD_H // 2 + 5}" font-size="13">{escape(label)}</text>']
    for number, card in enumerate(cards):
        out.append(_card(110 + number * (CARD_W + GAP), y, card, suit))
    return out


def _marks(state: GameState, seat: int, bid: str = "bid") -> str:
    """What a seat's label adds: that it has bid, and who plays it when not its player."""
    marks = [bid] if state.bids[seat] != NO_BID else []
    if state.statuses[seat] != "playing":
        marks.append("a bot bids" if state.statuses[seat] == "bot" else state.statuses[seat])
    return f" ({', '.join(marks)})" if marks else ""


def board_svg(state: GameState, title: str = "") -> str:
    rows = 5
    height = rows * (CARD_H + 2 * GAP) + 30
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif">',
        f"<title>{escape(title or f'Goofspiel game {state.game_id}')}</title>",
        f'<rect width="{WIDTH}" height="{height}" fill="#1e6b3a"/>',
    ]
    y = 10
    pot: list[int | None] = list(state.pot)
    out += _row(y, f"turn {state.turn}/{state.cards}", pot, "diamonds")
    y += CARD_H + 2 * GAP
    out += _row(
        y, f"{len(prizes_left(state))} face down", [None] * len(prizes_left(state)), "diamonds"
    )
    for seat in (0, 1):
        y += CARD_H + 2 * GAP
        name = state.names[seat] or f"seat {seat}"
        label = f"{name} {state.scores[seat]}{_marks(state, seat)}"
        cards: list[int | None] = [*sorted(state.hands[seat])]
        out += _row(y, label, cards, COLOURS[seat])
    y += CARD_H + 2 * GAP
    discarded: list[int | None] = list(state.discarded)
    out += _row(y, "discarded", discarded, "diamonds")
    status = f"{state.phase}: scores {state.scores[0]} to {state.scores[1]}"
    out.append(
        f'<text x="{GAP}" y="{height - 10}" font-size="13" fill="#ffffff">{escape(status)}</text>'
    )
    out.append("</svg>")
    return "\n".join(out)


def board_text(state: GameState) -> str:
    """One line each: the pot, the prizes left, each seat's hand and score, the discards."""

    def cards(values: list[int]) -> str:
        return " ".join(rank(card) for card in values) or "-"

    lines = [
        f"turn {state.turn}/{state.cards} ({state.phase}), pot: {cards(list(state.pot))}",
        f"prizes face down: {len(prizes_left(state))}",
    ]
    for seat in (0, 1):
        name = state.names[seat] or f"seat {seat}"
        hand = cards(sorted(state.hands[seat]))
        lines.append(
            f"{name} ({COLOURS[seat]}) {state.scores[seat]}{_marks(state, seat, 'has bid')}: {hand}"
        )
    lines.append(f"discarded: {cards(list(state.discarded))}")
    return "\n".join(lines)
