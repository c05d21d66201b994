// Shared by the lobby, the table and the dispute viewer: the public API through the client
// package (static/client/, @renature/client: safe retries, waits on 429/503, the live channel),
// seat tokens kept in this browser, the board picture and events told in words. No framework,
// no build step. An ES module: the pages load it, then their own module, in that order.
import { ApiError, GameClient, LobbyClient, newId } from "/static/client/index.js";

const lobby = new LobbyClient();

/** One game through the package, as `seat` ({seat, token}) or as a spectator (null). */
function gameOf(gameId, seat) {
  return new GameClient(gameId, { http: lobby.http, token: seat ? seat.token : null, seat: seat ? seat.seat : null });
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
async function loadPicture(container, game, at) {
  showPicture(container, await game.picture(at));
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
    clients[game] = lobby.catalog().then((catalog) => {
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

window.Renature = { lobby, gameOf, ApiError, seats, newId, el, loadPicture, showPicture, showError, clientOf, colourOf };
