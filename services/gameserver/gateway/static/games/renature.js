// Renature's own part of the table (loaded by name: the catalog's `client`): the players with
// their clouds and tiles, the hand, dominoes laid on the board by clicking its spaces, plants,
// mushrooms and cloud actions on highlighted spaces, area tooltips, and events in words. The
// generic table (play.js) does everything else; a game without a module like this one is
// played there with the moves and the log in the server's words.
(() => {
"use strict";
const { el, colourOf } = window.Renature;
const $ = (id) => document.getElementById(id);
let table = null; // the generic table's state, handed over by attach()
let render = () => {};
let send = () => {};
let movesBox = () => null;
let patch = () => false;
let focusNext = () => {};

function cellName(x, y) {
  return `(${x}, ${y})`;
}

// One event in words, as the log of the online version reads.
function describe(event, colours) {
  const who = colourOf(colours, event.seat);
  switch (event.type) {
    case "GameCreated":
      return `Game created: ${event.players} players on the ${event.board} board` +
        (event.chosen_seed ? " (dealt from a chosen seed)" : "") + ".";
    case "PlayerJoined":
      return `${event.name} took seat ${event.seat} (${colourOf(colours, event.seat)}).`;
    case "GameStarted":
      return `The game started; ${colourOf(colours, event.first_seat)} plays first.`;
    case "DominoPlaced":
      return `${who} placed ${event.first.animal} on ${cellName(event.first.x, event.first.y)} and ` +
        `${event.second.animal} on ${cellName(event.second.x, event.second.y)}` +
        (event.clouds_taken ? `, taking ${event.clouds_taken} cloud(s)` : "") + ".";
    case "DominoDiscarded":
      return `${who} discarded a domino.`;
    case "PlantPlaced":
      return `${who} planted a ${event.colour} ${event.plant} in area ${event.area} ` +
        `${cellName(event.x, event.y)}` + (event.points ? ` for ${event.points} point(s) (${event.reason})` : "") + ".";
    case "PlantSkipped":
      return `${who} planted nothing.`;
    case "AreaScored": {
      const awards = event.awards.map((a) => `${a.colour} +${a.points} (${a.reason})`).join(", ");
      return `Area ${event.area} (size ${event.size}) scored: ${awards || "no points"}.`;
    }
    case "DominoDrawn":
      return `${who} drew a domino.`;
    case "JokerChanged":
      return `${who} changed the joker from ${event.from_animal} to ${event.to_animal} (${event.cost} clouds).`;
    case "PlantReturned":
      return `${who} returned the ${event.colour} ${event.plant} from area ${event.area} (${event.cost} clouds).`;
    case "ExtraTurnTaken":
      return `${who} takes an extra turn (${event.cost} clouds).`;
    case "MushroomGained":
      return `${who} gained a mushroom (${event.mushrooms_left} left).`;
    case "MushroomPlaced":
      return `${who} placed a mushroom at ${cellName(event.x, event.y)}: area ${event.area} now has ${event.size} spaces.`;
    case "MushroomDeclined":
      return `${who} did not take the mushroom.`;
    case "MushroomLost":
      return `${who} lost the mushroom (${event.reason}).`;
    case "TurnEnded":
      return event.next_seat === null || event.next_seat === undefined
        ? `${who} ended the turn.`
        : `${who} ended the turn; ${colourOf(colours, event.next_seat)} plays next.`;
    case "CloudsScored":
      return `${who} scores ${event.points} point(s) for ${event.clouds} cloud(s).`;
    case "PlantsPenalised":
      return `${who} loses ${-event.points} point(s) for plants left over.`;
    case "TokensRevealed":
      return `${who} reveals token backs ${event.backs.join(", ")} for ${event.points} point(s).`;
    case "GameEnded":
      return `The game ended. Scores: ${event.scores.map((s, i) => `${colourOf(colours, i)} ${s}`).join(", ")}; ` +
        `winner(s): ${event.winners.map((w) => colourOf(colours, w)).join(", ")}.`;
    case "PlayerLeft":
      return event.reason === "removed" ? `The host removed the player of seat ${event.seat}.` : `The player of seat ${event.seat} left.`;
    case "GameCancelled":
      return "The host cancelled the game.";
    case "SeatTimedOut":
      return `${who} ran out of time` + (event.on_timeout === "bot" ? "; a bot plays on." : ".");
    case "SeatReclaimed":
      return `${who} took the seat back from the bot and plays on.`;
    case "SeatResigned":
      return `${who} is out of the game (${event.reason}); ${event.dominoes_returned} domino(es) go back to the box.`;
    default:
      return `${who}: ${event.type}.`;
  }
}

function renderPlayers(view) {
  patch($("players"), view.seats.map((seat, number) => {
    const current = number === view.current_seat && view.phase !== "finished";
    return el("li", { "data-seat": number, "aria-current": current ? "true" : null },
      el("strong", {}, seat.colour), ` ${seat.name || "(open)"}: ${seat.score} points, ${seat.clouds} clouds, `,
      `${seat.hand_count} in hand, ${seat.reserve_count} in reserve`,
      seat.status && seat.status !== "playing" ? ` (${seat.status})` : "",
      table.seat && table.seat.seat === number ? " (you)" : "",
      current ? el("span", { class: "turn" }, " — to play") : "");
  }));
  $("joker").textContent = view.phase === "lobby" ? "" : `Joker: ${view.joker}. Turn ${view.turn}.`;
  renderAreas(view);
}

// Every area's size and plant totals, in a list a keyboard reaches (A) and a screen reader
// reads: the board's hover tooltips say the same to a mouse.
function renderAreas(view) {
  const areas = (view.areas || []).filter((area) => area.size > 0);
  $("areas-section").hidden = view.phase === "lobby" || !areas.length;
  patch($("areas"), areas.map((area) => el("li", { "data-area": area.id }, areaWords(area))));
}

function areaWords(area) {
  const totals = Object.entries(area.totals).filter(([, v]) => v > 0).map(([c, v]) => `${c} ${v}`).join(", ");
  return `Area ${area.id} (size ${area.size}${area.scored ? ", scored" : ""}): ${totals || "no plants"}`;
}

function myHand(view) {
  if (!table.seat) return [];
  const me = view.seats[table.seat.seat];
  return (me && me.hand) || [];
}

function renderHand(view) {
  const hand = myHand(view);
  $("hand-section").hidden = !table.seat || view.phase === "lobby";
  const placeable = new Set(table.legal.filter((c) => c.type === "PlaceDomino").map((c) => c.domino));
  const buttons = hand.map((domino, number) => el("button", {
    type: "button",
    "aria-pressed": String(table.chosenDomino === domino.id),
    "data-domino": domino.id,
    "data-key": `domino:${domino.id}`,
    "aria-keyshortcuts": String(number + 1),
    disabled: !placeable.has(domino.id),
    onclick: () => chooseDomino(domino.id),
  }, el("kbd", { "aria-hidden": "true" }, String(number + 1)), `${domino.animals[0]} | ${domino.animals[1]}`));
  patch($("hand"), hand.length ? buttons : [el("span", { class: "muted" }, "No dominoes in hand.")]);
}

function chooseDomino(id) {
  table.chosenDomino = id;
  table.chosenCell = null;
  render();
  if (table.lastInput === "key") focusNext(); // straight to the board's first highlighted space
  else { // a finger or a mouse: the board is brought into sight, at its first highlighted space
    const space = document.querySelector("#board rect.legal");
    if (space) space.scrollIntoView({ block: "center", inline: "center" });
  }
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
  const box = movesBox();
  if (!box) return;
  const placing = table.legal.some((c) => c.type === "PlaceDomino");
  $("prompt").textContent = table.chosenDomino === null
    ? (placing ? "Choose a domino from your hand, or another move:" : "Choose a move:")
    : table.chosenCell
      ? "Now choose where its second animal goes (highlighted):"
      : "Choose where its first animal goes (highlighted), or a placement below:";
  if (table.chosenDomino !== null) {
    box.append(el("button", { type: "button", "data-key": "back", "aria-keyshortcuts": "Escape", onclick: back }, "Back (Esc)"));
  }
  const choices = currentChoices();
  const jokers = choices.filter((c) => c.type === "CloudAction" && c.kind === "change_joker");
  // Discards last: a domino thrown away by a slip is gone for good, so each asks twice.
  const order = (c) => (c.type === "DiscardDomino" ? 2 : 0);
  const rest = choices.filter((c) => !jokers.includes(c)).sort((a, b) => order(a) - order(b));
  for (const command of rest) box.append(moveButton(command));
  if (jokers.length) box.append(jokerControl(jokers));
}

function back() {
  table.chosenDomino = null;
  table.chosenCell = null;
  table.armed = null;
  render();
  if (table.lastInput === "key") focusNext();
}

const SHORT = { EndTurn: "E", SkipPlant: "N", SkipMushroom: "N" };

function moveButton(command) {
  const key = `move:${JSON.stringify(command)}`;
  const discard = command.type === "DiscardDomino";
  const armed = discard && table.armed === key;
  return el("button", {
    type: "button", class: discard ? "move discard" : "move", "data-type": command.type, "data-key": key,
    "aria-keyshortcuts": SHORT[command.type] || null,
    onclick: () => {
      if (!discard || armed) { send(command); return; }
      table.armed = key; // the first press only asks
      render();
    },
  }, armed ? `Press again to ${label(command).toLowerCase()} (it is lost)` : label(command),
  SHORT[command.type] ? ` (${SHORT[command.type]})` : "");
}

// One control for the joker: the animal to change it to, and one button.
function jokerControl(jokers) {
  const animals = jokers.map((c) => c.animal);
  if (!animals.includes(table.jokerChoice)) table.jokerChoice = animals[0];
  const select = el("select", { id: "joker-animal", "data-key": "joker-animal", onchange: (change) => { table.jokerChoice = change.target.value; } },
    animals.map((animal) => el("option", { value: animal, selected: animal === table.jokerChoice ? "" : null }, animal)));
  return el("span", { class: "joker-control" },
    el("label", {}, "Change the joker to ", select),
    el("button", { type: "button", class: "move", "data-type": "CloudAction", "data-key": "joker-change", "aria-keyshortcuts": "J",
      onclick: () => send(jokers.find((c) => c.animal === $("joker-animal").value) || jokers[0]) }, "Change it (2 clouds)"));
}

// Keys of this game (the generic ones are in play.js): 1-9 a domino of your hand, arrows
// between highlighted spaces, E end the turn, N plant nothing, J the joker, A the areas,
// Esc back.
function shortcut(key) {
  const k = key.key.length === 1 ? key.key.toLowerCase() : key.key;
  if (key.target.closest && key.target.closest("rect.legal") && k.startsWith("Arrow")) {
    const rects = [...document.querySelectorAll("#board rect.legal")];
    const at = rects.indexOf(key.target.closest("rect.legal"));
    const step = k === "ArrowRight" || k === "ArrowDown" ? 1 : -1;
    rects[(at + step + rects.length) % rects.length].focus();
    return true;
  }
  const hand = [...document.querySelectorAll("#hand button")];
  if (/^[1-9]$/.test(k) && table.legal.some((c) => c.type === "PlaceDomino")) {
    const button = hand[Number(k) - 1];
    if (button && !button.disabled) { button.click(); return true; }
    return false;
  }
  const byType = (types) => document.querySelector(types.map((t) => `#moves button[data-type="${t}"]:not([disabled])`).join(", "));
  const target = { e: () => byType(["EndTurn"]), n: () => byType(["SkipPlant", "SkipMushroom"]) }[k];
  if (target) { const button = target(); if (button) { button.click(); return true; } return false; }
  const focusable = { j: "#joker-animal", a: "#areas", h: "#hand button:not([disabled])" }[k];
  if (focusable && document.querySelector(focusable)) { document.querySelector(focusable).focus(); return true; }
  if (k === "Escape" && (table.chosenDomino !== null || table.armed)) { back(); return true; }
  return false;
}

// What a keyboard player does next: the board's first highlighted space while laying a
// domino, else the first domino of the hand, else the first highlighted space or move.
function nextTarget() {
  const space = document.querySelector("#board rect.legal");
  if (table.chosenDomino !== null && space) return space;
  const placeable = document.querySelector("#hand button:not([disabled])");
  return placeable || space || document.querySelector("#moves button.move:not([disabled])");
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
    rect.dataset.key = `cell:${target.cell.x},${target.cell.y}:${table.chosenCell ? "second" : "first"}`;
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
  box.replaceChildren(el("button", { type: "button", "data-key": "back", onclick: back }, "Back (Esc)"), ...target.commands.map(moveButton));
  $("prompt").textContent = `Moves on (${target.cell.x}, ${target.cell.y}):`;
  box.querySelector(".move").focus();
}


function renderMoveArea(view) {
  renderHand(view);
  renderMoves();
  wireBoard();
}

window.RenatureGames = window.RenatureGames || {};
window.RenatureGames.renature = {
  attach(core) {
    table = core.table;
    render = core.render;
    send = core.send;
    movesBox = core.movesBox;
    patch = core.patch;
    focusNext = core.focusNext;
    table.armed = null; // a discard asked for once, waiting for its confirmation
    table.jokerChoice = null;
    $("moves-section").after(el("section", { id: "areas-section", "aria-labelledby": "areas-title", hidden: "" },
      el("h2", { id: "areas-title" }, "Areas"), el("ul", { id: "areas", class: "log", tabindex: "0", "aria-label": "Areas: size and plant totals" })));
    $("game-keys").textContent = ", 1–9 a domino of your hand, arrows between highlighted spaces, E end the turn, N plant nothing, J the joker, A the areas, Esc back";
    table.chosenDomino = null; // a domino being laid: its first half, then its second
    table.chosenCell = null;
  },
  afterSend() { table.chosenDomino = null; table.chosenCell = null; table.armed = null; },
  shortcut,
  nextTarget,
  describe,
  renderPlayers,
  renderMoves: renderMoveArea,
  // The board's help line says how to play on it; the generic table says nothing of spaces.
  boardHelp: "Highlighted spaces are legal for the move you are making: point at them, or move to them with Tab and press Enter. Hover over an area, or see the list of areas (A), for its plant totals. The numbers on the edges are the spaces' coordinates (x across, y down), as the moves and the log name them.",
};
})();
