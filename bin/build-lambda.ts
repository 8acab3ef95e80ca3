/**
 * Bundles a Lambda entry exactly as the AvailableNowPipeline construct's NodejsFunction does
 * (LAMBDA_BUNDLING: esbuild --bundle --platform=node --target=node22 --format=cjs --minify
 * --sourcemap --external:@aws-sdk/*) and prints the bundle size, for the README.
 *
 *   npx tsx bin/build-lambda.ts [entry] [--outdir dist/lambda]
 *
 * Default entry: lambdas/windowed-totals.ts. Also prints the largest inputs, to see what to trim.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { build } from 'esbuild';
import { DEFAULT_ENTRY, LAMBDA_BUNDLING } from '../lib/infra/lambda-bundling';

function usage(message: string): never {
  process.stderr.write(`${message}\nusage: npx tsx bin/build-lambda.ts [entry.ts] [--outdir <dir>]\n`);
  process.exit(2);
}

async function main(argv: string[]): Promise<void> {
  let entry = DEFAULT_ENTRY;
  let outdir = path.resolve(__dirname, '..', 'dist', 'lambda');
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--outdir') outdir = path.resolve(argv[++i] ?? usage('--outdir needs a directory'));
    else if (a.startsWith('-')) usage(`unknown option ${a}`);
    else entry = path.resolve(a);
  }
  if (!fs.existsSync(entry)) usage(`entry ${entry} does not exist: pass a Lambda entry file, e.g. lambdas/windowed-totals.ts`);
  const outfile = path.join(outdir, path.basename(entry).replace(/\.[cm]?[jt]s$/, ''), 'index.js');

  const t0 = Date.now();
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    target: LAMBDA_BUNDLING.target,
    format: LAMBDA_BUNDLING.format,
    minify: LAMBDA_BUNDLING.minify,
    sourcemap: LAMBDA_BUNDLING.sourceMap,
    external: [...LAMBDA_BUNDLING.externalModules],
    outfile,
    metafile: true,
    logLevel: 'warning',
  });
  const ms = Date.now() - t0;

  const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
  const size = fs.statSync(outfile).size;
  const mapSize = fs.existsSync(`${outfile}.map`) ? fs.statSync(`${outfile}.map`).size : 0;
  const output = Object.values(result.metafile.outputs).find((o) => o.entryPoint !== undefined);
  const byInput = Object.entries(output?.inputs ?? {})
    .map(([file, v]) => ({ file, bytes: v.bytesInOutput }))
    .sort((a, b) => b.bytes - a.bytes);
  const byPackage = new Map<string, number>();
  for (const { file, bytes } of byInput) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
    const key = m ? m[1] : file.split('/').slice(0, 2).join('/');
    byPackage.set(key, (byPackage.get(key) ?? 0) + bytes);
  }

  console.log(`entry:   ${path.relative(process.cwd(), entry)}`);
  console.log(`bundle:  ${path.relative(process.cwd(), outfile)}  ${kib(size)} (${size} bytes, minified; source map ${kib(mapSize)}; built in ${ms} ms)`);
  console.log(`external: ${LAMBDA_BUNDLING.externalModules.join(', ')} (provided by the Node.js 22 runtime)`);
  console.log('largest parts:');
  for (const [name, bytes] of [...byPackage.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10)) {
    console.log(`  ${kib(bytes).padStart(10)}  ${name}`);
  }
}

main(process.argv.slice(2)).catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
