// The example page (autoplay.html): choose a game, play it whole through the package.
import { LobbyClient } from "../index.js";
import { playWholeGame } from "./autoplay.js";

const say = (text) => document.getElementById("log").append(Object.assign(document.createElement("li"), { textContent: text }));
const select = document.getElementById("game");
for (const game of await new LobbyClient().catalog()) select.append(new Option(game.title, game.name));
document.getElementById("play").addEventListener("click", async () => {
  window.result = null;
  try {
    window.result = await playWholeGame({ game: select.value, log: say });
  } catch (error) {
    say(`${error.name}: ${error.message}`);
    window.result = { error: `${error.name} ${error.code || ""} ${error.message}` };
  }
});
window.ready = true;
