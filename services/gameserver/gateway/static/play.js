// The table of any hosted game: the board (the game's own picture from the server), the seats
// and their scores, your legal moves in words as buttons, the clock, the log in words, live over
// the WebSocket with reconnection from the last version seen. A game may bring its own module
// (static/games/<name>.js, named by the catalog) to draw more of itself: Renature's lays
// dominoes on the board's spaces; any other game is played whole from the generic parts here.
"use strict";
const { lobby, gameOf, ApiError, seats, el, loadPicture, showError, clientOf, colourOf } = window.Renature;

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
  explanation: null, // where every point came from, fetched once the game is over
  lastInput: null, // "key" or "pointer": focus follows a keyboard player only
};
window.table = table; // for the browser tests and the curious

function token() {
  return table.seat ? table.seat.token : null;
}

// The game through the client package, as this browser's seat (or as a spectator).
function game() {
  return gameOf(gameId, table.seat);
}

// One refresh at a time; a refresh asked for while one runs runs again after it, so what is
// shown is never older than the last event or command.
table.refreshNow = () => refresh(); // for the browser tests: a refresh like a late live frame's
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
        table.summary = await game().summary();
      }
      table.view = await game().view();
      table.facts = await game().table();
      table.moves = table.facts.started ? await game().moves() : [];
      table.legal = table.moves.map((move) => move.command);
      table.colours = table.facts.colours;
      if (table.facts.over && !table.explanation) table.explanation = await explanationOf();
      const memo = focusMemo();
      await loadPicture($("board"), game());
      render(memo);
      clearTransientError();
    } catch (error) {
      if (error instanceof ApiError && error.code === "invalid_token") {
        seats.forget(gameId);
        table.seat = null;
      }
      fail(error);
    }
  }
}

// An error from the network or an outage (no answer, 5xx) clears itself once the page hears the
// server again; a refusal (4xx) stays until the next thing the player does succeeds.
let recheck = null;
function fail(error) {
  showError(errorBox, error);
  const transient = !(error instanceof ApiError) || error.status === 0 || error.status >= 500;
  errorBox.dataset.transient = String(transient);
  // The page asks again a little later (and when the browser says it is online): a read that
  // succeeds clears the error.
  if (transient && !recheck) recheck = setTimeout(() => { recheck = null; refresh(); }, 3000);
}
addEventListener("online", () => refresh());

function clearTransientError() {
  if (errorBox.dataset.transient === "true") errorBox.hidden = true;
}

// Focus stays where the player is: what is drawn again keeps its key (data-key), and the
// element with the key of the one that had focus gets it back; if that one is gone (the move
// was made), focus goes to the next thing to do, so a keyboard player never starts from the
// top of the page.
function focusMemo() {
  const active = document.activeElement;
  const keyed = active && active.closest ? active.closest("[data-key]") : null;
  const zone = active && active.closest ? active.closest("#board, #moves, #hand, #moves-section") : null;
  return { node: active, key: keyed ? keyed.dataset.key : null, inPlay: Boolean(zone) };
}

function restoreFocus(memo) {
  const active = document.activeElement;
  if (active && active !== document.body && active.isConnected) return;
  if (memo.key) {
    const same = document.querySelector(`[data-key="${CSS.escape(memo.key)}"]`);
    if (same && !same.disabled && !same.hidden) { same.focus(); return; }
  }
  if (memo.inPlay || table.lastInput === "key") focusNext();
}

// The first thing to do on your turn: the game's module says which, else the first move.
function focusNext() {
  if (!table.seat || !table.legal.length || table.sending) return;
  const target = table.client && table.client.nextTarget ? table.client.nextTarget()
    : $("moves").querySelector("button:not([disabled])");
  if (target) target.focus();
}

// The children of `box` become `nodes`, unless they are the same already: a late refresh that
// changes nothing leaves the buttons (and the one a key press is aimed at) where they are.
function patch(box, nodes) {
  const old = [...box.children];
  if (old.length === nodes.length && nodes.every((node, i) => node.outerHTML === old[i].outerHTML)) return false;
  box.replaceChildren(...nodes);
  return true;
}

