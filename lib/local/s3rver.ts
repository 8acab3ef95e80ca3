/**
 * s3rver in this process, on a port the OS picks; data in a temporary directory (removed on stop)
 * or under the stack's data directory.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { atomicPuts, type PutObjectStore } from './s3-atomic-puts';
import { conditionalWrites, type KoaLikeContext, type ObjectStore } from './s3-conditional-writes';
import { s3Notifications } from './s3-notifications';
import { type Emulator, ensureDir, HOST, probeConfig, registerEmergencyCleanup, S3RVER_CREDENTIALS, type StartContext } from './emulator';

/** The part of s3rver's API used here (the package ships no types). */
interface S3rverInstance {
  run(): Promise<AddressInfo>;
  /** s3rver's object events (PUT, POST, COPY, DELETE), in S3's notification shape. */
  on(event: 'event', listener: (e: never) => void): unknown;
  /** Koa's middleware list (s3rver is a Koa app), composed when run() starts the server. */
  readonly middleware: Array<(ctx: KoaLikeContext, next: () => Promise<unknown>) => Promise<void>>;
  readonly store: ObjectStore & PutObjectStore;
  close(): Promise<void>;
  readonly httpServer?: { closeAllConnections?(): void };
}
type S3rverConstructor = new (opts: { port: number; address: string; silent: boolean; directory: string; vhostBuckets: boolean }) => S3rverInstance;

export async function startS3rver(ctx: StartContext): Promise<Emulator> {
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
    // S3's If-None-Match / If-Match on PUT, which s3rver ignores: ahead of its own routes
    server.middleware.unshift(conditionalWrites(server.store));
    // S3 event notifications to the stack's SQS (PutBucketNotificationConfiguration), which s3rver does not implement
    server.middleware.unshift(s3Notifications(server, ctx.sqsEndpoint ?? (() => undefined), ctx.log));
    // S3's atomic PUT, which s3rver's store does not give (a reader could see an object cut short)
    atomicPuts(server.store);
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
    throw new Error(
      `s3rver did not start (${(e as Error).message}): it runs in this process, so check that the s3rver package is installed and ${directory} is writable`,
      { cause: e },
    );
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
