/**
 * Loading a user's module that imports the package by its name (`import ... from 'sluice'`)
 * from wherever it lives, as the conformance runner loads a case's processor module: `sluice`
 * and `sluice/<entry>` resolve to this package's own entry points (lib/api/ from the source,
 * dist/lib/api/ in the package), so the module shares the engine's classes. A .ts module goes
 * through tsx, as `sluice run` loads a query module.
 */
import Module from 'node:module';
import { join } from 'node:path';

const ENTRIES = new Set(['query', 'lambda', 'cdk', 'local']);

type Resolve = (request: string, parent: unknown, isMain: boolean, options?: unknown) => string;

let hooked = false;

/** Makes `sluice` (and `sluice/query`, ...) resolve to this package's entry points, once per process. */
function hookPackageName(): void {
  if (hooked) return;
  hooked = true;
  const mod = Module as unknown as { _resolveFilename: Resolve };
  const original = mod._resolveFilename;
  mod._resolveFilename = function (request, parent, isMain, options) {
    const m = /^sluice(?:\/(\w+))?$/.exec(request);
    if (m && (m[1] === undefined || ENTRIES.has(m[1]))) return original.call(this, join(__dirname, '..', 'api', m[1] ?? 'query'), parent, isMain, options);
    return original.call(this, request, parent, isMain, options);
  };
}

/** `require(file)` of a user's module, with the package name resolving to this package. */
export function requireWithPackageName(file: string): unknown {
  hookPackageName();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  if (/\.[cm]?tsx?$/.test(file) && !require.extensions['.ts']) require('tsx/cjs');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(file);
}
