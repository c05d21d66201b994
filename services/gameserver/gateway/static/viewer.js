// The dispute viewer: step or slide through a game's events; at each step the board and the
// scores; the audit verdict with each finding linked to its event; the explanation point by
// point, each point linked to the event that gave it. A stored game is read through the public
// API; an exported file is inspected by POST /disputes (the server keeps nothing of it). Any
// hosted game: its events in the server's words (or its own module's), its own picture.
"use strict";
const { api, ApiError, el, loadPicture, showPicture, showError, clientOf } = window.Renature;
const $ = (id) => document.getElementById(id);
const errorBox = $("error");
const viewer = { gameId: null, fileText: null, events: [], texts: [], colours: [], client: null, at: 0, loading: 0 };
window.viewer = viewer;

async function openGame(gameId) {
  viewer.gameId = gameId;
  viewer.fileText = null;
  errorBox.hidden = true;
  try {
    const summary = await api("GET", `/games/${gameId}`);
    viewer.client = await clientFor(summary.game);
    const lines = await api("GET", `/games/${gameId}/log`);
    viewer.events = lines.map((line) => line.event);
    viewer.texts = lines.map((line) => line.text);
    viewer.colours = (await api("GET", `/games/${gameId}/table`)).colours;
    let report = null;
    let explanation = null;
    try {
      report = await api("GET", `/games/${gameId}/audit`);
      explanation = await api("GET", `/games/${gameId}/explanation`);
    } catch (error) {
      if (!(error instanceof ApiError && error.code === "game_not_finished")) throw error;
    }
    showAll(report, explanation);
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
  const query = at === null ? "" : `?at=${at}`;
  return api("POST", `/disputes${query}`, { body: viewer.fileText, headers: { "Content-Type": "application/x-ndjson" } });
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
        api("GET", `/games/${viewer.gameId}/table?at=${at}`),
        loadPicture($("board"), `/games/${viewer.gameId}/picture.svg?at=${at}`),
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
