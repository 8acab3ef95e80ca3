/**
 * Wires a query plan to the AWS adapters: S3 checkpoint, DynamoDB state and lease, the source
 * (S3 landing prefix or Kinesis) and the sink. Used by the Lambda handler, the CLI and the
 * conformance runner alike, so all of them run the same code a deployed pipeline runs.
 */
import type { Clock, Sink, Source } from '../engine/ports';
import type { QueryPlan } from '../engine/query';
import { CrashInjector } from '../engine/crash';
import { InvalidOptionError } from '../engine/errors';
import { MicroBatchExecutor, RunReport } from '../engine/executor';
import { createClients } from './clients';
import type { AwsConnection } from './config';
import { S3CheckpointStore } from './s3-checkpoint';
import { S3LandingSource } from './s3-landing-source';
import { S3DeadLetterSink, S3JsonSink } from './s3-sink';
import { DynamoDbStateStore } from './dynamodb-state-store';
import { DynamoDbLease } from './dynamodb-lease';

export interface S3Location {
  readonly bucket: string;
  /** Key prefix without a leading slash; '' for the whole bucket. */
  readonly prefix: string;
}

export type SourceLocation = ({ readonly kind: 's3' } & S3Location) | { readonly kind: 'kinesis'; readonly streamName: string };
export type SinkLocation = ({ readonly kind: 's3' } & S3Location) | { readonly kind: 'dynamodb'; readonly table: string };

export interface PipelineConfig {
  readonly checkpoint: S3Location;
  /** The DynamoDB table for state and the lease (pk/sk, TTL on `ttl`). */
  readonly stateTable: string;
  readonly source: SourceLocation;
  readonly sink: SinkLocation;
  /** Malformed records (and, if set, late rows) land here. Default: `<checkpoint>/../dead-letter`. */
  readonly deadLetter?: S3Location;
  /** Also write rows dropped by the watermark to the dead-letter location (kind `late`). */
  readonly keepLateRows?: boolean;
  /** Lease duration; keep it at least the Lambda timeout. Default 15 minutes. */
  readonly leaseDurationMs?: number;
  /** Offsets/commits kept in the checkpoint. Default 100. */
  readonly retainBatches?: number;
}

export interface PipelineExtras {
  readonly clock?: Clock;
  readonly crash?: CrashInjector;
  readonly log?: (event: Record<string, unknown>) => void;
  /** Replace the sink (e.g. a test's naive sink). */
  readonly sink?: Sink;
  /** Replace the source (e.g. a Kinesis source built elsewhere). */
  readonly source?: Source;
}

/** Parses `s3://bucket/prefix` into a location. */
export function parseS3Uri(uri: string, what: string): S3Location {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(uri.trim());
  if (!m) throw new InvalidOptionError(`${what} ${JSON.stringify(uri)} is not an S3 URI: write s3://<bucket>/<prefix>, e.g. s3://my-bucket/landing/events`);
  return { bucket: m[1], prefix: (m[2] ?? '').replace(/\/+$/, '') };
}

export function joinKey(prefix: string, ...parts: string[]): string {
  return [prefix, ...parts].filter((p) => p !== '').join('/');
}

export function buildExecutor(conn: AwsConnection, plan: QueryPlan, cfg: PipelineConfig, extras: PipelineExtras = {}) {
  const clients = createClients(conn);
  const checkpoint = new S3CheckpointStore({ client: clients.s3, bucket: cfg.checkpoint.bucket, prefix: cfg.checkpoint.prefix });
  let source: Source;
  if (extras.source) source = extras.source;
  else if (cfg.source.kind === 's3') {
    source = new S3LandingSource({ client: clients.s3, bucket: cfg.source.bucket, prefix: cfg.source.prefix, schema: plan.source.schema, checkpoint });
  } else {
    throw new InvalidOptionError(
      `source kinesis://${cfg.source.streamName} needs the Kinesis adapter, which this build wires through PipelineExtras.source: pass a KinesisSource, or use an S3 landing prefix`,
    );
  }
  const sinkLoc = cfg.sink;
  let sink: Sink;
  if (extras.sink) sink = extras.sink;
  else if (sinkLoc.kind === 's3') sink = new S3JsonSink({ client: clients.s3, bucket: sinkLoc.bucket, prefix: sinkLoc.prefix });
  else throw new InvalidOptionError(`sink dynamodb://${sinkLoc.table} is not available in this build: use an s3:// sink`);
  // A sibling of the checkpoint prefix, not inside it: the checkpoint's head() lists its prefix.
  const dl = cfg.deadLetter ?? { bucket: cfg.checkpoint.bucket, prefix: `${cfg.checkpoint.prefix}-dead-letter` };
  const deadLetters = new S3DeadLetterSink({ client: clients.s3, bucket: dl.bucket, prefix: dl.prefix });
  const namespace = `${plan.name}@${cfg.checkpoint.bucket}/${cfg.checkpoint.prefix}`;
  const state = new DynamoDbStateStore({ client: clients.dynamodb, tableName: cfg.stateTable, namespace, clock: extras.clock });
  const lease = new DynamoDbLease({ client: clients.dynamodb, tableName: cfg.stateTable, leaseKey: namespace, clock: extras.clock });
  const executor = new MicroBatchExecutor(
    { plan, source, checkpoint, state, sink, deadLetters, lateRows: cfg.keepLateRows || plan.lateRows === 'dead-letter' ? deadLetters : undefined, lease, clock: extras.clock, crash: extras.crash, log: extras.log },
    { leaseDurationMs: cfg.leaseDurationMs, retainBatches: cfg.retainBatches },
  );
  return { executor, clients, checkpoint, source, sink, state, lease, deadLetters };
}

export async function runPipeline(conn: AwsConnection, plan: QueryPlan, cfg: PipelineConfig, opts: PipelineExtras & { deadlineMs?: number } = {}): Promise<RunReport> {
  const { executor } = buildExecutor(conn, plan, cfg, opts);
  return executor.run({ deadlineMs: opts.deadlineMs });
}