function render(memo = focusMemo()) {
  const view = table.view;
  const facts = table.facts;
  table.over = facts.over || view.phase === "cancelled";
  $("viewer-link").href = `/viewer/${gameId}`;
  statusBox.textContent = statusLine(facts);
  renderSeating(view);
  (table.client && table.client.renderPlayers ? table.client.renderPlayers : renderPlayers)(view);
  $("clock").textContent = clockLine(clockOf());
  $("resign").hidden = !table.seat || !facts.started || table.over;
  $("take-back").hidden = !table.seat || table.over || facts.statuses[table.seat.seat] !== "bot";
  table.staging = el("div");
  if (table.client && table.client.renderMoves) table.client.renderMoves(view);
  else renderMoves();
  patch($("moves"), [...table.staging.children]);
  renderResults();
  restoreFocus(memo);
}

// A seat in words: its player's name and colour ("Alice (orange)"), "you" for your own.
function who(seat, { you = true } = {}) {
  const facts = table.facts;
  const colour = colourOf(table.colours, seat);
  const name = facts && facts.names[seat];
  const yours = you && table.seat && table.seat.seat === seat;
  if (!name) return yours ? `you (${colour})` : colour;
  return yours ? `${name} (you, ${colour})` : `${name} (${colour})`;
}

function statusLine(facts) {
  if (!facts.started) return "Waiting for players.";
  const phase = facts.phase.replace(/_/g, " ");
  if (facts.over) {
    const winners = facts.winners.map((w) => who(w, { you: false }));
    const mine = table.seat && facts.winners.includes(table.seat.seat);
    return `The game is over. ${winners.length > 1 ? "Winners" : "Winner"}: ${winners.join(" and ") || "nobody"}` +
      `${mine ? " (you won!)" : ""}.`;
  }
  if (table.over) return `The game ended (${phase}).`;
  const current = facts.current;
  const mine = table.seat && current === table.seat.seat;
  return mine ? `Your turn (${table.colours[current]}): ${phase}.`
    : `${current === null || current === undefined ? "Nobody" : who(current)} is playing (${phase}).`;
}

async function explanationOf() {
  try {
    return await game().explanation();
  } catch (error) {
    if (error instanceof ApiError && error.status === 409) return null; // not finished yet
    throw error;
  }
}

// The final score table: one row a seat (its player's name), one column for each source of
// points, the totals, the winners; then a rematch.
function renderResults() {
  const section = $("results");
  const explanation = table.explanation;
  section.hidden = !table.facts.over || !explanation;
  if (section.hidden) return;
  const rules = [...new Set(explanation.lines.map((line) => line.rule))];
  const sums = explanation.scores.map((_, seat) => rules.map((rule) => explanation.lines
    .filter((line) => line.seat === seat && line.rule === rule).reduce((sum, line) => sum + line.points, 0)));
  const order = explanation.ranking && explanation.ranking.length ? explanation.ranking : explanation.scores.map((_, s) => s);
  patch($("results-table"), [
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Player"), rules.map((rule) => el("th", { scope: "col" }, rule)),
      el("th", { scope: "col" }, "Total"))),
    el("tbody", {}, order.map((seat) => el("tr", { "data-seat": seat, class: explanation.winners.includes(seat) ? "winner" : null },
      el("th", { scope: "row" }, who(seat), explanation.winners.includes(seat) ? " — winner" : ""),
      sums[seat].map((points) => el("td", {}, String(points))),
      el("td", {}, el("strong", {}, String(explanation.scores[seat])))))),
  ]);
  $("rematch").hidden = !table.seat;
}

// A rematch: a new game of the same kind, board and number of players, your seat taken in it;
// its invitation link is shown there, to send to the others.
async function rematch() {
  const summary = table.summary;
  const request = { game: summary.game, players: summary.players, board: summary.board, seating: summary.seating };
  try {
    const created = await lobby.create(request);
    const name = table.facts.names[table.seat.seat] || "Player";
    const { joined } = await lobby.join(created.game_id, 0, { name, invite: created.invite_code || undefined });
    seats.set(created.game_id, { seat: 0, token: joined.token, host: created.host_token || null, invite: created.invite_code || null });
    location.href = `/play/${created.game_id}`;
  } catch (error) {
    fail(error);
  }
}
$("rematch").addEventListener("click", rematch);

