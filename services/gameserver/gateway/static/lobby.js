// The lobby: create a game of any hosted kind with its options (the catalog, GET
// /games/catalog, says what each game takes) and take its first seat, open a table by id or
// invitation link, list games with filters (GET /games, paged by cursor).
"use strict";
const { lobby, seats, el, showError } = window.Renature;
const $ = (id) => document.getElementById(id);
const errorBox = $("error");
const statusBox = $("status");
let cursor = null;
let catalog = [];

function chosenGame() {
  return catalog.find((game) => game.name === $("game-choice").value) || catalog[0];
}

function options(select, values, chosen) {
  select.replaceChildren(...values.map((value) => el("option", { value: String(value), selected: value === chosen }, String(value))));
}

// The form follows the game chosen: its boards, player counts with their seats' colours, its
// own options (a choice, a number in its range, a yes/no) and the clock if it takes one.
function showGame() {
  const game = chosenGame();
  options($("board-choice"), game.boards, game.boards[0]);
  $("players-choice").replaceChildren(...game.seats.map((seating) =>
    el("option", { value: String(seating.players) }, `${seating.players} (${seating.colours.join(", ")})`)));
  $("options").replaceChildren(...game.options.map(optionField));
  $("clock-choice").hidden = $("timeout-choice").hidden = !game.clock;
  const words = { bot: "a bot plays on", remove: "the seat is out" };
  $("create").elements.on_timeout.replaceChildren(...(game.timeouts || []).map((timeout) => el("option", { value: timeout }, words[timeout] || timeout)));
}

function optionField(option) {
  const name = `option:${option.name}`;
  const title = option.name.replace(/_/g, " ");
  let input;
  if (option.kind === "choice") {
    input = el("select", { name }, option.choices.map((choice) => el("option", { value: choice === null ? "" : String(choice), selected: choice === option.default }, choice === null ? "none" : String(choice))));
  } else if (option.kind === "several") {
    input = el("select", { name, multiple: "" }, option.choices.map((choice) => el("option", { value: String(choice), selected: (option.default || []).includes(choice) }, String(choice))));
  } else if (option.kind === "boolean") {
    input = el("input", { type: "checkbox", name, checked: option.default ? "" : null });
  } else if (option.kind === "integer") {
    input = el("input", { type: "number", name, value: option.default ?? "", min: option.minimum ?? null, max: option.maximum ?? null, required: "" });
  } else {
    input = el("input", { name, value: option.default ?? "" });
  }
  return el("label", { title: option.description }, `${title[0].toUpperCase()}${title.slice(1)} `, input);
}

function optionValues(form, game) {
  const values = {};
  for (const option of game.options) {
    const raw = form.get(`option:${option.name}`);
    if (option.kind === "boolean") values[option.name] = raw !== null;
    else if (option.kind === "integer") values[option.name] = Number(raw);
    else if (option.kind === "choice") values[option.name] = option.choices.find((choice) => (choice === null ? "" : String(choice)) === raw);
    else if (option.kind === "several") values[option.name] = form.getAll(`option:${option.name}`);
    else values[option.name] = raw;
  }
  return values;
}

// The filters offer every game's boards and phases, narrowed to one game once it is chosen.
function showFilters() {
  const chosen = catalog.filter((game) => !$("game-filter").value || game.name === $("game-filter").value);
  const boards = [...new Set(chosen.flatMap((game) => game.boards))];
  $("board-filter").replaceChildren(el("option", { value: "" }, "any"), ...boards.map((board) => el("option", { value: board }, board)));
  const phase = $("phase-filter");
  const kept = phase.value;
  const phases = [...new Set(chosen.flatMap((game) => game.phases))].filter((p) => !["lobby", "finished"].includes(p));
  phase.replaceChildren(el("option", { value: "" }, "any"), el("option", { value: "lobby" }, "waiting for players"),
    el("option", { value: "playing" }, "playing"), el("option", { value: "finished" }, "finished"),
    ...phases.map((p) => el("option", { value: p }, p.replace(/_/g, " "))));
  phase.value = kept;
}

