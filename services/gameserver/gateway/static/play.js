// The table of any hosted game: the board (the game's own picture from the server), the seats
// and their scores, your legal moves in words as buttons, the clock, the log in words, live over
// the WebSocket with reconnection from the last version seen. A game may bring its own module
// (static/games/<name>.js, named by the catalog) to draw more of itself: Renature's lays
// dominoes on the board's spaces; any other game is played whole from the generic parts here.
"use strict";
const { api, ApiError, seats, newId, el, loadPicture, showError, clientOf, colourOf } = window.Renature;

const gameId = decodeURIComponent(location.pathname.split("/").filter(Boolean)[1] || "");
const params = new URLSearchParams(location.search);
const $ = (id) => document.getElementById(id);
const errorBox = $("error");
const statusBox = $("status");

const table = {
  seat: seats.get(gameId),
  game: null, // the game's name, from its summary
  client: null, // the game's own module, null for the generic table
  summary: null,
  view: null,
  facts: null, // the table's public facts (GET /games/{id}/table): seats, scores, whose turn
  moves: [], // your legal moves, each a command and its words
  legal: [],
  colours: [],
  version: 0, // the last event in the log
  socket: null,
  retry: 0,
  refreshing: null,
  stale: false,
  sending: false,
  over: false,
};
window.table = table; // for the browser tests and the curious

function token() {
  return table.seat ? table.seat.token : null;
}

// One refresh at a time; a refresh asked for while one runs runs again after it, so what is
// shown is never older than the last event or command.
async function refresh() {
  table.stale = true;
  if (table.refreshing) return table.refreshing;
  table.refreshing = (async () => {
    while (table.stale) {
      table.stale = false;
      await refreshOnce();
    }
  })().finally(() => { table.refreshing = null; });
  return table.refreshing;
}

async function refreshOnce() {
  {
    try {
      // The summary (who has joined) matters before the start, and for its clock in a game
      // whose view shows none of its own.
      if (!table.view || table.view.phase === "lobby" || !("clock" in table.view)) {
        table.summary = await api("GET", `/games/${gameId}`);
      }
      const seated = table.seat !== null;
      table.view = seated
        ? await api("GET", `/games/${gameId}/view`, { token: token() })
        : await api("GET", `/games/${gameId}/spectator`);
      table.facts = await api("GET", `/games/${gameId}/table`);
      table.moves = seated && table.facts.started
        ? await api("GET", `/games/${gameId}/moves`, { token: token() })
        : [];
      table.legal = table.moves.map((move) => move.command);
      table.colours = table.facts.colours;
      await loadPicture($("board"), `/games/${gameId}/picture.svg`);
      render();
    } catch (error) {
      if (error instanceof ApiError && error.code === "invalid_token") {
        seats.forget(gameId);
        table.seat = null;
      }
      showError(errorBox, error);
    }
  }
}

function render() {
  const view = table.view;
  const facts = table.facts;
  table.over = facts.over || view.phase === "cancelled";
  $("viewer-link").href = `/viewer/${gameId}`;
  statusBox.textContent = statusLine(facts);
  renderSeating(view);
  (table.client && table.client.renderPlayers ? table.client.renderPlayers : renderPlayers)(view);
  $("clock").textContent = clockLine(clockOf());
  $("resign").hidden = !table.seat || !facts.started || table.over;
  if (table.client && table.client.renderMoves) table.client.renderMoves(view);
  else renderMoves();
}

function statusLine(facts) {
  if (!facts.started) return "Waiting for players.";
  const phase = facts.phase.replace(/_/g, " ");
  if (facts.over) {
    return `The game is over. Winner(s): ${facts.winners.map((w) => table.colours[w]).join(", ")}.`;
  }
  if (table.over) return `The game ended (${phase}).`;
  const current = facts.current;
  const mine = table.seat && current === table.seat.seat;
  return mine ? `Your turn (${table.colours[current]}): ${phase}.`
    : `${table.colours[current] || "Nobody"} is playing (${phase}).`;
}

