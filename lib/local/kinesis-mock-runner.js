'use strict';
/**
 * Runs kinesis-mock (node_modules/kinesis-local/main.js) with a V8 code cache:
 *
 *   node kinesis-mock-runner.js <main.js> [<cache file>]
 *
 * main.js is 8.8 MB of Scala.js output; compiling it takes ~1.3 s of the emulator's ~2 s start.
 * With the cache the compile takes ~0.3 s. Node 22 does this itself (NODE_COMPILE_CACHE); Node 20
 * does not, so the module is compiled here through vm.Script with `cachedData`.
 *
 * V8 checks the cache against the source and its own version and flags, and rejects it on any
 * mismatch; the cache is then rebuilt. Without a cache file argument, main.js just runs.
 * Plain JavaScript: this file runs in a bare `node` child process.
 */
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const Module = require('node:module');

const [main, cacheFile] = process.argv.slice(2);
if (!main) {
  process.stderr.write('usage: node kinesis-mock-runner.js <kinesis-local/main.js> [<cache file>]\n');
  process.exit(2);
}

/** After this long the functions the start-up ran are compiled, and go into the cache. */
const WRITE_CACHE_AFTER_MS = 1500;

// main.js starts with a shebang line, which only the module loader strips.
const source = fs.readFileSync(main, 'utf8').replace(/^#!/, '//');
let cachedData;
if (cacheFile) {
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    // no cache yet
  }
}
const script = new vm.Script(Module.wrap(source), { filename: main, cachedData });

if (cacheFile && (!cachedData || script.cachedDataRejected)) {
  setTimeout(() => {
    try {
      fs.mkdirSync(path.dirname(cacheFile), { recursive: true });
      // Written aside and renamed, so a concurrent start never reads half a file.
      const tmp = `${cacheFile}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, script.createCachedData());
      fs.renameSync(tmp, cacheFile);
    } catch {
      // a read-only location only costs the next start its compile time
    }
  }, WRITE_CACHE_AFTER_MS).unref();
}

// Run it as the CommonJS module it is (what `node main.js` would do).
const mod = new Module(main, null);
mod.filename = main;
mod.paths = Module._nodeModulePaths(path.dirname(main));
process.argv = [process.argv[0], main]; // as `node main.js` sees them (no arguments)
script.runInThisContext()(mod.exports, Module.createRequire(main), mod, main, path.dirname(main));
