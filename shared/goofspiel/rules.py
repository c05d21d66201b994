"""The rules: ``execute``/``decide(state, command)``, ``evolve(state, event)`` and
``legal_actions(state, seat)`` over immutable values (docs/rules-goofspiel.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec.structs import replace

from gameplatform.clock import TimeControl
from gameplatform.dealing import commitment, portable_shuffle
from gameplatform.execution import Batch, Rulebook
from goofspiel import commands as c
from goofspiel import events as e
from goofspiel import seating
from goofspiel.errors import (
    AlreadyBid,
    CardNotInHand,
    GameNotFound,
    GameOver,
    InvalidCommand,
    NotYourTurn,
    PlayedByBot,
    SeedMismatch,
    WrongPhase,
)
from goofspiel.state import NO_BID, GameState

SEATS = seating.SEATS


def prize_deck(seed: str, cards: int) -> list[int]:
    """The prize suit, ace to ``cards``, shuffled from the seed (top first)."""
    return portable_shuffle(seed, "prizes", range(1, cards + 1))


def result(scores: tuple[int, ...], resigned: int | None = None) -> tuple[list[int], list[int]]:
    """(ranking, winners): seats by score, highest first; every seat with the top score wins.
    A seat that resigned ranks last and the other wins, whatever the scores."""
    if resigned is not None:
        return [1 - resigned, resigned], [1 - resigned]
    ranking = sorted(SEATS, key=lambda seat: -scores[seat])
    return ranking, [seat for seat in SEATS if scores[seat] == max(scores)]


# --- deciding ---------------------------------------------------------------------------------
def _create(command: c.CreateGame) -> e.GameCreated:
    if command.players != 2:
        raise InvalidCommand("Goofspiel is a game for 2 players.")
    if not 1 <= len(command.game_id) <= 64:
        raise InvalidCommand("A game id must have 1 to 64 characters.")
    if not 1 <= command.cards <= c.MAX_CARDS:
        raise InvalidCommand(f"A suit has 1 to {c.MAX_CARDS} cards, not {command.cards}.")
    if command.ties not in ("discard", "carry"):
        raise InvalidCommand(f"A tie discards or carries the prize, not {command.ties!r}.")
    if not command.seed:
        raise InvalidCommand("A game needs a seed: it shuffles the prize deck.")
    control = command.clock
    if isinstance(control, TimeControl) and (problem := control.problem()):
        raise InvalidCommand(problem)
    return e.GameCreated(
        game_id=command.game_id,
        version=1,
        players=2,
        cards=command.cards,
        ties=command.ties,
        seed_commitment=commitment(command.seed, command.salt),
        prizes=prize_deck(command.seed, command.cards),
        chosen_seed=command.chosen_seed,
        clock=control,
    )


def _join(batch: Batch[GameState, e.Event], command: c.JoinGame) -> None:
    state: GameState = batch.state
    if state.phase != "lobby":
        raise WrongPhase("The game has started: its seats are taken.")
    if command.seat not in SEATS:
        raise InvalidCommand("Goofspiel has seats 0 and 1.")
    if state.names[command.seat] is not None:
        raise InvalidCommand(f"Seat {command.seat} is taken.")
    if not command.name.strip():
        raise InvalidCommand("A player needs a name.")
    batch.emit(e.PlayerJoined, seat=command.seat, name=command.name)


def _start(batch: Batch[GameState, e.Event], command: c.StartGame) -> None:
    state: GameState = batch.state
    if state.phase != "lobby":
        raise WrongPhase("The game has started already.")
    if None in state.names:
        raise WrongPhase("Both seats must be taken before the game starts.")
    batch.emit(e.GameStarted)
    first = state.prizes[0]
    batch.emit(e.PrizeRevealed, turn=1, prize=first, pot=[first])


def _bid(batch: Batch[GameState, e.Event], command: c.Bid) -> None:
    """A player's bid: refused for a seat a bot plays (the bot's bids are `_bid_card`'s)."""
    state: GameState = batch.state
    if state.phase == "bidding" and command.seat in SEATS and state.statuses[command.seat] == "bot":
        raise PlayedByBot("A bot bids for this seat since its time ran out: take it back first.")
    _bid_card(batch, command)


