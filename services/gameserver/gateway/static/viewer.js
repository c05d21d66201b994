// The dispute viewer: step or slide through a game's events; at each step the board and the
// scores; the audit verdict with each finding linked to its event; the explanation point by
// point, each point linked to the event that gave it. A stored game is read through the public
// API; an exported file is inspected by POST /disputes (the server keeps nothing of it), which
// also says whether this server signed it (its seal checked against the keys it publishes). Any
// hosted game: its events in the server's words (or its own module's), its own picture.
"use strict";
const { lobby, gameOf, ApiError, el, loadPicture, showPicture, showError, clientOf } = window.Renature;
const $ = (id) => document.getElementById(id);
const errorBox = $("error");
const viewer = { gameId: null, fileText: null, events: [], texts: [], colours: [], client: null, at: 0, loading: 0 };
window.viewer = viewer;

async function openGame(gameId) {
  viewer.gameId = gameId;
  viewer.fileText = null;
  errorBox.hidden = true;
  try {
    const game = gameOf(gameId, null);
    const summary = await game.summary();
    viewer.client = await clientFor(summary.game);
    const lines = await game.log();
    viewer.events = lines.map((line) => line.event);
    viewer.texts = lines.map((line) => line.text);
    viewer.colours = (await game.table()).colours;
    let report = null;
    let explanation = null;
    try {
      report = await game.audit();
      explanation = await game.explanation();
    } catch (error) {
      if (!(error instanceof ApiError && error.code === "game_not_finished")) throw error;
    }
    showAll(report, explanation);
    renderSeal(undefined);
  } catch (error) {
    showError(errorBox, error);
  }
}

async function openFile(text) {
  viewer.gameId = null;
  viewer.fileText = text;
  errorBox.hidden = true;
  try {
    const inspection = await inspect(null);
    viewer.client = await clientFor(inspection.game);
    // The server does not send the events back: they are the file's own lines.
    viewer.events = eventsOf(text).slice(0, inspection.event_count);
    viewer.texts = inspection.log;
    viewer.colours = inspection.table ? inspection.table.colours : [];
    showAll(inspection.audit, inspection.explanation);
    renderSeal(inspection.seal);
  } catch (error) {
    showError(errorBox, error);
  }
}

// The game's own module, unless the address asks for the generic pages (?table=generic).
function clientFor(game) {
  return new URLSearchParams(location.search).get("table") === "generic" ? null : clientOf(game);
}

function eventsOf(text) {
  const events = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      events.push(JSON.parse(line));
    } catch (_) {
      break; // the audit says which line is no event
    }
  }
  return events;
}

function inspect(at) {
  return lobby.inspect(viewer.fileText, at);
}

function showAll(report, explanation) {
  if (!viewer.events.length) $("board").replaceChildren();
  const slider = $("slider");
  slider.max = String(viewer.events.length);
  renderEvents();
  renderAudit(report);
  renderPoints(explanation);
  goTo(viewer.events.length);
}

function renderEvents() {
  const list = $("events");
  list.replaceChildren();
  for (const event of viewer.events) {
    list.append(el("li", { "data-version": event.version },
      el("button", { type: "button", onclick: () => goTo(event.version), "aria-label": `Go to event ${event.version}` }, event.version),
      " ", describe(event.version)));
  }
}

// Event `version` in words: the game's own module's, or the server's.
function describe(version) {
  const event = viewer.events[version - 1];
  if (viewer.client && viewer.client.describe) return viewer.client.describe(event, viewer.colours);
  return viewer.texts[version - 1] || event.type;
}

function link(version) {
  return el("button", { type: "button", onclick: () => goTo(version) }, `event ${version}`);
}

function renderAudit(report) {
  const box = $("audit");
  box.replaceChildren();
  if (!report) {
    box.append(el("p", { class: "muted" }, "The game is not finished: it is audited once it has ended."));
    return;
  }
  box.append(el("p", { class: report.ok ? "ok" : "error", id: "verdict" },
    report.ok ? `The audit holds: ${report.events} events, ${report.batches} commands re-decided.`
      : "The audit FAILS."));
  box.append(el("ul", {}, report.checks.map((check) => el("li", {}, `checked: ${check}`))));
  if (report.findings && report.findings.length) {
    box.append(el("h3", {}, "Findings"));
    box.append(el("ol", { id: "findings" }, report.findings.map((finding) =>
      el("li", { class: "finding", "data-version": finding.version }, link(finding.version), ` ${finding.check}: ${finding.message}`))));
  }
}

