// The table: the board (the server's picture), your hand, your legal moves highlighted on the
// board and listed as buttons, the players, the log in words, live over the WebSocket with
// reconnection from the last version seen.
"use strict";
const { api, ApiError, seats, newId, el, loadPicture, describe, showError } = window.Renature;

const gameId = decodeURIComponent(location.pathname.split("/").filter(Boolean)[1] || "");
const params = new URLSearchParams(location.search);
const $ = (id) => document.getElementById(id);
const errorBox = $("error");
const statusBox = $("status");

const table = {
  seat: seats.get(gameId),
  summary: null,
  view: null,
  legal: [],
  colours: [],
  version: 0, // the last event in the log
  chosenDomino: null,
  chosenCell: null,
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
      // The summary (who has joined) matters only before the start.
      if (!table.view || table.view.phase === "lobby") table.summary = await api("GET", `/games/${gameId}`);
      const seated = table.seat !== null;
      table.view = seated
        ? await api("GET", `/games/${gameId}/view`, { token: token() })
        : await api("GET", `/games/${gameId}/spectator`);
      table.legal = seated && table.view.phase !== "lobby"
        ? await api("GET", `/games/${gameId}/legal-actions`, { token: token() })
        : [];
      table.colours = table.view.seats.map((s) => s.colour);
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
  table.over = view.phase === "finished";
  $("viewer-link").href = `/viewer/${gameId}`;
  statusBox.textContent = statusLine(view);
  renderSeating(view);
  renderPlayers(view);
  renderHand(view);
  renderMoves();
  wireBoard();
}

function statusLine(view) {
  if (view.phase === "lobby") return "Waiting for players.";
  if (view.phase === "finished") {
    return `The game is over. Winner(s): ${view.winners.map((w) => table.colours[w]).join(", ")}.`;
  }
  const current = view.current_seat;
  const mine = table.seat && current === table.seat.seat;
  return mine ? `Your turn (${table.colours[current]}): ${view.phase.replace(/_/g, " ")}.`
    : `${table.colours[current] || "Nobody"} is playing (${view.phase.replace(/_/g, " ")}).`;
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
    for (let seat = 0; seat < view.players; seat += 1) {
      if (!joined.has(seat)) {
        open.append(el("button", { type: "button", onclick: () => takeSeat(seat) }, `Take seat ${seat} (${table.colours[seat]})`));
      }
    }
  } else {
    open.append(el("span", {}, `You hold seat ${table.seat.seat} (${table.colours[table.seat.seat]}).`));
  }
  $("start").hidden = !(table.seat && joined.size === view.players);
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

function renderPlayers(view) {
  const list = $("players");
  list.replaceChildren();
  view.seats.forEach((seat, number) => {
    const current = number === view.current_seat && view.phase !== "finished";
    list.append(el("li", { "data-seat": number, "aria-current": current ? "true" : null },
      current ? "▶ " : "",
      el("strong", {}, seat.colour), ` ${seat.name || "(open)"}: ${seat.score} points, ${seat.clouds} clouds, `,
      `${seat.hand_count} in hand, ${seat.reserve_count} in reserve`,
      table.seat && table.seat.seat === number ? " (you)" : ""));
  });
  $("joker").textContent = view.phase === "lobby" ? "" : `Joker: ${view.joker}. Turn ${view.turn}.`;
  $("clock").textContent = clockLine(view.clock);
  $("resign").hidden = !table.seat || !["place_domino", "place_plant", "place_mushroom", "end_of_turn"].includes(view.phase);
}

function clockLine(clock) {
  if (!clock) return "";
  const kind = clock.per_turn ? `${clock.per_turn} s a turn` : `${clock.total} s + ${clock.increment} s a turn`;
  if (clock.running_for === null || clock.running_for === undefined || !clock.deadline) return `Clock: ${kind}.`;
  const left = Math.max(0, Math.round((Date.parse(clock.deadline) - Date.now()) / 1000));
  return `Clock: ${kind}; ${table.colours[clock.running_for]} has ${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")} left` +
    ` (then ${clock.on_timeout === "bot" ? "a bot plays on" : "the seat is out"}).`;
}
setInterval(() => { if (table.view) $("clock").textContent = clockLine(table.view.clock); }, 1000);

function myHand(view) {
  if (!table.seat) return [];
  const me = view.seats[table.seat.seat];
  return (me && me.hand) || [];
}

