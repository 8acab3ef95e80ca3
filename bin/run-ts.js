#!/usr/bin/env node
// Runs a TypeScript file through tsx: node bin/run-ts.js <file.ts> [args...]
const path = require('node:path');
require('tsx/cjs');
const file = process.argv[2];
process.argv.splice(1, 2, path.resolve(file));
require(path.resolve(file));