def _bid_card(batch: Batch[GameState, e.Event], command: c.Bid) -> None:
    state: GameState = batch.state
    if state.phase in ("final_scoring", "finished"):
        raise WrongPhase("Every prize has been bid for: the game is over.")
    if state.phase != "bidding":
        raise WrongPhase("The game has not started.")
    if command.seat not in SEATS:
        raise InvalidCommand("Goofspiel has seats 0 and 1.")
    if state.bids[command.seat] != NO_BID:
        raise AlreadyBid("You have bid for this prize already; wait for the other bid.")
    if command.seat != state.to_move:
        raise NotYourTurn(f"Seat {state.to_move} bids first (bids are taken in seat order).")
    if command.card not in state.hands[command.seat]:
        raise CardNotInHand(f"Card {command.card} is not in your hand.")
    batch.emit(e.BidSealed, seat=command.seat, card=command.card)
    if batch.state.to_move is None:
        _reveal(batch)


def _reveal(batch: Batch[GameState, e.Event]) -> None:
    state: GameState = batch.state
    bids = list(state.bids)
    last = state.turn == state.cards
    high = max(bids)
    winner = bids.index(high) if bids.count(high) == 1 else None
    points = sum(state.pot) if winner is not None else 0
    discarded = winner is None and (state.ties == "discard" or last)
    batch.emit(
        e.BidsRevealed,
        turn=state.turn,
        bids=bids,
        pot=list(state.pot),
        winner=winner,
        points=points,
        discarded=discarded,
    )
    if not last:
        prize = state.prizes[state.turn]
        carried = [] if winner is not None or discarded else list(state.pot)
        batch.emit(e.PrizeRevealed, turn=state.turn + 1, prize=prize, pot=[*carried, prize])


def _resign(batch: Batch[GameState, e.Event], command: c.Resign) -> None:
    state: GameState = batch.state
    if state.phase != "bidding":
        raise WrongPhase("Only a game in play can be resigned.")
    if command.seat not in SEATS:
        raise InvalidCommand("Goofspiel has seats 0 and 1.")
    batch.emit(e.PlayerResigned, seat=command.seat)


def _finish(batch: Batch[GameState, e.Event], command: c.FinishGame) -> None:
    state: GameState = batch.state
    if state.phase != "final_scoring":
        raise WrongPhase("The seed is revealed once the last prize is settled.")
    if commitment(command.seed, command.salt) != state.commitment:
        raise SeedMismatch("The revealed seed does not match the commitment made at creation.")
    ranking, winners = result(state.scores, state.resigned)
    batch.emit(
        e.GameEnded,
        seed=command.seed,
        salt=command.salt,
        scores=list(state.scores),
        ranking=ranking,
        winners=winners,
        discarded=list(state.discarded),
    )


Decider = Callable[[Batch[GameState, e.Event], Any], None]


def _open(decide: Decider) -> Decider:
    """``decide``, refused in a cancelled game (nothing follows a cancellation)."""

    def deciding(batch: Batch[GameState, e.Event], command: Any) -> None:
        if batch.state.phase == "cancelled":
            raise GameOver("The game was cancelled before its start.")
        decide(batch, command)

    return deciding


_DECIDERS: dict[type, Decider] = {
    c.JoinGame: _open(_join),
    c.StartGame: _open(_start),
    c.Bid: _open(_bid),
    c.Resign: _open(_resign),
    c.FinishGame: _open(_finish),
    **seating.DECIDERS,
}


def execute(
    state: GameState | None,
    command: c.Command,
    *,
    command_id: str | None = None,
    time: str | None = None,
) -> tuple[list[e.Event], GameState]:
    """Decide a command and return its events with the state after them (raises a RuleError)."""
    return RULES.execute(state, command, command_id=command_id, time=time)


def decide(state: GameState | None, command: c.Command) -> list[e.Event]:
    """Validate ``command`` against ``state``; its events, or a RuleError."""
    return execute(state, command)[0]


def public_command(command: c.Command) -> c.Command:
    """The command as provenance records it: a creation's seed and salt left out (a finish's
    are revealed by its ``GameEnded``)."""
    if isinstance(command, c.CreateGame | c.FinishGame):
        return replace(command, seed="", salt="")
    return command