function renderSeating(view) {
  const section = $("seating");
  section.hidden = view.phase !== "lobby";
  if (section.hidden) return;
  const code = (table.seat && table.seat.invite) || params.get("code");
  const link = `${location.origin}/play/${gameId}${code ? `?code=${encodeURIComponent(code)}` : ""}`;
  patch($("invite"), [el("span", {}, "Invite a friend with this link: ", el("code", {}, link), " ",
    el("button", { type: "button", id: "copy-invite", "data-key": "copy-invite", onclick: () => copyLink(link) }, "Copy the link"))]);
  const open = $("open-seats");
  const joined = new Set(table.summary.seats_joined || []);
  const byInvitation = table.summary.seating === "invite";
  // Once seated, the name and the code have done their work: only the seat is said.
  $("name-label").hidden = Boolean(table.seat);
  $("code-label").hidden = !byInvitation || Boolean(table.seat);
  if (params.get("code")) document.querySelector("#take-seat [name=code]").value = params.get("code");
  const host = table.seat && table.seat.host;
  $("cancel").hidden = !host;
  $("leave").hidden = !table.seat || Boolean(host);
  patch($("lobby-seats"), (table.summary.seats || []).map((seat) => el("li", {}, `Seat ${seat.seat} (${seat.colour}): ${seat.name || "free"}`,
    host && seat.name && seat.seat !== table.seat.seat
      ? [" ", el("button", { type: "button", "data-key": `remove:${seat.seat}`, onclick: () => lobbyAction(() => game().leave(seat.seat, host)) }, `Remove ${seat.name}`)]
      : [])));
  const offers = [];
  if (!table.seat) {
    for (let seat = 0; seat < table.facts.players; seat += 1) {
      if (!joined.has(seat)) {
        offers.push(el("button", { type: "button", "data-key": `seat:${seat}`, onclick: () => takeSeat(seat) }, `Take seat ${seat} (${table.colours[seat]})`));
      }
    }
  } else {
    offers.push(el("span", {}, `You hold seat ${table.seat.seat} (${table.colours[table.seat.seat]}).`));
  }
  patch(open, offers);
  $("start").hidden = !(table.seat && joined.size === table.facts.players);
}

async function takeSeat(seat) {
  const form = new FormData($("take-seat"));
  try {
    const { joined } = await lobby.join(gameId, seat, { name: form.get("name") || "Player", invite: form.get("code") });
    table.seat = { seat, token: joined.token };
    seats.set(gameId, table.seat);
    showRecovery(seat, joined.recovery);
    errorBox.hidden = true;
    if (table.lastInput === "key") $("start").focus();
    connect(true);
    await refresh();
  } catch (error) {
    fail(error);
  }
}

async function copyLink(link, box = "invite", button = "copy-invite") {
  try {
    await navigator.clipboard.writeText(link);
    $(button).textContent = "Copied";
  } catch (_) { // no clipboard here (an insecure page): the link is selected, to copy by hand
    getSelection().selectAllChildren($(box).querySelector("code"));
    $(button).textContent = "Selected: copy it";
  }
}

// The seat's recovery link, shown once (the server keeps only its hash): opened on another
// device, it takes the seat there (and this device's token stops working).
function showRecovery(seat, code) {
  if (!code) return;
  const link = `${location.origin}/play/${gameId}#recover=${seat}.${encodeURIComponent(code)}`;
  const box = $("recovery");
  patch(box, [el("span", {}, "Your seat's recovery link, shown only now: keep it to take your seat on another device. ",
    el("code", {}, link), " ",
    el("button", { type: "button", id: "copy-recovery", "data-key": "copy-recovery", onclick: () => copyLink(link, "recovery", "copy-recovery") }, "Copy the recovery link"))]);
  box.hidden = false;
}

