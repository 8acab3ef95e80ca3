#!/usr/bin/env node
// Launcher for this repository: runs the TypeScript CLI through tsx, so `node bin/sluice.js` (and
// `npm start`) need no build step. The published package runs the compiled dist/bin/cli.js.
require('tsx/cjs');
const { main } = require('./cli.ts');
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
