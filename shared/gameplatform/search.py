"""A search bot for every game: single-observer information-set Monte Carlo tree search
(SO-ISMCTS; Cowling, Powley and Whitehouse, "Information Set Monte Carlo Tree Search", IEEE
TCIAIG 4(2), 2012), through the platform interface only.

Each iteration draws a determinization: a whole state consistent with what the searching seat
sees, the hidden rest sampled by the game (``Game.determinize``, the state itself in a game
without hidden information). It then walks one tree of the seat's information set: at every
node only the children whose action is legal in this determinization are candidates, chosen by
UCB1 with availability counts (a child's exploration term counts the visits of its parent in
which it was available), and progressive widening limits how many children a node tries. A new
node is expanded (the rollout policy's choice first), a short rollout is played from it (the
game's own bot, e.g. ``greedy``, or uniformly random moves) and the position it reaches is
valued: a finished game by its winners, an unfinished one by the
game's heuristic (``Game.evaluate``: current scores plus what is already decided), so a rollout
never has to play a long game out. Every node on the path adds the value of the seat that moved
into it. The bot plays the root's most visited action.

In a game of simultaneous sealed moves a searched opponent would reply knowing the searcher's
sealed move; ``Budget.opponent_model`` models the other seats instead (the rollout policy's
choice with a stated probability, else a uniform legal action), in the tree and in rollouts,
and the tree keeps the searching seat's own moves only (see ``Budget``).

Pure, as the games are: its only randomness is its own ``random.Random`` seeded from the bot's
seed, the budget is a number of iterations (the same seed and budget give the same choice), and
the clock stays with the caller: ``choose_within`` asks a caller's ``keep_going`` before each
iteration, so a service or the CLI can bound it by time.

A rollout that reaches the end of a game with a finishing command (Renature's seed reveal)
applies ``finishing_command(state, FINISH_SEED)``: each determinization is committed to that
made-up seed, so the finish is accepted without the real, secret one.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import msgspec

from gameplatform.chain import Event
from gameplatform.interface import Game, HostedState, Table

NAME = "mcts"
"""The bot's name in every game's ``bot_names``."""

FINISH_SEED = "search-rollout"
"""The seed every determinization is committed to, revealed by a rollout's finishing command."""


@dataclass(frozen=True)
class Budget:
    """How hard the bot thinks: ``iterations`` per decision, ``rollout_depth`` moves after each
    new node (by the game's bot ``rollout_policy``, or uniformly random for ``random``) before
    the heuristic values the position, UCB1's ``exploration`` constant (values lie in [0, 1])
    and progressive ``widening``: a node visited n times has at most ``widening * sqrt(n + 1)``
    children (available in the determinization), the rollout policy's choice first, so that
    a few iterations compare that choice with some others rather than each of many once."""

    iterations: int = 60
    rollout_depth: int = 4
    rollout_policy: str = "greedy"
    exploration: float = 0.3
    widening: float = 1.0
    opponent_model: float | None = None
    """None: every seat's decisions in the tree are searched (UCB1), as in SO-ISMCTS. A weight
    w in [0, 1]: the other seats are not searched but modelled, in the tree and in rollouts,
    each decision the rollout policy's choice with probability w, else a legal action drawn
    uniformly; the tree then has nodes for the searching seat's own actions only (open loop
    over the others' moves). For games with simultaneous sealed moves: a searched opponent
    would choose knowing the searcher's sealed move, a modelled one reads only its own view."""


DEFAULT_BUDGET = Budget()
"""The budget of a game's ``mcts`` bot unless the game names its own (``search_budget``)."""


def margin_values(points: Sequence[float], scale: float) -> list[float]:
    """Each seat's value in [0, 1] from points: 0.5 at par with the best other seat, nearer 1
    the further ahead (``scale`` points ahead is about 0.88)."""
    values = []
    for seat, own in enumerate(points):
        best_other = max((p for other, p in enumerate(points) if other != seat), default=own)
        values.append(0.5 + 0.5 * math.tanh((own - best_other) / scale))
    return values


def result_values(table: Table) -> list[float]:
    """A finished game's value for each seat: a win 1, a win shared by k seats 1/k, a loss 0."""
    winners = table.winners
    return [1.0 / len(winners) if seat in winners else 0.0 for seat in range(table.players)]


def action_key(action: msgspec.Struct) -> bytes:
    """An action as the tree knows it: its JSON (tagged commands of different kinds differ)."""
    return msgspec.json.encode(action)


S = TypeVar("S", bound=HostedState)
C = TypeVar("C", bound=msgspec.Struct)
E = TypeVar("E", bound=Event)


class _Node:
    __slots__ = ("availability", "children", "mover", "total", "visits")

    def __init__(self, mover: int) -> None:
        self.mover = mover
        """The seat that made the move into this node (whose value it adds up)."""
        self.children: dict[bytes, _Node] = {}
        self.visits = 0
        self.availability = 0
        self.total = 0.0

    def ucb(self, exploration: float) -> float:
        mean = self.total / self.visits
        return mean + exploration * math.sqrt(math.log(self.availability) / self.visits)


