/**
 * One emulator's process, from spawn to stop: free loopback ports, readiness (the first answered
 * API call), SIGTERM then SIGKILL, and never an orphan (a parent-death signal on Linux, and
 * cleanups when this process exits or is stopped by SIGINT/SIGTERM/SIGHUP).
 */
import { type ChildProcess, spawn, type SpawnOptions } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { AwsCredentials } from '../aws/config';
import type { SqsDeliveryOptions } from './sqs-delivery';

export type LocalService = 'dynamodb' | 's3' | 'kinesis' | 'sqs';

/** The services the stack starts when none are named. SQS (notification mode) starts only when named. */
export const ALL_LOCAL_SERVICES: readonly LocalService[] = ['dynamodb', 's3', 'kinesis'];

export const LOCAL_REGION = 'us-east-1';
/** DynamoDB Local and kinesis-mock accept any credentials; these make requests easy to spot. */
export const LOCAL_CREDENTIALS: AwsCredentials = { accessKeyId: 'local', secretAccessKey: 'local' };
/** s3rver verifies signatures against its own fixed key pair. */
export const S3RVER_CREDENTIALS: AwsCredentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export const HOST = '127.0.0.1';

/** One started emulator. */
export interface Emulator {
  readonly service: LocalService;
  readonly endpoint: string;
  readonly pid?: number;
  readonly startupMs: number;
  stop(): Promise<void>;
}

export interface StartContext {
  readonly dataDir?: string;
  readonly log: (msg: string) => void;
  readonly startTimeoutMs: number;
  readonly javaPath: string;
  /** Where the stack's SQS answers, once started (s3rver sends bucket notifications there). */
  readonly sqsEndpoint?: () => string | undefined;
  /** SQS delivers as a standard queue may (StartLocalStackOptions.sqsDelivery). */
  readonly sqsDelivery?: SqsDeliveryOptions;
}

export interface ChildEmulatorSpec {
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

export async function startChildEmulator(ctx: StartContext, spec: ChildEmulatorSpec, attempt = 0): Promise<Emulator> {
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
    throw new Error(`${spec.name} (${spec.service}, port ${ports[0]}) ${what}: ${spec.hint}${tail ? `\nIts last output:\n${tail}` : ''}`, { cause: e });
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
export function probeConfig(endpoint: string, credentials: AwsCredentials) {
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

export function spawnTiedToParent(command: string, args: string[], options: SpawnOptions): ChildProcess {
  const stdio: SpawnOptions['stdio'] = ['ignore', 'pipe', 'pipe'];
  return SETPRIV ? spawn(SETPRIV, ['--pdeathsig', 'KILL', '--', command, ...args], { ...options, stdio }) : spawn(command, args, { ...options, stdio });
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

export function registerEmergencyCleanup(cleanup: () => void): () => void {
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

export function ensureDir(dir: string): string {
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