function renderHand(view) {
  const hand = myHand(view);
  $("hand-section").hidden = !table.seat || view.phase === "lobby";
  const box = $("hand");
  box.replaceChildren();
  const placeable = new Set(table.legal.filter((c) => c.type === "PlaceDomino").map((c) => c.domino));
  for (const domino of hand) {
    box.append(el("button", {
      type: "button",
      "aria-pressed": String(table.chosenDomino === domino.id),
      "data-domino": domino.id,
      disabled: !placeable.has(domino.id),
      onclick: () => { table.chosenDomino = domino.id; table.chosenCell = null; render(); },
    }, `${domino.animals[0]} | ${domino.animals[1]}`));
  }
  if (!hand.length) box.append(el("span", { class: "muted" }, "No dominoes in hand."));
}

function animalsOf(dominoId) {
  const found = myHand(table.view).find((d) => d.id === dominoId);
  return found ? found.animals : ["?", "?"];
}

// Each legal command as a button labelled in words (keyboard users play entirely with these).
function label(command) {
  switch (command.type) {
    case "PlaceDomino": {
      const [a, b] = animalsOf(command.domino);
      return `Place ${a} on (${command.first.x}, ${command.first.y}) and ${b} on (${command.second.x}, ${command.second.y})`;
    }
    case "DiscardDomino": {
      const [a, b] = animalsOf(command.domino);
      return `Discard ${a} | ${b}`;
    }
    case "PlacePlant": return `Plant ${command.colour} ${command.plant} on (${command.cell.x}, ${command.cell.y})`;
    case "SkipPlant": return "Plant nothing";
    case "PlaceMushroom": return `Put the mushroom on (${command.cell.x}, ${command.cell.y})`;
    case "SkipMushroom": return "Do not take the mushroom";
    case "EndTurn": return "End the turn";
    case "CloudAction":
      if (command.kind === "change_joker") return `Change the joker to ${command.animal} (2 clouds)`;
      if (command.kind === "extra_turn") return "Take an extra turn (3 clouds)";
      return `Return the plant on (${command.cell.x}, ${command.cell.y})`;
    default: return command.type;
  }
}

// The commands the board highlights now: for a domino, its first halves, then (a first half
// chosen) its second halves; for plants, mushrooms and returns, their cells.
function boardTargets() {
  const legal = table.legal;
  if (table.chosenDomino !== null) {
    const placements = legal.filter((c) => c.type === "PlaceDomino" && c.domino === table.chosenDomino);
    if (table.chosenCell) {
      return placements.filter((c) => c.first.x === table.chosenCell.x && c.first.y === table.chosenCell.y)
        .map((c) => ({ cell: c.second, commands: [c] }));
    }
    return groupByCell(placements.map((c) => ({ cell: c.first, command: c })), true);
  }
  const withCells = legal.filter((c) => c.cell).map((c) => ({ cell: c.cell, command: c }));
  return groupByCell(withCells, false);
}

function groupByCell(items, firstHalf) {
  const groups = new Map();
  for (const { cell, command } of items) {
    const key = `${cell.x},${cell.y}`;
    if (!groups.has(key)) groups.set(key, { cell, commands: [], firstHalf });
    groups.get(key).commands.push(command);
  }
  return [...groups.values()];
}

function currentChoices() {
  const legal = table.legal;
  if (table.chosenDomino !== null) {
    const placements = legal.filter((c) => c.type === "PlaceDomino" && c.domino === table.chosenDomino);
    if (table.chosenCell) {
      return placements.filter((c) => c.first.x === table.chosenCell.x && c.first.y === table.chosenCell.y);
    }
    return placements;
  }
  return legal.filter((c) => c.type !== "PlaceDomino");
}

function renderMoves() {
  const section = $("moves-section");
  section.hidden = !table.seat || !table.legal.length;
  const box = $("moves");
  box.replaceChildren();
  if (section.hidden) return;
  const placing = table.legal.some((c) => c.type === "PlaceDomino");
  $("prompt").textContent = table.chosenDomino === null
    ? (placing ? "Choose a domino from your hand, or another move:" : "Choose a move:")
    : table.chosenCell
      ? "Now choose where its second animal goes (highlighted):"
      : "Choose where its first animal goes (highlighted), or a placement below:";
  if (table.chosenDomino !== null) {
    box.append(el("button", { type: "button", onclick: () => { table.chosenDomino = null; table.chosenCell = null; render(); } }, "Back"));
  }
  for (const command of currentChoices()) {
    box.append(el("button", { type: "button", class: "move", "data-type": command.type, onclick: () => send(command) }, label(command)));
  }
}

