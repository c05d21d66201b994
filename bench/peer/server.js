// The reference peer's server: boardgame.io's own Koa + socket.io server with the grid game.
// node server.js PORT [memory|flatfile DIR]
'use strict';

const { Server, FlatFile } = require('boardgame.io/server');
const { GridGame } = require('./game');

const port = Number(process.argv[2] || 8000);
const storage = process.argv[3] || 'memory';
const options = { games: [GridGame], origins: ['http://localhost', 'http://127.0.0.1'] };
if (storage === 'flatfile') {
  options.db = new FlatFile({ dir: process.argv[4] || './flatfile', logging: false });
}
const server = Server(options);
server.run(port, () => {
  process.stdout.write(`ready ${port}\n`);
});
