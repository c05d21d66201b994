// @renature/client: the game server's public API for any frontend, in the browser or under
// Node 20+. An ES module with no dependency and no build step; its types are in index.d.ts
// (the bodies generated from the gateway's OpenAPI document into types.d.ts).
//
//   LobbyClient  the catalog, the lobby list, creating a game, taking a seat
//   GameClient   one game as a seat (or a spectator) sees it: reads, start, moves, the live channel
//
// Requests are sent again where that is safe: a 429 or 503 is waited out as its Retry-After
// says (nothing was done); a lost answer or a 504 is sent again with the same command id or
// Idempotency-Key, which the server applies once. Refusals are thrown as typed errors carrying
// the API's `code`.

/** Any refusal or failure, with the HTTP status (0: no answer) and the API's error code. */
export class ApiError extends Error {
  constructor(status, code, message, retryAfter = null) {
    super(message);
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}
// Each status's error class (their meanings: index.d.ts); a retried status reaches the caller
// only once the retries are spent.
export class InvalidRequest extends ApiError {}
export class NotAllowed extends ApiError {}
export class NotFound extends ApiError {}
export class Refused extends ApiError {}
export class RateLimited extends ApiError {}
export class Unavailable extends ApiError {}

const CLASSES = { 400: InvalidRequest, 401: NotAllowed, 403: NotAllowed, 404: NotFound, 409: Refused, 422: InvalidRequest, 429: RateLimited, 503: Unavailable, 504: Unavailable, 0: Unavailable };

/** The typed error for a status and the API's error body. */
export function errorFor(status, error = {}, retryAfter = null) {
  const Class = CLASSES[status] || ApiError;
  return new Class(status, error.code || `http_${status}`, error.message || `The server answered ${status}.`, retryAfter);
}

/** A fresh id for a command or an Idempotency-Key: 32 hex digits from the platform's CSPRNG. */
export function newId() {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** How the client talks HTTP: the server's address, patience and an observer of its waits. */
export class Http {
  constructor({ baseUrl = "", fetch = globalThis.fetch.bind(globalThis), attempts = 6, maxWaitS = 10, onWait = null } = {}) {
    this.baseUrl = baseUrl.replace(/\/$/, "");
    this.fetch = fetch;
    this.attempts = attempts;
    this.maxWaitS = maxWaitS;
    this.onWait = onWait;
  }

  url(path) {
    return `${this.baseUrl}${path}`;
  }

  /** One request; `repeatable`: a lost answer or 504 may be sent again (a read, a command id). */
  async request(method, path, { body, token, headers = {}, repeatable = method === "GET", as = "json" } = {}) {
    const init = { method, headers: { Accept: as === "json" ? "application/json" : "*/*", ...headers } };
    if (token) init.headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) {
      if (!init.headers["Content-Type"]) init.headers["Content-Type"] = "application/json";
      init.body = typeof body === "string" ? body : JSON.stringify(body);
    }
    for (let attempt = 1; ; attempt += 1) {
      let response;
      try {
        response = await this.fetch(this.url(path), init);
      } catch (cause) {
        // No answer: the request may or may not have been done.
        if (repeatable && attempt < this.attempts) { await this.wait(Math.min(4, 0.25 * 2 ** attempt), 0, path); continue; }
        throw Object.assign(errorFor(0, { code: "no_answer", message: `No answer from the server (${cause.message || cause}).` }), { cause });
      }
      if (response.ok) return as === "text" ? response.text() : decode(response);
      const retryAfter = Number(response.headers.get("Retry-After")) || null;
      const again = response.status === 429 || response.status === 503 || (response.status === 504 && repeatable);
      if (again && attempt < this.attempts) {
        await response.body?.cancel?.();
        // At least what the server asked, plus a random part so that a burst spreads out.
        const seconds = Math.min(this.maxWaitS, retryAfter || attempt) * (1 + Math.random() / 2);
        await this.wait(seconds, response.status, path);
        continue;
      }
      const data = await decode(response).catch(() => null);
      throw errorFor(response.status, (data && data.error) || {}, retryAfter);
    }
  }

  async wait(seconds, status, path) {
    if (this.onWait) this.onWait({ seconds, status, path });
    await sleep(seconds * 1000);
  }
}

async function decode(response) {
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

function query(params) {
  const pairs = Object.entries(params).filter(([, v]) => v !== undefined && v !== null);
  return pairs.length ? `?${new URLSearchParams(pairs.map(([k, v]) => [k, String(v)]))}` : "";
}

function httpOf(options) {
  return options instanceof Http ? options : (options && options.http) || new Http(options);
}

/** The lobby: what games there are, and creating and joining them. */
export class LobbyClient {
  constructor(options = {}) {
    this.http = httpOf(options);
  }

  catalog() {
    return this.http.request("GET", "/games/catalog");
  }

  /** One page of the lobby; pass `next_cursor` back as `cursor` for the next. */
  list(filters = {}) {
    return this.http.request("GET", `/games${query(filters)}`);
  }

  /** Every game the filters match, page after page. */
  async *games(filters = {}) {
    let cursor;
    do {
      const page = await this.list({ ...filters, cursor });
      yield* page.games;
      cursor = page.next_cursor;
    } while (cursor);
  }

  /** Creates a game (`{game, players, ...options}` as the catalog offers); safely retried. */
  create(request = {}) {
    return this.http.request("POST", "/games", { body: request, headers: { "Idempotency-Key": newId() }, repeatable: true });
  }

  /** Takes a seat; answers a GameClient holding the seat's token (also `.joined`). */
  async join(gameId, seat, { name, invite } = {}) {
    const body = { name: name || `seat ${seat}` };
    if (invite) body.invite = invite;
    const joined = await this.http.request("POST", `/games/${enc(gameId)}/seats/${seat}`, { body, headers: { "Idempotency-Key": newId() }, repeatable: true });
    return Object.assign(new GameClient(gameId, { http: this.http, token: joined.token, seat: joined.seat }), { joined });
  }

  /** Takes a seat back on another device with its recovery code (shown once at the join); answers
   * a GameClient holding the new token (also `.reclaimed`, with the next recovery code). */
  async reclaim(gameId, seat, { recovery }) {
    const reclaimed = await this.http.request("POST", `/games/${enc(gameId)}/seats/${seat}/reclaim`, { body: { recovery } });
    return Object.assign(new GameClient(gameId, { http: this.http, token: reclaimed.token, seat }), { reclaimed });
  }

  /** Audits, explains and draws an exported events file (`at`: a step), storing nothing. */
  inspect(eventsText, at) {
    return this.http.request("POST", `/disputes${query({ at })}`, { body: eventsText, headers: { "Content-Type": "application/x-ndjson" }, repeatable: true });
  }

  /** A game as a seat (with its token) or a spectator (without). */
  game(gameId, { token = null, seat = null } = {}) {
    return new GameClient(gameId, { http: this.http, token, seat });
  }
}

const enc = encodeURIComponent;

/** One game, as its seat (a token) or as a spectator (none) sees it. */
export class GameClient {
  constructor(gameId, { token = null, seat = null, ...options } = {}) {
    this.gameId = gameId;
    this.token = token;
    this.seat = seat;
    this.http = httpOf(options);
  }

  get(path, params = {}, as = "json") {
    return this.http.request("GET", `/games/${enc(this.gameId)}${path}${query(params)}`, { token: this.token, as });
  }

  summary() { return this.get(""); }
  /** The seat's view (its own hand), or a spectator's without a token. */
  view() { return this.token ? this.get("/view") : this.get("/spectator"); }
  legalActions() { return this.token ? this.get("/legal-actions") : Promise.resolve([]); }
  moves() { return this.token ? this.get("/moves") : Promise.resolve([]); }
  state() { return this.get("/state"); }
  table(at) { return this.get("/table", { at }); }
  events(after = 0) { return this.get("/events", { after }); }
  log(after = 0) { return this.get("/log", { after }); }
  picture(at) { return this.get("/picture.svg", { at }, "text"); }
  audit() { return this.get("/audit"); }
  explanation(seat) { return this.get("/explanation", { seat }); }

  post(path, options = {}) {
    return this.http.request("POST", `/games/${enc(this.gameId)}${path}`, { token: this.token, ...options });
  }

  start(hostToken) { return this.post("/start", { token: hostToken || this.token }); }
  resign() { return this.post("/resign"); }
  /** Takes this seat back from the bot that plays it since its time ran out. */
  takeBack() { return this.post("/take-back"); }
  cancel(hostToken) { return this.post("/cancel", { token: hostToken }); }
  leave(seat = this.seat, hostToken) {
    return this.http.request("DELETE", `/games/${enc(this.gameId)}/seats/${seat}`, { token: hostToken || this.token });
  }

  /** Plays a command for this seat; a lost answer, 503 or 504 is sent again with the same id. */
  send(command, { commandId = newId() } = {}) {
    return this.post("/commands", { body: { command_id: commandId, command }, repeatable: true });
  }

  /** The live channel: see LiveChannel. */
  live(options = {}) {
    return new LiveChannel(this, options);
  }
}

/**
 * Every event after `after`, then each new one, once and in order, across drops and
 * reconnections (each resumes after the last version delivered). WebSocket where there is
 * one, server-sent events (read with fetch) otherwise or when the socket cannot open.
 * `onFrame({version, event, view?, legal_actions?})`; `onStatus(status)`: "connecting", "live",
 * "reconnecting", "ended", "closed"; `onError(ApiError)` for a refusal that ends the channel.
 * A refusal with code "history_rewound" (409) says that frames this channel delivered were
 * taken back (the server's store came back without its last writes after a crash): read the
 * game again and open a new channel from its version now.
 */
export class LiveChannel {
  constructor(game, { after = 0, include = "view", transport = "auto", onFrame = () => {}, onStatus = () => {}, onError = () => {}, WebSocket: Socket = globalThis.WebSocket } = {}) {
    Object.assign(this, { game, version: after, include, onFrame, onStatus, onError, Socket });
    this.transport = transport === "auto" ? (Socket ? "websocket" : "sse") : transport;
    this.retry = 0;
    this.stopped = false;
    this.done = new Promise((resolve) => { this.finish = resolve; });
    queueMicrotask(() => this.connect()); // once the caller holds the channel
  }

  /** Stops for good (no reconnection). */
  close() {
    this.stop("closed");
  }

  stop(status, error) {
    if (this.stopped) return;
    this.stopped = true;
    if (this.socket) { this.socket.onclose = null; this.socket.close(); }
    if (this.abort) this.abort.abort();
    if (error) this.onError(error);
    this.onStatus(status);
    this.finish(status);
  }

  params(token) {
    // The last event stream message id delivered (`<version>.<mark>`) resumes checked: the server
    // refuses it (409 history_rewound) if a crash took that event back and the game went on.
    const marked = this.lastId && this.lastId.startsWith(`${this.version}.`);
    const params = { after: marked ? this.lastId : this.version, token: token || undefined };
    if (this.include) params.include = this.include;
    return params;
  }

  connect() {
    if (this.stopped) return;
    this.onStatus(this.retry ? "reconnecting" : "connecting");
    if (this.transport === "websocket") this.openSocket();
    else this.readStream().catch((error) => this.dropped(error));
  }

  /** One frame in: delivered if it is the next version; a gap reconnects from the last one. */
  receive(data) {
    if (data.error) { this.refusal = data.error; return true; } // the close code follows
    if (data.answer) return true;
    const frame = data.event ? data : { event: data };
    const version = frame.event.version;
    if (version <= this.version) return true; // resumed: never twice
    if (version !== this.version + 1) return false; // never a gap: resume from the last one
    this.version = version;
    this.retry = 0;
    this.ending = false;
    this.onFrame({ version, ...frame });
    return true;
  }

  openSocket() {
    const http = this.game.http;
    const base = http.baseUrl || globalThis.location.origin;
    const url = `${base.replace(/^http/, "ws")}/games/${enc(this.game.gameId)}/live${query(this.params(this.game.token))}`;
    const socket = new this.Socket(url);
    let opened = false;
    let frames = 0;
    this.socket = socket;
    socket.onopen = () => { opened = true; this.onStatus("live"); };
    socket.onmessage = (message) => {
      frames += 1;
      if (!this.receive(JSON.parse(message.data))) socket.close();
    };
    socket.onclose = (close) => {
      this.socket = null;
      if (close.code === 1000) {
        // The server closes with 1000 after the game's last event, and at once when a channel
        // asks for what comes after it. Frames that arrive while this side closes (a drop) are
        // discarded, so an end is taken only from a socket that brought nothing more: ask again.
        if (this.ending && frames === 0) { this.stop("ended"); return; }
        this.ending = true;
        setTimeout(() => this.connect(), 0);
        return;
      }
      const refusal = this.refusal || { code: `closed_${close.code}`, message: close.reason || "The live channel was refused." };
      this.refusal = null;
      if (close.code >= 4000 && close.code < 4500 && close.code !== 4429) { this.stop("closed", errorFor(close.code - 4000, refusal)); return; }
      if (!opened) this.transport = "sse"; // a socket that cannot open: server-sent events instead
      this.dropped(null, close.code === 4429 ? 5 : null);
    };
  }

  async readStream() {
    this.abort = new AbortController();
    const http = this.game.http;
    const response = await http.fetch(http.url(`/games/${enc(this.game.gameId)}/events/stream${query(this.params())}`), {
      headers: { Accept: "text/event-stream", ...(this.game.token ? { Authorization: `Bearer ${this.game.token}` } : {}) },
      signal: this.abort.signal,
    });
    if (response.status === 204) { this.stop("ended"); return; }
    if (!response.ok) {
      const data = await decode(response).catch(() => null);
      const error = errorFor(response.status, (data && data.error) || {}, Number(response.headers.get("Retry-After")) || null);
      if ([429, 503, 504].includes(response.status)) { this.dropped(error, error.retryAfter); return; }
      this.stop("closed", error);
      return;
    }
    this.onStatus("live");
    for await (const message of serverSentEvents(response.body)) {
      if (message.event === "end") { this.stop("ended"); return; }
      if (message.event === "history_rewound") { this.stop("closed", errorFor(409, JSON.parse(message.data).error)); return; }
      if (message.data && !this.receive(JSON.parse(message.data))) break;
      if (message.id) this.lastId = message.id;
    }
    this.dropped(null);
  }

  /** A drop: reconnect after a back-off (0.25 s doubling to 8 s, or what the server asked). */
  dropped(_error, seconds = null) {
    if (this.stopped) return;
    const delay = seconds ? seconds * 1000 : Math.min(8000, 250 * 2 ** this.retry);
    this.retry += 1;
    this.onStatus("reconnecting");
    if (this.abort) this.abort.abort();
    setTimeout(() => this.connect(), delay);
  }
}

/** The messages of a text/event-stream body: {id, event, data}. */
async function* serverSentEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let message = { data: "" };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let cut;
      while ((cut = buffer.search(/\r?\n/)) >= 0) {
        const line = buffer.slice(0, cut);
        buffer = buffer.slice(buffer[cut] === "\r" ? cut + 2 : cut + 1);
        if (line === "") {
          if (message.data || message.event) yield message;
          message = { data: "" };
        } else if (!line.startsWith(":")) {
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "data") message.data += message.data ? `\n${value}` : value;
          else message[field] = value;
        }
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
