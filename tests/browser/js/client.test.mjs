// @renature/client under Node against the real stack (RENATURE_URL), run by
// tests/browser/test_js_client_node.py: whole games, a lost answer, a 429, a dropped channel.
import assert from "node:assert/strict";
import { test } from "node:test";
import { GameClient, LobbyClient, NotFound, Refused, newId } from "../../../services/gameserver/gateway/static/client/index.js";
import { playWholeGame, seatAll } from "../../../services/gameserver/gateway/static/client/examples/autoplay.js";

const baseUrl = process.env.RENATURE_URL;
assert.ok(baseUrl, "RENATURE_URL names the stack");

/** Versions 1..last, each once and in order. */
function assertGapless(versions, last) {
  assert.deepEqual(versions, Array.from({ length: last }, (_, i) => i + 1));
}

/** A started game of `name` with every seat taken; answers the seats' clients. */
async function startedGame(lobby, name) {
  return (await seatAll(lobby, name)).seats;
}

/** The seat whose turn it is, with its legal commands. */
async function onTurn(seats) {
  for (const seat of seats) {
    const legal = await seat.legalActions();
    if (legal.length) return { seat, legal };
  }
  throw new Error("nobody may move");
}

test("every hosted game is played to its end through the client, every frame once and in order", async () => {
  for (const game of await new LobbyClient({ baseUrl }).catalog()) {
    const { table, delivered } = await playWholeGame({ baseUrl, game: game.name });
    assert.equal(table.over, true, `${game.name} is over`);
    assert.ok(table.winners.length >= 1);
    for (const versions of delivered) assertGapless(versions, table.version);
  }
});

test("a command whose answer is lost is sent again with its id and applied once", async () => {
  const posts = [];
  let dropped = false;
  const fetchLosingOneAnswer = async (url, init) => {
    const response = await fetch(url, init);
    if (String(url).endsWith("/commands")) {
      posts.push(JSON.parse(init.body));
      if (!dropped) { dropped = true; await response.text(); throw new TypeError("fetch failed: the connection was reset"); }
    }
    return response;
  };
  const lobby = new LobbyClient({ baseUrl, fetch: fetchLosingOneAnswer });
  const seats = await startedGame(lobby, "renature");
  const { seat, legal } = await onTurn(seats);
  const before = (await seat.summary()).version;
  const accepted = await seat.send(legal[0]);
  assert.equal(posts.length, 2, "sent twice");
  assert.equal(posts[0].command_id, posts[1].command_id, "with one command id");
  assert.deepEqual(posts[0].command, posts[1].command);
  assert.equal(accepted.first_version, before + 1);
  const events = await seat.events(before);
  assert.equal(events.length, accepted.last_version - before, "its events once, nothing more");
  assert.deepEqual(events.map((e) => e.version), Array.from(events, (_, i) => before + 1 + i));
  // The same id with another command is no retry: refused, typed, with the API's code.
  const other = (await seat.legalActions()).find((c) => JSON.stringify(c) !== JSON.stringify(legal[0]));
  if (other) await assert.rejects(seat.send(other, { commandId: posts[0].command_id }), (e) => e instanceof Refused && e.code === "command_id_reused");
});

test("a 429 is waited out as Retry-After says and the requests then succeed", async () => {
  const waits = [];
  const lobby = new LobbyClient({ baseUrl, onWait: (wait) => waits.push(wait) });
  const created = await lobby.create({ players: 2 });
  const spectator = lobby.game(created.game_id);
  // Spectator reads are held to the address's read rate (a few a second in this stack).
  const summaries = await Promise.all(Array.from({ length: 12 }, () => spectator.summary()));
  assert.ok(summaries.every((s) => s.game_id === created.game_id));
  assert.ok(waits.some((w) => w.status === 429 && w.seconds >= 1), `waited a 429 out: ${JSON.stringify(waits)}`);
});

test("a typed error with the API's code; nothing changes", async () => {
  const lobby = new LobbyClient({ baseUrl });
  await assert.rejects(lobby.game(newId()).summary(), (e) => e instanceof NotFound && e.code === "game_not_found" && e.status === 404);
  const seats = await startedGame(lobby, "renature");
  const { seat } = await onTurn(seats);
  const waiting = seats.find((s) => s !== seat);
  const version = (await waiting.summary()).version;
  await assert.rejects(waiting.send({ type: "EndTurn" }), (e) => e instanceof Refused && e.status === 409 && e.code === "not_your_turn");
  assert.equal((await waiting.summary()).version, version);
});

test("a live channel cut mid-stream resumes after the last version: no gap, no duplicate", async () => {
  let streams = 0;
  const cutting = async (url, init) => {
    const response = await fetch(url, init);
    if (!String(url).includes("/events/stream") || response.status !== 200) return response;
    streams += 1;
    let chunks = 0;
    // Every connection is cut after a few chunks, as a flaky network would.
    const cut = new TransformStream({
      transform(chunk, controller) {
        chunks += 1;
        if (chunks > 12) controller.error(new TypeError("terminated"));
        else controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(cut), { status: 200, headers: response.headers });
  };
  const lobby = new LobbyClient({ baseUrl });
  const seats = await startedGame(lobby, "renaissance");
  const watcher = new GameClient(seats[0].gameId, { baseUrl, fetch: cutting });
  const seen = [];
  const channel = watcher.live({ transport: "sse", onFrame: (frame) => seen.push(frame.version) });
  const { table } = await playOn(seats);
  assert.equal(await channel.done, "ended");
  assert.ok(streams >= 3, `reconnected (${streams} streams)`);
  assertGapless(seen, table.version);
});

/** Plays a started game to its end, the seat on turn choosing its first legal command. */
async function playOn(seats) {
  for (;;) {
    const table = await seats[0].table();
    if (table.over) return { table };
    const { seat, legal } = await onTurn(seats);
    await seat.send(legal[Math.floor(Math.random() * legal.length)]);
  }
}

test("a channel whose frames were taken back ends with history_rewound, sent nothing more", async () => {
  const lobby = new LobbyClient({ baseUrl });
  const seats = await startedGame(lobby, "renaissance");
  // The server's answer once its store came back without the last writes (docs/http-api.md):
  // the frames it had sent, then `event: history_rewound`. Sent here by a stand-in fetch.
  const rewound = async (url, init) => {
    if (!String(url).includes("/events/stream")) return fetch(url, init);
    const error = { error: { code: "history_rewound", message: "Events this channel sent were taken back." } };
    const body = `id: 1\nevent: GameCreated\ndata: {"version": 1}\n\nevent: history_rewound\ndata: ${JSON.stringify(error)}\n\n`;
    return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
  };
  const watcher = new GameClient(seats[0].gameId, { baseUrl, fetch: rewound });
  const seen = [];
  const errors = [];
  const channel = watcher.live({ transport: "sse", onFrame: (frame) => seen.push(frame.version), onError: (e) => errors.push(e) });
  assert.equal(await channel.done, "closed");
  assert.deepEqual(seen, [1]);
  assert.equal(errors.length, 1);
  assert.ok(errors[0] instanceof Refused);
  assert.equal(errors[0].code, "history_rewound");
  assert.equal(errors[0].status, 409);
});
