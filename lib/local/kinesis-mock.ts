/**
 * kinesis-mock (npm `kinesis-local`, a Scala.js build; the Kinesis emulator LocalStack uses) as a
 * Node child process, run through kinesis-mock-runner.js, which keeps a V8 code cache of its
 * 8.8 MB main.js.
 */
import { readFileSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { KinesisClient, ListStreamsCommand } from '@aws-sdk/client-kinesis';
import { type Emulator, ensureDir, LOCAL_CREDENTIALS, LOCAL_REGION, probeConfig, spawnTiedToParent, startChildEmulator, type StartContext } from './emulator';

export async function startKinesisMock(ctx: StartContext): Promise<Emulator> {
  const main = require.resolve('kinesis-local/main.js');
  const persistDir = ctx.dataDir ? ensureDir(join(ctx.dataDir, 'kinesis')) : undefined;
  if (persistDir) removeIfEmpty(join(persistDir, KINESIS_PERSIST_FILE));
  return startChildEmulator(ctx, {
    service: 'kinesis',
    name: 'kinesis-mock',
    hint: 'kinesis-mock runs on Node from node_modules/kinesis-local/main.js: reinstall the kinesis-local package (npm install) if it is missing',
    ports: 2, // plain HTTP (used) and TLS (required by kinesis-mock, unused)
    spawnChild: ([plainPort, tlsPort]) => {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        NODE_OPTIONS: '', // not the parent's loaders or --inspect
        KINESIS_MOCK_PLAIN_PORT: String(plainPort),
        KINESIS_MOCK_TLS_PORT: String(tlsPort),
        // Its self-signed certificate; by default looked up relative to the working directory.
        KINESIS_MOCK_CERT_PATH: join(dirname(main), 'server.json'),
        AWS_REGION: LOCAL_REGION,
        AWS_ACCOUNT_ID: '000000000000',
        LOG_LEVEL: 'ERROR',
        ROOT_LOG_LEVEL: 'ERROR',
        // Streams leave CREATING/UPDATING/DELETING at once instead of after 500 ms each.
        ...Object.fromEntries(KINESIS_TRANSITIONS.map((v) => [v, '0ms'])),
        // Every test creates its own streams; the defaults (50 shards, 10 on-demand streams per
        // account) run out during a test run.
        SHARD_LIMIT: '100000',
        ON_DEMAND_STREAM_COUNT_LIMIT: '10000',
        SHOULD_PERSIST_DATA: persistDir ? 'true' : 'false',
        ...(persistDir
          ? {
              PERSIST_PATH: persistDir,
              PERSIST_FILE_NAME: KINESIS_PERSIST_FILE,
              LOAD_DATA_IF_EXISTS: 'true',
              PERSIST_INTERVAL: `${KINESIS_PERSIST_INTERVAL_MS}ms`,
            }
          : {}),
      };
      delete env.INITIALIZE_STREAMS;
      // Through the runner, which keeps a V8 code cache of main.js (saves ~1 s of compiling).
      const cache = kinesisMockCodeCache(main);
      return spawnTiedToParent(process.execPath, [KINESIS_MOCK_RUNNER, main, ...(cache ? [cache] : [])], { cwd: dirname(main), env });
    },
    // kinesis-mock saves its data every interval and not on exit: let one more save happen.
    flushBeforeStopMs: persistDir ? KINESIS_PERSIST_INTERVAL_MS + 300 : 0,
    probe: (endpoint) => {
      const client = new KinesisClient(probeConfig(endpoint, LOCAL_CREDENTIALS));
      return { call: () => client.send(new ListStreamsCommand({ Limit: 1 })), close: () => client.destroy() };
    },
  });
}

const KINESIS_MOCK_RUNNER = join(__dirname, 'kinesis-mock-runner.js');
const KINESIS_PERSIST_FILE = 'kinesis-data.json';
const KINESIS_PERSIST_INTERVAL_MS = 1_000;

/** kinesis-mock creates its data file at start and fails to load it later if it stayed empty. */
function removeIfEmpty(file: string): void {
  try {
    if (statSync(file).size === 0) rmSync(file);
  } catch {
    // no file yet
  }
}

/**
 * Where the runner keeps its code cache: node_modules/.cache/sluice/ (the usual place for tool
 * caches, owned by the project, unlike a shared /tmp), one file per kinesis-local, Node and V8
 * version. Undefined (no cache) when kinesis-local is not inside a node_modules folder.
 */
function kinesisMockCodeCache(main: string): string | undefined {
  const pkgDir = dirname(main);
  const nodeModules = dirname(pkgDir);
  if (basename(nodeModules) !== 'node_modules') return undefined;
  let version = 'unknown';
  try {
    version = (JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version?: string }).version ?? version;
  } catch {
    // the key below still differs per Node/V8 version
  }
  return join(nodeModules, '.cache', 'sluice', `kinesis-mock-${version}-node${process.versions.node}-v8-${process.versions.v8}-${process.arch}.cache`);
}

const KINESIS_TRANSITIONS = [
  'CREATE_STREAM_DURATION',
  'DELETE_STREAM_DURATION',
  'REGISTER_STREAM_CONSUMER_DURATION',
  'DEREGISTER_STREAM_CONSUMER_DURATION',
  'START_STREAM_ENCRYPTION_DURATION',
  'STOP_STREAM_ENCRYPTION_DURATION',
  'MERGE_SHARDS_DURATION',
  'SPLIT_SHARD_DURATION',
  'UPDATE_SHARD_COUNT_DURATION',
  'UPDATE_STREAM_MODE_DURATION',
];