// Opened with a recovery link: the seat is taken back here, with a new token and a new link.
async function recoverFromLink() {
  const match = /^#recover=(\d+)\.(.+)$/.exec(location.hash);
  if (!match) return;
  history.replaceState(null, "", location.pathname + location.search);
  const seat = Number(match[1]);
  try {
    const { reclaimed } = await lobby.reclaim(gameId, seat, { recovery: decodeURIComponent(match[2]) });
    table.seat = { seat, token: reclaimed.token };
    seats.set(gameId, table.seat);
    showRecovery(seat, reclaimed.recovery);
  } catch (error) {
    fail(error);
  }
}

async function lobbyAction(request) {
  try {
    await request();
    errorBox.hidden = true;
    await refresh();
    return true;
  } catch (error) {
    fail(error);
    return false;
  }
}

$("start").addEventListener("click", () => lobbyAction(() => game().start()));
$("cancel").addEventListener("click", () => lobbyAction(() => game().cancel(table.seat.host)));
$("leave").addEventListener("click", async () => {
  if (await lobbyAction(() => game().leave())) {
    seats.forget(gameId);
    table.seat = null;
    await refresh();
  }
});
$("resign").addEventListener("click", async () => {
  if (confirm("Resign this game? Your seat leaves the game for good.")) {
    await lobbyAction(() => game().resign());
  }
});

// Your time ran out and a bot plays your seat: this (or any move you make) takes it back.
$("take-back").addEventListener("click", () => lobbyAction(() => game().takeBack()));

// The generic players: each seat's colour, player, score and standing, whose turn it is.
function renderPlayers() {
  const facts = table.facts;
  patch($("players"), facts.colours.map((colour, number) => {
    const current = number === facts.current && !facts.over;
    const standing = facts.statuses[number] && facts.statuses[number] !== "playing" ? ` (${facts.statuses[number]})` : "";
    return el("li", { "data-seat": number, "aria-current": current ? "true" : null },
      el("strong", {}, colour), ` ${facts.names[number] || "(open)"}: ${points(facts.scores[number] ?? 0)}${standing}`,
      facts.winners.includes(number) && facts.over ? ", winner" : "",
      table.seat && table.seat.seat === number ? " (you)" : "",
      current ? el("span", { class: "turn" }, " — to play") : "");
  }));
}

function points(score) {
  return Math.abs(score) === 1 ? `${score} point` : `${score} points`;
}

// The generic moves: every legal move in the game's words, one button each, narrowed by a
// filter when there are many (a set-up may offer a thousand placements).
// The moves section's new buttons are built here, then patched in (see patch); null (and the
// section hidden) when the reader has no move.
function movesBox() {
  const section = $("moves-section");
  section.hidden = !table.seat || !table.legal.length;
  return section.hidden ? null : table.staging;
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
  shown.forEach((move, number) => {
    box.append(el("button", { type: "button", class: "move", "data-type": move.command.type, "data-key": `move:${JSON.stringify(move.command)}`,
      "aria-keyshortcuts": number < 9 ? String(number + 1) : null, onclick: () => send(move.command) },
    number < 9 ? el("kbd", { "aria-hidden": "true" }, String(number + 1)) : "", move.text));
  });
}
$("move-filter").addEventListener("input", () => { if (!table.client || !table.client.renderMoves) render(); });

// Keys, for a game played without a mouse (the page's help says them): a game's module
// handles its own first; then 1-9 choose a listed move, M goes to the moves, L to the log.
document.addEventListener("pointerdown", () => { table.lastInput = "pointer"; }, true);
document.addEventListener("keydown", (key) => {
  table.lastInput = "key";
  if (key.ctrlKey || key.metaKey || key.altKey || key.target.closest("input, select, textarea")) return;
  if (table.client && table.client.shortcut && table.client.shortcut(key)) { key.preventDefault(); return; }
  const moves = [...$("moves").querySelectorAll("button.move:not([disabled])")];
  let target = null;
  if (/^[1-9]$/.test(key.key)) target = moves[Number(key.key) - 1];
  else if (key.key === "m" || key.key === "M") { (moves[0] || $("moves")).focus(); key.preventDefault(); return; }
  else if (key.key === "l" || key.key === "L") { $("log").focus(); key.preventDefault(); return; }
  if (target) { key.preventDefault(); target.click(); }
});

