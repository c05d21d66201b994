// The reference peer's load: GAMES concurrent grid games against server.js, every seat its own
// boardgame.io client on its own socket.io connection (as a browser would), one move in flight
// per game. A move's round trip runs from `moves.place` until the mover's client holds the
// server's next state (the move is decided by the server only: `client: false`).
// Every game is set up before the window, which counts moves only, as the player's path's does
// (bench/spares.py): before it prints `ready` the client sets up a pool of spare matches shared by
// its games, as a game is set up (created, every seat joined, every seat's client connected and
// holding the first state), 16 at a time; from the warm-up's start a game that ends takes the
// next spare, and only when none is left does it set up a match itself, counted where that fell
// inside the window (`set_ups_in_window`). The spares never taken are stopped at the end.
// With MODE `setup`, games are set up and left before their first move instead (created, every
// seat joined, every seat's client connected and holding the first state), each counted as a
// move is, its round trip the whole set-up: what a game costs before it is played (no spares).
// node client.js PORT GAMES WARMUP_S WINDOW_S SPARES [MODE]  ->  one JSON line on stdout
// (SPARES: the pool's size, bench/spares.py's `peer_pool`)
'use strict';

const http = require('http');
const { Client } = require('boardgame.io/client');
const { SocketIO } = require('boardgame.io/multiplayer');
const { GridGame, legalCells } = require('./game');

const [port, games, warmupS, windowS, spareCount] = process.argv.slice(2, 7).map(Number);
const setupOnly = process.argv[7] === 'setup';
const server = `http://127.0.0.1:${port}`;

function post(path, body) {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(
      `${server}${path}`,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } },
      (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => (res.statusCode < 300 ? resolve(JSON.parse(text)) : reject(new Error(`${res.statusCode} ${text}`))));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

function watcher(client) {
  // Resolves waits on the client's state: wait(pred) -> the first state satisfying pred.
  const waits = [];
  client.subscribe((state) => {
    if (!state) return;
    for (let i = waits.length - 1; i >= 0; i--) {
      if (waits[i].pred(state)) {
        waits[i].resolve(state);
        waits.splice(i, 1);
      }
    }
  });
  return (pred, timeoutMs = 10000) => {
    const now = client.getState();
    if (now && pred(now)) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      const wait = { pred, resolve };
      waits.push(wait);
      setTimeout(() => {
        const i = waits.indexOf(wait);
        if (i >= 0) {
          waits.splice(i, 1);
          reject(new Error('no state in time'));
        }
      }, timeoutMs);
    });
  };
}

const stats = {
  window: [Infinity, Infinity],
  moves: 0,
  movesTotal: 0,
  games: 0,
  endedInWindow: 0, // games that ended inside the window, each followed by a spare
  setUpsInWindow: 0, // matches set up inside the window (the spares ran out)
  rtts: [],
  failures: 0, // games abandoned after a move got no answer in 10 s
};
let stopping = false;
let playing = 0; // games set up (created, seats joined, clients connected)

const SPARES_AT_ONCE = 16;
const spares = []; // the seats of each spare match, in the order they were set up
let sparesOpen = false; // from the warm-up's start
let openSpares = () => {};
const sparesOpened = new Promise((resolve) => (openSpares = resolve));

async function fillSpares(size) {
  let next = 0;
  const settingUp = async () => {
    while (next < size) {
      const number = next++;
      spares.push(await openGame(2 + (number % 3)));
    }
  };
  await Promise.all(Array.from({ length: Math.min(SPARES_AT_ONCE, size) }, settingUp));
}

function inWindow(at) {
  return at >= stats.window[0] && at < stats.window[1];
}

async function openGame(players) {
  const { matchID } = await post('/games/grid/create', { numPlayers: players });
  const seats = [];
  for (let p = 0; p < players; p++) {
    const { playerCredentials } = await post(`/games/grid/${matchID}/join`, {
      playerID: String(p),
      playerName: `p${p}`,
    });
    const client = Client({
      game: GridGame,
      numPlayers: players,
      matchID,
      playerID: String(p),
      credentials: playerCredentials,
      multiplayer: SocketIO({ server }),
      debug: false,
    });
    client.start();
    seats.push({ client, wait: watcher(client) });
  }
  // Hundreds of matches connecting at once take a while on a busy machine.
  for (const seat of seats) await seat.wait((s) => s.ctx !== undefined, 120000);
  return seats;
}

