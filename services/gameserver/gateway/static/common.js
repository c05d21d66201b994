// Shared by the lobby, the table and the dispute viewer: the public HTTP API, seat tokens kept
// in this browser, the board picture and events told in words. No framework, no build step.
(() => {
"use strict";

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function api(method, path, { body, token, headers } = {}) {
  const init = { method, headers: { Accept: "application/json", ...(headers || {}) } };
  if (token) init.headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const response = await politely(() => fetch(path, init));
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch (_) {
    data = text;
  }
  if (!response.ok) {
    const error = (data && data.error) || {};
    throw new ApiError(
      response.status,
      error.code || `http_${response.status}`,
      error.message || `${method} ${path} answered ${response.status}`,
    );
  }
  return data;
}

// A 429 is waited out (its Retry-After, at most 5 s) and the request sent again, a few times:
// rate limits slow a client down, they do not break it.
async function politely(request) {
  for (let attempt = 0; ; attempt += 1) {
    const response = await request();
    if (response.status !== 429 || attempt >= 4) return response;
    const wait = Math.min(5, Number(response.headers.get("Retry-After")) || 1);
    await new Promise((resolve) => setTimeout(resolve, wait * 1000));
  }
}

// Seat tokens are kept per game in this browser, so a reload or a dropped connection never
// loses the seat.
const seats = {
  get(gameId) {
    try {
      return JSON.parse(localStorage.getItem(`renature:seat:${gameId}`) || "null");
    } catch (_) {
      return null;
    }
  },
  set(gameId, seat) {
    localStorage.setItem(`renature:seat:${gameId}`, JSON.stringify(seat));
  },
  forget(gameId) {
    localStorage.removeItem(`renature:seat:${gameId}`);
  },
};

function newId() {
  if (crypto.randomUUID) return crypto.randomUUID().replace(/-/g, "");
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) =>
    b.toString(16).padStart(2, "0"),
  ).join("");
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value !== false && value !== null && value !== undefined) node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// The board picture is the server's SVG (the same drawing as `renature replay --svg`), inlined
// so that its cells can be highlighted and clicked.
async function loadPicture(container, url, { fetchInit } = {}) {
  const response = await politely(() => fetch(url, fetchInit));
  if (!response.ok) throw new ApiError(response.status, "picture", `The board could not be drawn (${response.status}).`);
  showPicture(container, await response.text());
}

function showPicture(container, svgText) {
  const doc = new DOMParser().parseFromString(svgText, "image/svg+xml");
  const svg = doc.documentElement;
  svg.removeAttribute("width");
  svg.removeAttribute("height");
  svg.setAttribute("class", "board-svg");
  container.replaceChildren(document.importNode(svg, true));
}

function colourOf(colours, seat) {
  return seat === null || seat === undefined ? "the game" : colours[seat] || `seat ${seat}`;
}

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
    case "SeatResigned":
      return `${who} is out of the game (${event.reason}); ${event.dominoes_returned} domino(es) go back to the box.`;
    default:
      return `${who}: ${event.type}.`;
  }
}

function coloursOf(events) {
  const created = events.find((event) => event.type === "GameCreated");
  return created ? created.seat_colours : [];
}

function showError(region, error) {
  region.textContent = error instanceof ApiError ? `${error.message} (${error.code})` : String(error);
  region.hidden = false;
}

window.Renature = { api, ApiError, seats, newId, el, loadPicture, showPicture, describe, coloursOf, showError };
})();