// The seal's verdict on an uploaded file: signed by this server (which key, up to which
// event), not signed, or differs from what it signed at event N (linked).
function renderSeal(seal) {
  const box = $("seal");
  box.replaceChildren();
  if (seal === undefined) {
    box.append(el("p", { class: "muted" }, "Read from this server's store. A seal is checked on an exported file (renature export) opened here."));
    return;
  }
  if (!seal) return;
  if (seal.status === "signed") {
    const later = viewer.events.length - seal.signed_events;
    box.append(el("p", { class: "ok", id: "seal-verdict", "data-status": seal.status },
      `Signed by this server (key ${seal.key_id}): events 1 to ${seal.signed_events} are the ones it signed.`
        + (later > 0 ? ` Events ${seal.signed_events + 1} to ${viewer.events.length} came later and are not signed.` : "")));
  } else if (seal.status === "differs") {
    box.append(el("p", { class: "error", id: "seal-verdict", "data-status": seal.status },
      `Differs from what this server signed (key ${seal.key_id}) at `, link(seal.first_difference), `: ${seal.message}.`));
  } else {
    box.append(el("p", { class: "error", id: "seal-verdict", "data-status": seal.status },
      `Not signed by this server: ${seal.message}.`));
  }
}

function renderPoints(explanation) {
  const list = $("points");
  list.replaceChildren();
  if (!explanation) {
    list.append(el("li", { class: "muted" }, "Given once the game has ended and its audit holds."));
    return;
  }
  for (const line of explanation.lines) {
    list.append(el("li", { class: "point", "data-version": line.version },
      link(line.version), ` ${line.colour} ${line.points >= 0 ? "+" : ""}${line.points} (total ${line.total}): ${line.text}`));
  }
  const winners = explanation.winners.map((w) => explanation.colours[w]).join(", ");
  list.append(el("li", {}, el("strong", {}, `Final scores ${explanation.scores.map((s, i) => `${explanation.colours[i]} ${s}`).join(", ")}; winner(s) ${winners}.`)));
}

async function goTo(version) {
  const count = viewer.events.length;
  if (!count) return;
  const at = Math.max(1, Math.min(count, version));
  viewer.at = at;
  $("slider").value = String(at);
  $("position").textContent = `event ${at} of ${count}`;
  const event = viewer.events[at - 1];
  let facts = null;
  $("event-text").textContent = describe(event.version);
  for (const item of document.querySelectorAll("[data-version]")) {
    item.classList.toggle("current", Number(item.getAttribute("data-version")) === at);
  }
  const ticket = ++viewer.loading;
  try {
    if (viewer.gameId) {
      [facts] = await Promise.all([
        gameOf(viewer.gameId, null).table(at),
        loadPicture($("board"), gameOf(viewer.gameId, null), at),
      ]);
    } else {
      const inspection = await inspect(at);
      if (ticket !== viewer.loading) return;
      facts = inspection.table;
      if (inspection.picture) showPicture($("board"), inspection.picture);
      else $("board").replaceChildren(el("p", { class: "muted" }, "These events cannot be drawn: see the audit."));
    }
    if (ticket !== viewer.loading) return;
    $("scores").textContent = facts ? scoreLine(facts, at) : "";
  } catch (error) {
    showError(errorBox, error);
  }
}

function scoreLine(facts, at) {
  const scores = facts.colours.map((colour, seat) => `${colour} ${facts.scores[seat] ?? 0}`).join(", ");
  return `After event ${at}: ${scores}.`;
}

$("slider").addEventListener("input", (input) => goTo(Number(input.target.value)));
$("first").addEventListener("click", () => goTo(1));
$("prev").addEventListener("click", () => goTo(viewer.at - 1));
$("next").addEventListener("click", () => goTo(viewer.at + 1));
$("last").addEventListener("click", () => goTo(viewer.events.length));
document.addEventListener("keydown", (key) => {
  if (key.target instanceof HTMLInputElement && key.target.type !== "range") return;
  if (key.key === "ArrowRight") goTo(viewer.at + 1);
  if (key.key === "ArrowLeft") goTo(viewer.at - 1);
});
$("by-id").addEventListener("submit", (submit) => {
  submit.preventDefault();
  const id = new FormData(submit.target).get("game").trim();
  if (id) history.pushState(null, "", `/viewer/${id}`), openGame(id);
});
$("file").addEventListener("change", async (change) => {
  const file = change.target.files[0];
  if (file) openFile(await file.text());
});

const fromPath = decodeURIComponent(location.pathname.split("/").filter(Boolean)[1] || "");
if (fromPath) {
  document.querySelector("#by-id [name=game]").value = fromPath;
  openGame(fromPath);
}
