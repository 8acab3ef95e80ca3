#!/usr/bin/env node
// Launcher: runs the TypeScript CLI through tsx, so `npx sluice` needs no build step.
require('tsx/cjs');
require('./sluice.ts');