function counted(sent) {
  const done = performance.now();
  stats.movesTotal += 1;
  if (inWindow(done)) stats.moves += 1;
  if (inWindow(sent)) stats.rtts.push(done - sent);
}

async function playGames(index) {
  let first = true;
  while (!stopping) {
    let seats = [];
    try {
      // A game that ends before the warm-up waits for it and a spare: set up now, while
      // hundreds of matches are still being set up, its set-up may run on into the window.
      if (!first && !sparesOpen && spares.length) await sparesOpened;
      if (stopping) break;
      const sent = performance.now();
      const spare = !first && sparesOpen ? spares.shift() : undefined;
      seats = spare || (await openGame(2 + (index % 3)));
      // A set-up of its own inside the window (any of it), once the spares ran out.
      if (!spare && !setupOnly && sent < stats.window[1] && performance.now() >= stats.window[0]) {
        stats.setUpsInWindow += 1;
      }
      if (first) playing += 1;
      first = false;
      if (setupOnly) counted(sent);
      else await playOne(seats);
    } catch (error) {
      stats.failures += 1; // a move without an answer in 10 s: reported, another game starts
    } finally {
      for (const seat of seats) seat.client.stop();
    }
  }
}

async function playOne(seats) {
  let state = seats[0].client.getState();
  while (!stopping && state.ctx.gameover === undefined) {
    const mover = seats[Number(state.ctx.currentPlayer)];
    const id = state._stateID;
    const mine = await mover.wait((s) => s._stateID >= id);
    const cells = legalCells(mine.G);
    const sent = performance.now();
    mover.client.moves.place(0, cells[(id * 7) % cells.length]);
    state = await mover.wait((s) => s._stateID > id);
    counted(sent);
  }
  if (state.ctx.gameover !== undefined) {
    stats.games += 1;
    if (inWindow(performance.now())) stats.endedInWindow += 1;
  }
}

function percentile(sorted, q) {
  if (!sorted.length) return null;
  const rank = Math.max(0, Math.min(sorted.length - 1, Math.round((q / 100) * sorted.length + 0.5) - 1));
  return sorted[rank];
}

async function main() {
  if (!setupOnly) await fillSpares(spareCount);
  const tasks = Array.from({ length: games }, (_, i) => playGames(i));
  // Every game set up before the window (at most 120 s): it measures moves, not the set-up
  // of hundreds of matches at once. "ready" tells the bench when the warm-up starts, and the
  // spares are taken from then on.
  const setUpUntil = performance.now() + 120000;
  while (playing < games && performance.now() < setUpUntil) {
    await new Promise((r) => setTimeout(r, 50));
  }
  process.stdout.write('ready\n');
  sparesOpen = !setupOnly;
  openSpares();
  await new Promise((r) => setTimeout(r, warmupS * 1000));
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  stats.window = [start, start + windowS * 1000];
  const total0 = stats.movesTotal;
  await new Promise((r) => setTimeout(r, windowS * 1000));
  const cpu = process.cpuUsage(cpu0);
  const total = stats.movesTotal - total0;
  stopping = true;
  await Promise.race([Promise.allSettled(tasks), new Promise((r) => setTimeout(r, 10000))]);
  for (const seats of spares.splice(0)) for (const seat of seats) seat.client.stop();
  const rtts = stats.rtts.sort((a, b) => a - b);
  const line =
    JSON.stringify({
      moves: stats.moves,
      moves_total: total,
      games_finished: stats.games,
      ended_in_window: stats.endedInWindow,
      set_ups_in_window: stats.setUpsInWindow,
      p50_ms: percentile(rtts, 50),
      p99_ms: percentile(rtts, 99),
      samples: rtts.length,
      round_trips: rtts.map((x) => x / 1000),
      client_cpu_s: (cpu.user + cpu.system) / 1e6,
      failures: stats.failures,
    }) + '\n';
  // A pipe takes a long line in pieces: exit once all of it is written.
  process.stdout.write(line, () => process.exit(0));
}

main().catch((error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
