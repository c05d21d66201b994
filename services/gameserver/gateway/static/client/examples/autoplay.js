// A frontend example that uses nothing but the package: it creates a game of any hosted game,
// takes every seat, starts it and plays it to the end, each seat choosing one of its legal
// moves at random from its live channel's frames. `node autoplay.js http://127.0.0.1:8000
// renaissance` runs it under Node; autoplay.html runs it in a browser.
import { LobbyClient, Refused } from "../index.js";

/** Plays one whole game; answers the final table and what each seat's channel delivered. */
export async function playWholeGame({ baseUrl = "", game, players, log = () => {}, onWait } = {}) {
  const lobby = new LobbyClient({ baseUrl, onWait });
  const { created, seats } = await seatAll(lobby, game, players);
  log(`created ${created.game} ${created.game_id} for ${seats.length}`);
  const delivered = await playSeats(seats, log);
  const table = await seats[0].table();
  log(`over at version ${table.version}: scores ${JSON.stringify(table.scores)}`);
  return { gameId: created.game_id, table, delivered };
}

/** A started game of `game` (the catalog's first by default) with every seat taken. */
export async function seatAll(lobby, game, players) {
  const catalog = await lobby.catalog();
  const entry = catalog.find((g) => g.name === game) || catalog[0];
  const count = players || entry.player_counts[0];
  const created = await lobby.create({ game: entry.name, players: count });
  const seats = [];
  for (let seat = 0; seat < count; seat += 1) seats.push(await lobby.join(created.game_id, seat, { name: `Player ${seat + 1}` }));
  await seats[0].start(created.host_token);
  return { created, seats };
}

/** Plays started seats to the end; answers the versions each seat's channel delivered. */
export function playSeats(seats, log = () => {}) {
  return Promise.all(seats.map((seat) => playSeat(seat, log)));
}

/** One seat: moves on the newest frame that offers any; answers the versions it was sent. */
function playSeat(seat, log) {
  const versions = [];
  let latest = null;
  let busy = false;
  const act = async () => {
    if (busy || !latest || !latest.legal_actions || !latest.legal_actions.length) return;
    busy = true;
    const frame = latest;
    latest = null;
    let choices = frame.legal_actions;
    for (;;) {
      const command = choices[Math.floor(Math.random() * choices.length)];
      try {
        await seat.send(command);
        break;
      } catch (error) {
        if (!(error instanceof Refused)) throw error;
        choices = await seat.legalActions(); // a stale frame: ask what is legal now
        if (!choices.length) break;
      }
    }
    busy = false;
    if (latest) setTimeout(act);
  };
  return new Promise((resolve, reject) => {
    const channel = seat.live({
      onFrame(frame) {
        versions.push(frame.version);
        latest = frame;
        setTimeout(() => act().catch(fail));
      },
    });
    const fail = (error) => { channel.close(); reject(error); };
    channel.done.then((status) => {
      log(`seat ${seat.seat}: channel ${status} at version ${channel.version}`);
      if (status === "ended") resolve(versions); else reject(new Error(`seat ${seat.seat}'s channel ${status}`));
    });
  });
}

const isMain = typeof process !== "undefined" && process.argv && import.meta.url === `file://${process.argv[1]}`;
if (isMain) {
  const [baseUrl = "http://127.0.0.1:8000", game] = process.argv.slice(2);
  playWholeGame({ baseUrl, game, log: console.log }).then(
    (result) => console.log(JSON.stringify({ game_id: result.gameId, version: result.table.version, over: result.table.over })),
    (error) => { console.error(error); process.exitCode = 1; },
  );
}