async function loadCatalog() {
  catalog = await lobby.catalog();
  $("game-choice").replaceChildren(...catalog.map((game) => el("option", { value: game.name }, game.title)));
  $("game-filter").append(...catalog.map((game) => el("option", { value: game.name }, game.title)));
  showGame();
  showFilters();
  // Offered only now: the form is the catalog's (a click before it came created nothing).
  $("create").querySelector("button[type=submit]").disabled = false;
}
$("game-choice").addEventListener("change", showGame);
$("game-filter").addEventListener("change", showFilters);

document.getElementById("create").addEventListener("submit", async (submit) => {
  submit.preventDefault();
  errorBox.hidden = true;
  const form = new FormData(submit.target);
  const game = chosenGame();
  const request = { game: game.name, players: Number(form.get("players")), board: form.get("board"), seating: form.get("seating"), ...optionValues(form, game) };
  const clock = game.clock && form.get("clock");
  if (clock) {
    const [kind, total, increment] = clock.split(":");
    request.time_control = kind === "total"
      ? { total: Number(total), increment: Number(increment), on_timeout: form.get("on_timeout") }
      : { per_turn: Number(kind), on_timeout: form.get("on_timeout") };
  }
  try {
    statusBox.textContent = "Creating the game…";
    const created = await lobby.create(request);
    const { joined } = await lobby.join(created.game_id, 0, { name: form.get("name"), invite: created.invite_code });
    seats.set(created.game_id, { seat: 0, token: joined.token, host: created.host_token || null, invite: created.invite_code || null });
    location.href = `/play/${created.game_id}`;
  } catch (error) {
    statusBox.textContent = "";
    showError(errorBox, error);
  }
});

document.getElementById("join").addEventListener("submit", (submit) => {
  submit.preventDefault();
  const value = new FormData(submit.target).get("game").trim();
  let target = value;
  try {
    const url = new URL(value, location.href);
    if (url.pathname.startsWith("/play/")) target = url.pathname.slice(6) + url.search;
  } catch (_) { /* a bare game id */ }
  location.href = `/play/${target}`;
});

document.getElementById("filter").addEventListener("submit", (submit) => {
  submit.preventDefault();
  cursor = null;
  document.getElementById("games").replaceChildren();
  listGames();
});
document.getElementById("more").addEventListener("click", () => listGames());

async function listGames() {
  const form = new FormData(document.getElementById("filter"));
  const filters = { cursor };
  for (const [key, value] of form.entries()) if (value) filters[key] = value;
  const note = document.getElementById("games-note");
  try {
    const page = await lobby.list(filters);
    const games = page.games;
    cursor = page.next_cursor;
    const body = document.getElementById("games");
    for (const game of games) {
      const taken = (game.seats || []).filter((s) => s.name).length;
      body.append(el("tr", {},
        el("td", {}, el("code", {}, game.game_id.slice(0, 8))),
        el("td", {}, titleOf(game.game)),
        el("td", {}, game.board),
        el("td", {}, game.players),
        el("td", {}, game.phase),
        el("td", {}, `${taken}/${game.players}`),
        el("td", {},
          el("a", { href: `/play/${game.game_id}` }, game.phase === "lobby" ? "Join" : "Watch"),
          game.phase === "finished" ? [" · ", el("a", { href: `/viewer/${game.game_id}` }, "Dispute viewer")] : []),
      ));
    }
    note.textContent = body.children.length ? "" : "No game matches.";
    document.getElementById("more").hidden = !cursor;
  } catch (error) {
    note.textContent = `Games could not be listed: ${error.message}`;
  }
}

function titleOf(name) {
  const found = catalog.find((game) => game.name === name);
  return found ? found.title.split(" (")[0] : name;
}

loadCatalog().catch((error) => showError(errorBox, error)).finally(listGames);