def legal_actions(state: GameState, seat: int) -> list[c.Command]:
    """The bids ``seat`` may make now (none when it is not the seat the game waits for).
    Resigning is always open during the bidding and not listed (a bot never resigns)."""
    if state.to_move != seat:
        return []
    return [c.Bid(seat=seat, card=card) for card in sorted(state.hands[seat])]


# --- evolving ---------------------------------------------------------------------------------
def _seated(values: tuple[Any, ...], seat: int, value: Any) -> tuple[Any, ...]:
    return tuple(value if s == seat else old for s, old in enumerate(values))


def _revealed(state: GameState, ev: e.BidsRevealed) -> GameState:
    hands = tuple(
        tuple(x for x in hand if x != bid) for hand, bid in zip(state.hands, ev.bids, strict=True)
    )
    shown = tuple((*cards, bid) for cards, bid in zip(state.shown, ev.bids, strict=True))
    won, scores = state.won, state.scores
    if ev.winner is not None:
        won = _seated(won, ev.winner, (*won[ev.winner], *ev.pot))
        scores = _seated(scores, ev.winner, scores[ev.winner] + ev.points)
    return replace(
        state,
        hands=hands,
        shown=shown,
        won=won,
        scores=scores,
        bids=(NO_BID, NO_BID),
        discarded=(*state.discarded, *ev.pot) if ev.discarded else state.discarded,
        phase="final_scoring" if ev.turn == state.cards else state.phase,
    )


def _evolved(state: GameState, event: e.Event) -> GameState:
    match event:
        case e.PlayerJoined(seat=int(seat), name=name):
            return replace(state, names=_seated(state.names, seat, name))
        case e.GameStarted():
            hand = tuple(range(1, state.cards + 1))
            return replace(state, phase="bidding", hands=(hand, hand))
        case e.PrizeRevealed(turn=turn, pot=pot):
            return replace(state, turn=turn, pot=tuple(pot), bids=(NO_BID, NO_BID))
        case e.BidSealed(seat=int(seat), card=card):
            return replace(state, bids=_seated(state.bids, seat, card))
        case e.BidsRevealed():
            return _revealed(state, event)
        case e.PlayerResigned(seat=int(seat)):
            statuses = seating.with_status(state, seat, "resigned")
            return replace(state, phase="final_scoring", resigned=seat, statuses=statuses)
        case e.PlayerLeft() | e.GameCancelled() | e.SeatTimedOut() | e.SeatReclaimed():
            return seating.EVOLVERS[type(event)](state, event)
        case e.GameEnded():
            ranking, winners = tuple(event.ranking), tuple(event.winners)
            return replace(
                state,
                phase="finished",
                seed=event.seed,
                salt=event.salt,
                ranking=ranking,
                winners=winners,
            )
    raise InvalidCommand(f"Unknown event {type(event).__name__}.")


def evolve(state: GameState | None, event: e.Event) -> GameState:
    """The state after ``event``."""
    if isinstance(event, e.GameCreated):
        new = GameState(
            game_id=event.game_id,
            version=event.version,
            cards=event.cards,
            ties=event.ties,
            commitment=event.seed_commitment,
            prizes=tuple(event.prizes),
            chosen_seed=event.chosen_seed,
            clock=seating.started(event.clock),
        )
    elif state is None:
        raise GameNotFound("An event of a game that was never created.")
    else:
        new = seating.after_event(_evolved(state, event), event)
    return replace(new, version=event.version, last_hash=event.hash)


def _cause(command: c.Command, command_id: str | None, time: str | None) -> e.Cause:
    return e.Cause(public_command(command), command_id, time)  # type: ignore[arg-type]


def _play_on(batch: Batch[GameState, e.Event]) -> None:
    seating.play_on(batch, _bid_card)


RULES: Rulebook[GameState, c.Command, e.Event] = Rulebook(
    creation=c.CreateGame,
    create=_create,
    deciders=_DECIDERS,
    evolve=evolve,
    cause=_cause,
    after=_play_on,
)
"""Goofspiel's rules as the platform runs them (`gameplatform.execution`)."""
