// The reference peer's game: a grid game with secret hands, about as much work per move as a
// Renature placement. 2 to 4 players share a 24x24 grid and a face-down deck of 72 tiles
// (shuffled by boardgame.io's seeded random); each holds a secret hand of 3 tiles. On a turn a
// player places one tile of the hand on an empty cell (cells are a map of the placed ones) next to a placed tile (the first tile
// goes in the centre), scores one point per orthogonal neighbour of the same colour and draws.
// The game ends when every tile is placed. The player view keeps other hands and the deck
// secret, as Renature's views do.
'use strict';

const SIZE = 24;
const COLOURS = 4;
const DECK = 72;
const HAND = 3;

function neighbours(cell) {
  const x = cell % SIZE;
  const y = Math.floor(cell / SIZE);
  const out = [];
  if (x > 0) out.push(cell - 1);
  if (x < SIZE - 1) out.push(cell + 1);
  if (y > 0) out.push(cell - SIZE);
  if (y < SIZE - 1) out.push(cell + SIZE);
  return out;
}

function legalCells(G) {
  if (G.placed === 0) return [Math.floor(SIZE / 2) * SIZE + Math.floor(SIZE / 2)];
  const out = new Set();
  for (const cell of Object.keys(G.cells)) {
    for (const n of neighbours(Number(cell))) if (G.cells[n] === undefined) out.add(n);
  }
  return [...out].sort((a, b) => a - b);
}

const INVALID_MOVE = 'INVALID_MOVE';

const GridGame = {
  name: 'grid',
  minPlayers: 2,
  maxPlayers: 4,

  setup: ({ ctx, random }) => {
    const deck = random.Shuffle(Array.from({ length: DECK }, (_, i) => i % COLOURS));
    const hands = {};
    const scores = {};
    for (let p = 0; p < ctx.numPlayers; p++) {
      hands[p] = deck.splice(0, HAND);
      scores[p] = 0;
    }
    return { cells: {}, placed: 0, deck, hands, scores };
  },

  playerView: ({ G, playerID }) => {
    const hands = {};
    for (const p of Object.keys(G.hands)) {
      hands[p] = p === String(playerID) ? G.hands[p] : G.hands[p].map(() => null);
    }
    return { ...G, deck: G.deck.length, hands };
  },

  moves: {
    place: {
      // Decided by the server only: the client waits for the server's answer, as a Renature
      // client waits for the rules service.
      client: false,
      move: ({ G, ctx, playerID }, handIndex, cell) => {
        const hand = G.hands[playerID];
        if (!Number.isInteger(handIndex) || handIndex < 0 || handIndex >= hand.length) {
          return INVALID_MOVE;
        }
        if (!legalCells(G).includes(cell)) return INVALID_MOVE;
        const colour = hand[handIndex];
        hand.splice(handIndex, 1);
        G.cells[cell] = { colour, player: Number(playerID) };
        G.placed += 1;
        G.scores[playerID] += neighbours(cell).filter(
          (n) => G.cells[n] !== undefined && G.cells[n].colour === colour,
        ).length;
        if (G.deck.length > 0) hand.push(G.deck.shift());
      },
    },
  },

  turn: { minMoves: 1, maxMoves: 1 },

  endIf: ({ G, ctx }) => {
    if (G.placed < DECK) return undefined;
    let best = -1;
    let winners = [];
    for (let p = 0; p < ctx.numPlayers; p++) {
      if (G.scores[p] > best) {
        best = G.scores[p];
        winners = [String(p)];
      } else if (G.scores[p] === best) winners.push(String(p));
    }
    return { winners, scores: G.scores };
  },
};

module.exports = { GridGame, legalCells, SIZE, DECK };