// Zoom and pan of the board: it is drawn at its own size (every space 44 px wide, big enough
// for a finger, every label at least 11 px) and panned by dragging or scrolling in its box;
// "−" goes down to "fit", which shows it whole.
const ZOOMS = [0, 0.75, 1, 1.5];
table.zoom = 2; // 100%: every label at least 11 px, every space 44 px; "−" down to "fit"
function applyZoom() {
  const svg = $("board").querySelector("svg");
  const level = ZOOMS[table.zoom];
  $("board").classList.toggle("zoomed", level > 0);
  $("zoom-level").textContent = level ? `${Math.round(level * 100)}%` : "fit";
  if (!svg) return;
  const width = Number((svg.getAttribute("viewBox") || "").split(" ")[2]) || 0;
  svg.style.width = level && width ? `${width * level}px` : "";
  svg.style.maxHeight = level ? "none" : "";
}
$("zoom-in").addEventListener("click", () => { table.zoom = Math.min(ZOOMS.length - 1, table.zoom + 1); applyZoom(); });
$("zoom-out").addEventListener("click", () => { table.zoom = Math.max(0, table.zoom - 1); applyZoom(); });
new MutationObserver(applyZoom).observe($("board"), { childList: true });

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
  for (const target of document.querySelectorAll("#board .legal, #moves button, #hand button")) {
    if (target.tagName === "BUTTON") target.disabled = true; else target.remove();
  }
  try {
    // The package sends an unknown outcome (no answer, 503, 504) again with the same command
    // id: the server applies a command once, whatever the number of tries.
    await game().send(command);
    errorBox.hidden = true;
  } catch (error) {
    fail(error);
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
    const lines = await game().log(table.version);
    if (lines.length && !table.colours.length) table.colours = (await game().table()).colours;
    lines.forEach(appendLog);
  });
  return logging;
}

let refreshTimer = null;
function scheduleRefresh() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(refresh, 60);
}

// The live channel (the package's: WebSocket, else server-sent events): every event after the
// last one shown, once and in order across drops; each one's words are read from the log.
const STATUS = { connecting: "connecting…", live: "live", reconnecting: "reconnecting…", ended: "game over", closed: "closed" };
function connect(restart = false) {
  if (table.live && !restart) return;
  if (table.live) table.live.close();
  const channel = game().live({
    after: table.version,
    include: null,
    onFrame: () => {
      loadLog().catch(fail); // one event a frame, told in words
      scheduleRefresh();
    },
    onStatus: (status) => {
      if (table.live !== channel) return;
      $("connection").textContent = STATUS[status];
      if (status === "live") clearTransientError();
    },
    onError: (error) => (error.code === "history_rewound" ? setTimeout(rewound, 0) : fail(error)),
  });
  table.live = channel;
  channel.done.then((status) => {
    if (table.live !== channel) return;
    table.live = null;
    // The channel ended (the game is over, or the server closed it): the log catches up with
    // whatever its frames did not bring, and the page reconnects unless the game is over.
    if (status === "ended") {
      loadLog().catch(fail);
      refresh().then(() => { if (!table.over) connect(); });
    }
  });
}

// Events the page was sent were taken back (the server's store lost its last writes in a
// crash): the log is read again from the start, the table drawn again, and the channel opened
// from the version that stands.
async function rewound() {
  $("log").replaceChildren();
  table.version = 0;
  try {
    await loadLog();
    await refresh();
  } catch (error) {
    fail(error);
  }
  if (!table.over) connect(true);
}

async function start() {
  if (!gameId) { showError(errorBox, "No game id in the address."); return; }
  await recoverFromLink();
  try {
    table.summary = await game().summary();
    table.game = table.summary.game;
    // ?table=generic: the generic table even for a game with a module of its own.
    table.client = params.get("table") === "generic" ? null : await clientOf(table.game);
    if (table.client) table.client.attach({ table, render, send, movesBox, patch, focusNext });
    $("board-help").textContent = (table.client && table.client.boardHelp) || "The board as the game draws it; your moves are listed beside it, in words.";
    await loadLog();
  } catch (error) {
    fail(error);
    return;
  }
  await refresh();
  if (!table.over) connect();
  else $("connection").textContent = "game over";
}

start();
