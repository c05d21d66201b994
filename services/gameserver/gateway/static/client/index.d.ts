// The types of @renature/client (index.js). The bodies are generated from the gateway's
// OpenAPI document into types.d.ts; `Games[G]` is one game's view, command, event, state.
import type {
  Accepted, CatalogGame, CreateGameResponse, GameSummary, GameName, Games, JoinResponse,
  Inspection, LobbyPage, LogLine, Move, Table, AuditReport, NewGame,
} from "./types.js";

export * from "./types.js";

export class ApiError extends Error {
  /** The HTTP status; 0 when no answer came. */
  readonly status: number;
  /** The API's error code: "not_your_turn", "seat_taken", "rate_limited", ... */
  readonly code: string;
  /** Seconds the server asked to wait (429, 503), if it said. */
  readonly retryAfter: number | null;
  constructor(status: number, code: string, message: string, retryAfter?: number | null);
}
/** 400 or 422. */
export class InvalidRequest extends ApiError {}
/** 401 or 403. */
export class NotAllowed extends ApiError {}
/** 404. */
export class NotFound extends ApiError {}
/** 409: a rule refuses it as things stand. */
export class Refused extends ApiError {}
/** 429, still after the waits. */
export class RateLimited extends ApiError {}
/** 503, 504 or no answer, still after the retries. */
export class Unavailable extends ApiError {}

export function errorFor(status: number, error?: { code?: string; message?: string }, retryAfter?: number | null): ApiError;
export function newId(): string;

export interface Wait {
  seconds: number;
  /** 429, 503 or 504; 0 for a lost answer. */
  status: number;
  path: string;
}
export interface HttpOptions {
  /** The server's origin, e.g. "http://127.0.0.1:8000"; "" (the default) in a page it serves. */
  baseUrl?: string;
  fetch?: typeof fetch;
  /** Tries of one request in all (default 6). */
  attempts?: number;
  /** The longest wait for one Retry-After, in seconds (default 10). */
  maxWaitS?: number;
  /** Told of every wait before a request is sent again. */
  onWait?: ((wait: Wait) => void) | null;
}
export class Http {
  constructor(options?: HttpOptions);
  readonly baseUrl: string;
  url(path: string): string;
  request<T = unknown>(method: string, path: string, options?: {
    body?: unknown; token?: string | null; headers?: Record<string, string>; repeatable?: boolean; as?: "json" | "text";
  }): Promise<T>;
}
type ClientOptions = HttpOptions | Http | { http: Http };

export class LobbyClient {
  constructor(options?: ClientOptions);
  readonly http: Http;
  catalog(): Promise<CatalogGame[]>;
  list(filters?: { game?: GameName; phase?: string; board?: string; players?: number; open_seats?: boolean; cursor?: string; limit?: number }): Promise<LobbyPage>;
  games(filters?: Parameters<LobbyClient["list"]>[0]): AsyncGenerator<LobbyPage["games"][number]>;
  create(request: NewGame): Promise<CreateGameResponse>;
  join<G extends GameName = GameName>(gameId: string, seat: number, options?: { name?: string; invite?: string }): Promise<GameClient<G> & { joined: JoinResponse }>;
  /** POST /games/{id}/seats/{seat}/reclaim: the seat on this device, with its recovery code. */
  reclaim<G extends GameName = GameName>(gameId: string, seat: number, options: { recovery: string }): Promise<GameClient<G> & { reclaimed: ReclaimResponse }>;
  /** POST /disputes: an exported events file audited, explained and drawn (at a step). */
  inspect(eventsText: string, at?: number | null): Promise<Inspection>;
  game<G extends GameName = GameName>(gameId: string, options?: { token?: string | null; seat?: number | null }): GameClient<G>;
}

export interface Frame<G extends GameName = GameName> {
  version: number;
  event: Games[G]["event"];
  /** With include="view" (the default): the view as of this event. */
  view?: Games[G]["view"];
  /** With include="view": what the seat may send then ([] for a spectator or off turn). */
  legal_actions?: Array<Games[G]["command"]>;
}
export type LiveStatus = "connecting" | "live" | "reconnecting" | "ended" | "closed";
export interface LiveOptions<G extends GameName> {
  /** Deliver the events after this version (default 0: all). */
  after?: number;
  /** "view" (default) or null for bare events. */
  include?: "view" | null;
  /** "auto" (default): a WebSocket where there is one, server-sent events otherwise. */
  transport?: "auto" | "websocket" | "sse";
  onFrame?: (frame: Frame<G>) => void;
  onStatus?: (status: LiveStatus) => void;
  /** A refusal that ends the channel; code "history_rewound" (409): frames it delivered were
   * taken back by a crash of the server's store: read the game again, follow it anew. */
  onError?: (error: ApiError) => void;
  WebSocket?: typeof WebSocket;
}
export class LiveChannel<G extends GameName = GameName> {
  constructor(game: GameClient<G>, options?: LiveOptions<G>);
  /** The last version delivered. */
  readonly version: number;
  readonly transport: "websocket" | "sse";
  /** Settles once the channel stops: "ended" (the game's last event was sent) or "closed". */
  readonly done: Promise<"ended" | "closed">;
  close(): void;
}

export class GameClient<G extends GameName = GameName> {
  constructor(gameId: string, options?: ClientOptions & { token?: string | null; seat?: number | null });
  readonly gameId: string;
  token: string | null;
  seat: number | null;
  readonly http: Http;
  summary(): Promise<GameSummary>;
  view(): Promise<Games[G]["view"]>;
  legalActions(): Promise<Array<Games[G]["command"]>>;
  moves(): Promise<Move[]>;
  state(): Promise<Games[G]["state"]>;
  table(at?: number): Promise<Table>;
  events(after?: number): Promise<Array<Games[G]["event"]>>;
  log(after?: number): Promise<LogLine[]>;
  picture(at?: number): Promise<string>;
  audit(): Promise<AuditReport>;
  explanation(seat?: string): Promise<Games[G]["explanation"]>;
  start(hostToken?: string): Promise<Accepted>;
  resign(): Promise<Accepted>;
  /** Takes this seat back from the bot that plays it since its time ran out (409 where no bot plays it). */
  takeBack(): Promise<Accepted>;
  cancel(hostToken: string): Promise<Accepted>;
  leave(seat?: number, hostToken?: string): Promise<Accepted>;
  send(command: Games[G]["command"] | Omit<Games[G]["command"], "seat">, options?: { commandId?: string }): Promise<Accepted>;
  live(options?: LiveOptions<G>): LiveChannel<G>;
}
