#!/usr/bin/env node
/**
 * `npm run bench`: bundles bench/run.ts with esbuild and runs the bundle with plain node. tsx
 * would transform on the fly and add its own overhead to the hot loops being measured.
 *
 *   npm run bench                          the whole benchmark (~5 to 8 minutes on 2 cores)
 *   npm run bench -- --only raw,engine     some sections (raw, engine, memory, e2e, cost, join, scale, discovery, types, expr, peer)
 *   npm run bench -- --e2e-events 200000   a smaller slice end to end
 *   npm run bench -- --only cost           the cost bench (bench/cost.ts), 4 runs of 900,000 events;
 *                                          --events-per-run 90000 for a quick look
 *   npm run bench -- --only discovery      the discovery bench (bench/discovery.ts), about 5 minutes
 *   npm run bench -- --cpu-prof            node flags (--cpu-prof*, --heap-prof*, --prof,
 *                                          --max-old-space-size=N, --expose-gc,
 *                                          --openssl-legacy-provider) go to node
 *
 * The bundle goes to node_modules/.cache/sluice-bench/, with the worker threads' entry and the
 * scale section's query module beside it (npm packages stay external, so
 * require.resolve of the emulators' packages works from there). SLUICE_BENCH_OUT=<file> puts it
 * elsewhere (e.g. when several worktrees share one node_modules); keep it under a directory whose
 * node_modules resolution reaches the project's packages.
 */
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { buildSync } = require('esbuild');

const root = path.resolve(__dirname, '..');
const outfile = process.env.SLUICE_BENCH_OUT ? path.resolve(process.env.SLUICE_BENCH_OUT) : path.join(root, 'node_modules', '.cache', 'sluice-bench', 'run.js');

const bundle = (entry, out) =>
  buildSync({ entryPoints: [entry], bundle: true, platform: 'node', target: 'node20', format: 'cjs', packages: 'external', outfile: out, logLevel: 'warning' });
bundle(path.join(__dirname, 'run.ts'), outfile);
// The scale section's worker threads (lib/local/workers.ts starts task-worker.js beside the code
// that starts them, here the bundle) and the query module they build their plan from.
bundle(path.join(root, 'lib', 'local', 'task-worker.ts'), path.join(path.dirname(outfile), 'task-worker.js'));
bundle(path.join(__dirname, 'scale-plan.ts'), path.join(path.dirname(outfile), 'scale-plan.js'));

const nodeFlag = (a) => /^--(cpu-prof|heap-prof|prof$|max-old-space-size|expose-gc|openssl-legacy-provider)/.test(a);
const args = process.argv.slice(2);
const nodeArgs = args.filter(nodeFlag);
// The discovery section lists more than 1,000 keys on s3rver, whose continuation tokens (sent
// with every truncated page, even to StartAfter requests) are DES-encrypted: OpenSSL 3 has DES
// in its legacy provider only.
const onlyAt = args.indexOf('--only');
if (onlyAt >= 0 && /\bdiscovery\b/.test(args[onlyAt + 1] ?? '') && !nodeArgs.includes('--openssl-legacy-provider')) nodeArgs.push('--openssl-legacy-provider');
const scriptArgs = args.filter((a) => !nodeFlag(a));
// The SDK warns once that its 2027 releases will need node 22; the project targets node 20.
const env = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...process.env };
const r = spawnSync(process.execPath, [...nodeArgs, outfile, ...scriptArgs], { stdio: 'inherit', cwd: root, env });
if (r.error) throw r.error;
process.exit(r.status ?? 1);