function renderSeating(view) {
  const section = $("seating");
  section.hidden = view.phase !== "lobby";
  if (section.hidden) return;
  const code = (table.seat && table.seat.invite) || params.get("code");
  const link = `${location.origin}/play/${gameId}${code ? `?code=${encodeURIComponent(code)}` : ""}`;
  $("invite").replaceChildren("Invite a friend with this link: ", el("code", {}, link));
  const open = $("open-seats");
  open.replaceChildren();
  const joined = new Set(table.summary.seats_joined || []);
  const byInvitation = table.summary.seating === "invite";
  $("code-label").hidden = !byInvitation;
  if (params.get("code")) document.querySelector("#take-seat [name=code]").value = params.get("code");
  const host = table.seat && table.seat.host;
  $("cancel").hidden = !host;
  $("leave").hidden = !table.seat || Boolean(host);
  const seatList = $("lobby-seats");
  seatList.replaceChildren();
  for (const seat of table.summary.seats || []) {
    seatList.append(el("li", {}, `Seat ${seat.seat} (${seat.colour}): ${seat.name || "free"}`,
      host && seat.name && seat.seat !== table.seat.seat
        ? [" ", el("button", { type: "button", onclick: () => lobbyAction("DELETE", `/games/${gameId}/seats/${seat.seat}`, host) }, `Remove ${seat.name}`)]
        : []));
  }
  if (!table.seat) {
    for (let seat = 0; seat < table.facts.players; seat += 1) {
      if (!joined.has(seat)) {
        open.append(el("button", { type: "button", onclick: () => takeSeat(seat) }, `Take seat ${seat} (${table.colours[seat]})`));
      }
    }
  } else {
    open.append(el("span", {}, `You hold seat ${table.seat.seat} (${table.colours[table.seat.seat]}).`));
  }
  $("start").hidden = !(table.seat && joined.size === table.facts.players);
}

async function takeSeat(seat) {
  const form = new FormData($("take-seat"));
  const body = { name: form.get("name") || "Player" };
  const headers = { "Idempotency-Key": newId() };
  if (form.get("code")) body.invite = form.get("code");
  try {
    const joined = await api("POST", `/games/${gameId}/seats/${seat}`, { body, headers });
    table.seat = { seat, token: joined.token };
    seats.set(gameId, table.seat);
    errorBox.hidden = true;
    connect(true);
    await refresh();
  } catch (error) {
    showError(errorBox, error);
  }
}

async function lobbyAction(method, path, credential) {
  try {
    await api(method, path, { token: credential });
    errorBox.hidden = true;
    await refresh();
    return true;
  } catch (error) {
    showError(errorBox, error);
    return false;
  }
}

$("start").addEventListener("click", () => lobbyAction("POST", `/games/${gameId}/start`, token()));
$("cancel").addEventListener("click", () => lobbyAction("POST", `/games/${gameId}/cancel`, table.seat.host));
$("leave").addEventListener("click", async () => {
  if (await lobbyAction("DELETE", `/games/${gameId}/seats/${table.seat.seat}`, token())) {
    seats.forget(gameId);
    table.seat = null;
    await refresh();
  }
});
$("resign").addEventListener("click", async () => {
  if (confirm("Resign this game? Your seat leaves the game for good.")) {
    await lobbyAction("POST", `/games/${gameId}/resign`, token());
  }
});

// The generic players: each seat's colour, player, score and standing, whose turn it is.
function renderPlayers() {
  const facts = table.facts;
  const list = $("players");
  list.replaceChildren();
  facts.colours.forEach((colour, number) => {
    const current = number === facts.current && !facts.over;
    const standing = facts.statuses[number] && facts.statuses[number] !== "playing" ? ` (${facts.statuses[number]})` : "";
    list.append(el("li", { "data-seat": number, "aria-current": current ? "true" : null },
      current ? "▶ " : "",
      el("strong", {}, colour), ` ${facts.names[number] || "(open)"}: ${points(facts.scores[number] ?? 0)}${standing}`,
      facts.winners.includes(number) && facts.over ? ", winner" : "",
      table.seat && table.seat.seat === number ? " (you)" : ""));
  });
}

function points(score) {
  return Math.abs(score) === 1 ? `${score} point` : `${score} points`;
}

// The generic moves: every legal move in the game's words, one button each, narrowed by a
// filter when there are many (a set-up may offer a thousand placements).
// The moves section, emptied; null (and the section hidden) when the reader has no move.
function movesBox() {
  const section = $("moves-section");
  section.hidden = !table.seat || !table.legal.length;
  const box = $("moves");
  box.replaceChildren();
  return section.hidden ? null : box;
}

function renderMoves() {
  const box = movesBox();
  if (!box) return;
  const filter = $("move-filter");
  const many = table.moves.length > 12;
  $("move-filter-label").hidden = !many;
  const wanted = many ? filter.value.trim().toLowerCase() : "";
  const shown = table.moves.filter((move) => !wanted || move.text.toLowerCase().includes(wanted));
  $("prompt").textContent = `Choose a move (${shown.length} of ${table.moves.length}):`;
  for (const move of shown) {
    box.append(el("button", { type: "button", class: "move", "data-type": move.command.type, onclick: () => send(move.command) }, move.text));
  }
}
$("move-filter").addEventListener("input", () => { if (!table.client || !table.client.renderMoves) renderMoves(); });

