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
  // A picture with a text alternative, whatever the game draws: its <title> names it.
  if (!svg.getAttribute("role")) svg.setAttribute("role", "img");
  container.replaceChildren(document.importNode(svg, true));
}

// A game's own module for these pages (the catalog's `client`: richer drawing, its events in
// its words), loaded once; null for a game without one, which the generic pages play whole.
const clients = {};
async function clientOf(game) {
  if (!(game in clients)) {
    clients[game] = api("GET", "/games/catalog").then((catalog) => {
      const entry = catalog.find((g) => g.name === game);
      if (!entry || !entry.client) return null;
      return new Promise((resolve, reject) => {
        const script = el("script", { src: entry.client });
        script.addEventListener("load", () => resolve((window.RenatureGames || {})[game] || null));
        script.addEventListener("error", () => reject(new ApiError(0, "client", `The ${game} pages could not be loaded.`)));
        document.head.append(script);
      });
    });
  }
  return clients[game];
}

// Seat names for the words of a game: "silver", "gold", or "seat 2" past the known ones.
function colourOf(colours, seat) {
  return seat === null || seat === undefined ? "the game" : colours[seat] || `seat ${seat}`;
}

function showError(region, error) {
  region.textContent = error instanceof ApiError ? `${error.message} (${error.code})` : String(error);
  region.hidden = false;
}

window.Renature = { api, ApiError, seats, newId, el, loadPicture, showPicture, showError, clientOf, colourOf };
})();
