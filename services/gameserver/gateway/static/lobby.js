// The lobby: create a game (and take its first seat), open a table by id or invitation link,
// list games with filters (GET /games, paged by cursor).
"use strict";
const { api, seats, el, showError } = window.Renature;
const errorBox = document.getElementById("error");
const statusBox = document.getElementById("status");
let cursor = null;

document.getElementById("create").addEventListener("submit", async (submit) => {
  submit.preventDefault();
  errorBox.hidden = true;
  const form = new FormData(submit.target);
  const request = { players: Number(form.get("players")), board: form.get("board"), seating: form.get("seating") };
  const clock = form.get("clock");
  if (clock) {
    const [kind, total, increment] = clock.split(":");
    request.time_control = kind === "total"
      ? { total: Number(total), increment: Number(increment), on_timeout: form.get("on_timeout") }
      : { per_turn: Number(kind), on_timeout: form.get("on_timeout") };
  }
  try {
    statusBox.textContent = "Creating the game…";
    const created = await api("POST", "/games", { body: request, headers: { "Idempotency-Key": window.Renature.newId() } });
    const join = { name: form.get("name") };
    if (created.invite_code) join.invite = created.invite_code;
    const joined = await api("POST", `/games/${created.game_id}/seats/0`, { body: join, headers: { "Idempotency-Key": window.Renature.newId() } });
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
  const query = new URLSearchParams();
  for (const [key, value] of form.entries()) if (value) query.set(key, value);
  query.set("game", "renature"); // these pages draw Renature's board; Renaissance is API-only
  if (cursor) query.set("cursor", cursor);
  const note = document.getElementById("games-note");
  try {
    const page = await api("GET", `/games?${query}`);
    const games = page.games;
    cursor = page.next_cursor;
    const body = document.getElementById("games");
    for (const game of games) {
      const taken = (game.seats || []).filter((s) => s.name).length;
      body.append(el("tr", {},
        el("td", {}, el("code", {}, game.game_id.slice(0, 8))),
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

listGames();