function clockLine(clock) {
  if (!clock) return "";
  const kind = clock.per_turn ? `${clock.per_turn} s a turn` : `${clock.total} s + ${clock.increment} s a turn`;
  if (clock.running_for === null || clock.running_for === undefined || !clock.deadline) return `Clock: ${kind}.`;
  const left = Math.max(0, Math.round((Date.parse(clock.deadline) - Date.now()) / 1000));
  return `Clock: ${kind}; ${table.colours[clock.running_for]} has ${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")} left` +
    ` (then ${clock.on_timeout === "bot" ? "a bot plays on" : "the seat is out"}).`;
}
setInterval(() => { if (table.view) $("clock").textContent = clockLine(clockOf()); }, 1000);

// The turn clock: the view's where the game shows one, else the game's summary's.
function clockOf() {
  return table.view && table.view.clock ? table.view.clock : (table.summary && table.summary.clock) || null;
}

async function send(command) {
  if (table.sending) return; // one command at a time: a second click waits for the answer
  table.sending = true;
  for (const target of document.querySelectorAll("#board .legal, #moves button")) {
    if (target.tagName === "BUTTON") target.disabled = true; else target.remove();
  }
  const body = { command_id: newId(), command };
  for (let attempt = 0; ; attempt += 1) {
    try {
      await api("POST", `/games/${gameId}/commands`, { body, token: token() });
      errorBox.hidden = true;
      break;
    } catch (error) {
      // An unknown outcome (no answer, 504, 503) is retried with the same command id: the
      // server applies a command once, whatever the number of tries.
      const unknown = !(error instanceof ApiError) || error.status === 504 || error.status === 503;
      if (unknown && attempt < 3) { await new Promise((r) => setTimeout(r, 300 * (attempt + 1))); continue; }
      showError(errorBox, error);
      break;
    }
  }
  if (table.client && table.client.afterSend) table.client.afterSend();
  table.sending = false;
  await refresh();
}

function appendLog(line) {
  if (line.version <= table.version) return; // resumed: never twice
  table.version = line.version;
  const describe = table.client && table.client.describe;
  const log = $("log");
  log.append(el("li", { "data-version": line.version }, describe ? describe(line.event, table.colours) : line.text));
  log.scrollTop = log.scrollHeight;
}

// The log in words from the server, one read at a time (a live frame asks for the lines after
// the last one shown, so every event is logged once and in order).
let logging = Promise.resolve();
function loadLog() {
  logging = logging.catch(() => {}).then(async () => {
    const lines = await api("GET", `/games/${gameId}/log?after=${table.version}`, { token: token() });
    if (lines.length && !table.colours.length) table.colours = (await api("GET", `/games/${gameId}/table`)).colours;
    lines.forEach(appendLog);
  });
  return logging;
}

let refreshTimer = null;
function scheduleRefresh() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(refresh, 60);
}

// The live channel: every event after the last one shown; on a drop, reconnect with back-off
// from that version, so nothing is lost or shown twice.
function connect(restart = false) {
  if (table.socket && !restart) return;
  if (table.socket) { table.socket.onclose = null; table.socket.close(); }
  const query = new URLSearchParams({ after: String(table.version) });
  if (token()) query.set("token", token());
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}/games/${gameId}/live?${query}`);
  table.socket = socket;
  socket.onopen = () => { table.retry = 0; $("connection").textContent = "live"; };
  socket.onmessage = (message) => {
    let data;
    try { data = JSON.parse(message.data); } catch (_) { return; }
    if (data.error) { showError(errorBox, new ApiError(0, data.error.code, data.error.message)); return; }
    if (data.type && typeof data.version === "number" && data.version > table.version) {
      loadLog().catch((error) => showError(errorBox, error)); // one event a frame, told in words
    }
    scheduleRefresh();
  };
  socket.onclose = (close) => {
    table.socket = null;
    if (close.code === 1000) { // the game is over and everything was sent
      $("connection").textContent = "game over";
      refresh().then(() => { if (!table.over) connect(); });
      return;
    }
    if (close.code >= 4000 && close.code < 4500 && close.code !== 4429) { $("connection").textContent = "closed"; return; }
    $("connection").textContent = "reconnecting…";
    const delay = Math.min(8000, 250 * 2 ** table.retry);
    table.retry += 1;
    setTimeout(async () => {
      try { await loadLog(); } catch (_) { /* the socket retry says it */ }
      connect();
      scheduleRefresh();
    }, delay);
  };
}

async function start() {
  if (!gameId) { showError(errorBox, "No game id in the address."); return; }
  try {
    table.summary = await api("GET", `/games/${gameId}`);
    table.game = table.summary.game;
    // ?table=generic: the generic table even for a game with a module of its own.
    table.client = params.get("table") === "generic" ? null : await clientOf(table.game);
    if (table.client) table.client.attach({ table, render, send, movesBox });
    $("board-help").textContent = (table.client && table.client.boardHelp) || "The board as the game draws it; your moves are listed beside it, in words.";
    await loadLog();
  } catch (error) {
    showError(errorBox, error);
    return;
  }
  await refresh();
  if (!table.over) connect();
  else $("connection").textContent = "game over";
}

start();