function wireBoard() {
  const svg = $("board").querySelector("svg");
  if (!svg) return;
  for (const old of svg.querySelectorAll(".legal, .chosen")) old.remove();
  const targets = table.seat ? boardTargets() : [];
  for (const target of targets) {
    const cell = svg.querySelector(`rect.cell[data-x="${target.cell.x}"][data-y="${target.cell.y}"]`);
    if (!cell) continue;
    // A see-through copy of the space on top of the drawing, so it can be seen and clicked
    // above whatever lies there (a plant to return, say).
    const rect = cell.cloneNode(false);
    rect.setAttribute("fill", "#e69f00");
    rect.setAttribute("fill-opacity", "0.3");
    rect.classList.add("legal");
    rect.setAttribute("tabindex", "0");
    rect.setAttribute("role", "button");
    const act = () => chooseCell(target);
    rect.setAttribute("aria-label", target.commands.length === 1 ? label(target.commands[0]) : `Space (${target.cell.x}, ${target.cell.y}): ${target.commands.length} moves`);
    rect.addEventListener("click", act);
    rect.addEventListener("keydown", (key) => { if (key.key === "Enter" || key.key === " ") { key.preventDefault(); act(); } });
    svg.append(rect);
  }
  if (table.chosenCell) {
    const cell = svg.querySelector(`rect.cell[data-x="${table.chosenCell.x}"][data-y="${table.chosenCell.y}"]`);
    if (cell) {
      const chosen = cell.cloneNode(false);
      chosen.setAttribute("fill", "none");
      chosen.classList.add("chosen");
      svg.append(chosen);
    }
  }
  if (svg.dataset.wired) return;
  svg.dataset.wired = "1";
  const tip = $("tooltip");
  svg.addEventListener("mousemove", (move) => {
    const view = table.view;
    const area = move.target.closest ? move.target.closest("[data-area]") : null;
    const id = area && area.getAttribute("data-area");
    const info = id && view.areas.find((a) => a.id === id);
    if (!info) { tip.hidden = true; return; }
    const totals = Object.entries(info.totals).filter(([, v]) => v > 0).map(([c, v]) => `${c} ${v}`).join(", ");
    tip.textContent = `Area ${info.id} (size ${info.size}${info.scored ? ", scored" : ""}): ${totals || "no plants"}`;
    tip.style.left = `${move.clientX + 12}px`;
    tip.style.top = `${move.clientY + 12}px`;
    tip.hidden = false;
  });
  svg.addEventListener("mouseleave", () => { tip.hidden = true; });
}

function chooseCell(target) {
  if (table.sending) return undefined;
  if (table.chosenDomino !== null && !table.chosenCell && target.firstHalf) {
    if (target.commands.length === 1) return send(target.commands[0]); // one way to lay it
    table.chosenCell = target.cell;
    return render();
  }
  if (target.commands.length === 1) return send(target.commands[0]);
  // Several moves on one space (plants of several kinds): list just those.
  const box = $("moves");
  box.replaceChildren(el("button", { type: "button", onclick: () => render() }, "Back"));
  for (const command of target.commands) {
    box.append(el("button", { type: "button", class: "move", "data-type": command.type, onclick: () => send(command) }, label(command)));
  }
  $("prompt").textContent = `Moves on (${target.cell.x}, ${target.cell.y}):`;
  box.querySelector(".move").focus();
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
  table.chosenDomino = null;
  table.chosenCell = null;
  table.sending = false;
  await refresh();
}

function appendLog(event) {
  if (event.version <= table.version) return; // resumed: never twice
  table.version = event.version;
  if (event.type === "GameCreated") table.colours = event.seat_colours;
  const log = $("log");
  log.append(el("li", { "data-version": event.version }, describe(event, table.colours)));
  log.scrollTop = log.scrollHeight;
}

async function loadLog() {
  const events = await api("GET", `/games/${gameId}/events?after=${table.version}`, { token: token() });
  events.forEach(appendLog);
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
    if (data.type && typeof data.version === "number") appendLog(data); // one event a frame
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