class SearchBot(Generic[S, C, E]):
    """The ISMCTS bot of one seat of ``game`` (see the module docstring)."""

    def __init__(self, game: Game[S, C, E], seed: str, budget: Budget | None = None) -> None:
        self.game = game
        self.budget = budget or DEFAULT_BUDGET
        self.rng = random.Random(seed)
        self.policy = (
            None
            if self.budget.rollout_policy == "random"
            else game.make_bot(self.budget.rollout_policy, f"{seed}|rollout")
        )

    def choose(self, state: S, seat: int) -> C:
        """The action to play, after ``budget.iterations`` iterations."""
        iterations = self.budget.iterations
        return self.choose_within(state, seat, lambda done: done < iterations)

    def choose_within(self, state: S, seat: int, keep_going: Callable[[int], bool]) -> C:
        """The action to play, searching while ``keep_going(iterations done)`` (at least one
        iteration). A seat with a single legal action plays it without a search."""
        start = self.game.determinize(state, seat, self.rng, FINISH_SEED)
        legal = self.game.legal_actions(start, seat)
        if not legal:
            raise ValueError(f"seat {seat} has no legal action now")
        if len(legal) == 1:
            return legal[0]
        root = _Node(mover=seat)
        by_key = {action_key(action): action for action in legal}
        done = 0
        while done == 0 or keep_going(done):
            self._iterate(root, state, seat, by_key)
            done += 1
        ranked = sorted(
            (key for key in root.children if key in by_key),
            key=lambda key: (root.children[key].visits, root.children[key].total),
            reverse=True,
        )
        return by_key[ranked[0]] if ranked else legal[0]

    def _iterate(self, root: _Node, state: S, seat: int, at_root: dict[bytes, C]) -> None:
        """One iteration. ``at_root`` are the seat's legal actions now: a seat knows what it may
        do, so they are the same in every determinization and are listed once per decision."""
        game = self.game
        position = self._settled(game.determinize(state, seat, self.rng, FINISH_SEED))
        node, path = root, [root]
        while not game.is_over(position):
            mover = game.to_move(position)
            if mover is None:
                break
            if mover != seat and self.budget.opponent_model is not None:
                position = self._play(position, self._modelled(position, mover))
                continue
            actions = (
                at_root
                if node is root and mover == seat
                else {action_key(a): a for a in game.legal_actions(position, mover)}
            )
            for key in actions:
                if key in node.children:
                    node.children[key].availability += 1
            key = self._select(node, position, mover, actions)
            if key not in node.children:
                node.children[key] = child = _Node(mover)
                child.availability = 1
                path.append(child)
                position = self._play(position, actions[key])
                break
            node = node.children[key]
            path.append(node)
            position = self._play(position, actions[key])
        values = self._value(self._rollout(position, seat))
        for visited in path:
            visited.visits += 1
            visited.total += values[visited.mover]

    def _select(self, node: _Node, position: S, mover: int, actions: dict[bytes, C]) -> bytes:
        """The child to follow: a new one while the node may widen (the rollout policy's choice
        in this determinization if untried, else a random one), else the available child of
        the best UCB1. Asking the policy once per node instead saved little time and cost much
        of Renature's strength (58% of 60 games against greedy, from 82%): at another seat's
        node each determinization deals another hand, and the policy's choice in it is the
        likeliest reply still untried."""
        tried = [key for key in actions if key in node.children]
        untried = [key for key in actions if key not in node.children]
        width = math.ceil(self.budget.widening * math.sqrt(node.visits + 1))
        if untried and (not tried or len(tried) < width):
            if self.policy is not None:
                preferred = action_key(self.policy.choose(position, mover))
                if preferred in untried:
                    return preferred
            return self.rng.choice(untried)
        exploration = self.budget.exploration
        return max(tried, key=lambda key: node.children[key].ucb(exploration))

    def _rollout(self, position: S, seat: int) -> S:
        game = self.game
        for _ in range(self.budget.rollout_depth):
            if game.is_over(position):
                break
            mover = game.to_move(position)
            if mover is None:
                break
            if self.budget.opponent_model is not None and mover != seat:
                action = self._modelled(position, mover)
            elif self.policy is None:
                action = self.rng.choice(game.legal_actions(position, mover))
            else:
                action = self.policy.choose(position, mover)
            position = self._play(position, action)
        return position

    def _modelled(self, position: S, mover: int) -> C:
        """Another seat's action by ``opponent_model``: the rollout policy's choice with
        probability w, else a legal action drawn uniformly (one draw of the bot's rng each)."""
        weight = self.budget.opponent_model or 0.0
        if self.policy is not None and self.rng.random() < weight:
            return self.policy.choose(position, mover)
        return self.rng.choice(self.game.legal_actions(position, mover))

    def _play(self, position: S, action: C) -> S:
        return self._settled(self.game.execute(position, action)[1])

    def _settled(self, position: S) -> S:
        """The position after the command the game owes itself now, if any (the finish)."""
        finish = self.game.finishing_command(position, FINISH_SEED)
        return position if finish is None else self.game.execute(position, finish)[1]

    def _value(self, position: S) -> list[float]:
        if self.game.is_over(position):
            return result_values(self.game.table(position))
        return self.game.evaluate(position)
