/**
 * Wires a query plan to the AWS adapters: S3 checkpoint, DynamoDB state and lease, the source
 * (S3 landing prefix or Kinesis) and the sink. Used by the Lambda handler, the CLI and the
 * conformance runner alike, so all of them run the same code a deployed pipeline runs.
 */
import type { BatchLimits, Clock, Sink, Source, StaticTables } from '../engine/ports';
import type { PlanInput, QueryPlan, SourceSpec } from '../engine/plan/types';
import { type CrashInjector, crashingAt, type CrashPlan } from '../engine/testing/crash';
import { InvalidOptionError } from '../engine/errors';
import { MicroBatchExecutor } from '../engine/schedule/single';
import type { ExecutorDeps, RunOptions, RunReport } from '../engine/run/types';
import { PartitionedRun, type PartitionedOptions } from '../engine/schedule/partitioned';
import { S3ShuffleStore } from './s3/shuffle';
import { createClients, type AwsClients } from './clients';
import type { AwsConnection } from './config';
import { S3CheckpointStore } from './s3/checkpoint';
import { landingOptionsFromSpec } from './s3/landing-options';
import { S3LandingSource } from './s3/landing-source';
import { NotificationFileDiscovery } from './sqs/notification-file-discovery';
import { SqsNotificationDiscovery } from './sqs/notification-discovery';
import { S3DeadLetterSink } from './s3/dead-letters';
import { S3JsonSink } from './s3/json-sink';
import { DynamoDbStateStore } from './dynamodb/state-store';
import type { DynamoDbStateCache } from './dynamodb/state-cache';
import { DynamoDbLease } from './dynamodb/lease';
import { DynamoDbSink } from './dynamodb/sink';
import { KinesisSource, kinesisOptionsFromSpec } from './kinesis/source';
import { S3FileSink, type PartitionGranularity } from './s3/file-sink';
import { S3ParquetSink } from './s3/parquet-sink';
import { CSV_SINK_OPTION_NAMES, csvSinkFormatOf } from '../engine/formats/csv-writer';
import { S3CsvSink } from './s3/csv-sink';
import { checkOutsideSource, type NamedS3Location } from './locations';
import { meterRuns } from './request/meter';
import { stateNamespace } from './namespace';
import { S3StaticTable } from './s3/static-table';
import { DynamoDbStaticTable } from './dynamodb/static-table';

export interface S3Location {
  readonly bucket: string;
  /** Key prefix without a leading slash; '' for the whole bucket. */
  readonly prefix: string;
}

export type SourceLocation = ({ readonly kind: 's3' } & S3Location) | { readonly kind: 'kinesis'; readonly streamName: string };
export type SinkLocation =
  | ({ readonly kind: 's3' } & S3Location)
  | ({
      readonly kind: 's3-files';
      /** How the objects are encoded. @default 'json' (JSON lines) */
      readonly format?: SinkFormat;
      readonly partitionBy?: string;
      readonly partitionGranularity?: PartitionGranularity;
      /** format=csv: each object starts with the column names (`header=true`). */
      readonly header?: boolean;
      /** format=csv: Spark's CSV writer options given as parameters (sep, quoteAll, timestampFormat, ...). */
      readonly csvOptions?: Readonly<Record<string, string>>;
    } & S3Location)
  | { readonly kind: 'dynamodb'; readonly table: string; readonly queryKey?: string };

/** The encodings of the S3 file sink (`?format=`). */
const SINK_FORMATS = ['json', 'parquet', 'csv'] as const;
export type SinkFormat = (typeof SINK_FORMATS)[number];

export interface PipelineConfig {
  readonly checkpoint: S3Location;
  /** The DynamoDB table for state and the lease (pk/sk, TTL on `ttl`). */
  readonly stateTable: string;
  readonly source: SourceLocation;
  /**
   * An S3 source's notification mode: the SQS queue S3 sends its ObjectCreated notifications to
   * (SLUICE_NOTIFICATION_QUEUE_URL; lib/aws/sqs/notification-discovery.ts). Absent: list the prefix.
   */
  readonly notificationQueueUrl?: string;
  /**
   * Where each of plan.inputs is read from (stream-stream joins, unions), in their order. Absent: from
   * each input's own load()/kinesis() location.
   */
  readonly inputs?: readonly SourceLocation[];
  readonly sink: SinkLocation;
  /** Malformed records (and, if set, late rows) land here. Default: `<checkpoint>/../dead-letter`. */
  readonly deadLetter?: S3Location;
  /** Also write rows dropped by the watermark to the dead-letter location (kind `late`). */
  readonly keepLateRows?: boolean;
  /** Lease duration; keep it at least the Lambda timeout. Default 15 minutes. */
  readonly leaseDurationMs?: number;
  /** Offsets/commits kept in the checkpoint. Default 100. */
  readonly retainBatches?: number;
  /** How many partitions the query's DynamoDB state is split into (`--state-partitions`). */
  readonly statePartitions?: number;
  /**
   * The query name the deployment expects (SLUICE_QUERY_NAME, the construct's `queryName`): its
   * role may touch only the state-table items of `<queryName>@<checkpoint>` (stateNamespace), so
   * a query of another name is refused before any request. @default any name
   */
  readonly queryName?: string;
}

export interface PipelineExtras {
  /**
   * The SDK clients to use (a Lambda container's, built once). The caller owns them: nothing here
   * destroys them. @default new clients for the connection, returned as `clients` for the caller to destroy
   */
  readonly clients?: AwsClients;
  readonly clock?: Clock;
  /** The processing time of new batches when it is not `clock`'s (ExecutorDeps.processingClock: a conformance step's clock). */
  readonly processingClock?: Clock;
  /** Crash the run as planned (tests, SLUICE_CRASH_AT): decorators in front of the ports. */
  readonly crash?: CrashPlan | CrashInjector;
  readonly log?: (event: Record<string, unknown>) => void;
  /** Replace the sink (e.g. a test's naive sink). */
  readonly sink?: Sink;
  /** Replace the sources of plan.inputs (a test's Kinesis streams), in their order. */
  readonly inputSources?: readonly Source[];
  /** Replace the source (e.g. a Kinesis source built elsewhere). */
  readonly source?: Source;
  /** Replace how the plan's static tables are opened (default: S3 and DynamoDB on the clients). */
  readonly staticTables?: StaticTables;
  /**
   * The state store's manifests and pages, shared with the other executors built with it (a
   * partitioned run's task container: one executor per task, one cache per container). @default the store's own
   * @internal the task containers (lib/aws/lambda/scale-out-handler.ts, lib/local/workers.ts) pass it
   */
  readonly stateCache?: DynamoDbStateCache;
}

/** The static tables of stream-static joins on these clients: S3 objects read whole, DynamoDB tables looked up by key. */
function awsStaticTables(clients: Pick<AwsClients, 's3' | 'dynamodb'>): StaticTables {
  return {
    open(spec) {
      if (spec.kind === 's3') return new S3StaticTable({ client: clients.s3, uri: spec.uri, format: spec.format, schema: spec.schema });
      if (spec.kind === 'dynamodb') return new DynamoDbStaticTable({ client: clients.dynamodb, tableName: spec.tableName, key: spec.key, schema: spec.schema });
      return { description: 'staticTable.rows', load: async () => [...spec.rows] };
    },
  };
}

/**
 * Where input k of a plan (a stream-stream join's or a union's other stream) is read from: the config's
 * `inputs[k]`, else the location its readStream gave (load('s3://...') or kinesis('stream')).
 */
function inputLocation(cfg: Pick<PipelineConfig, 'inputs'>, k: number, input: PlanInput): SourceLocation {
  const given = cfg.inputs?.[k];
  if (given) return given;
  const path = input.source.path;
  if (!path) {
    throw new InvalidOptionError(
      `the query's input ${input.name} (a stream-stream join's or a union's other stream) has no location: give it in the query (readStream...load('s3://bucket/prefix') or .kinesis('stream-name')) or in the pipeline config's inputs`,
    );
  }
  if (input.source.kind === 'kinesis') return { kind: 'kinesis', streamName: path.replace(/^arn:aws[a-z-]*:kinesis:[^:]*:\d+:stream\//, '') };
  return { kind: 's3', ...parseS3Uri(path, `input ${input.name}`) };
}

/** Parses `s3://bucket/prefix` into a location. */
export function parseS3Uri(uri: string, what: string): S3Location {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(uri.trim());
  if (!m) throw new InvalidOptionError(`${what} ${JSON.stringify(uri)} is not an S3 URI: write s3://<bucket>/<prefix>, e.g. s3://my-bucket/landing/events`);
  return { bucket: m[1], prefix: (m[2] ?? '').replace(/\/+$/, '') };
}

/**
 * A sink URI: `s3://bucket/prefix` (one JSON-lines object per batch),
 * `s3://bucket/prefix?log&partitionBy=col&granularity=day` (S3 files plus a sink log; with
 * `format=parquet`, Parquet objects instead of JSON lines), or
 * `dynamodb://table[/queryKey]` (the DynamoDB table sink with the batch-ID guard).
 */
export function parseSinkUri(uri: string, what = 'sink'): SinkLocation {
  const text = uri.trim();
  const ddb = /^dynamodb:\/\/([A-Za-z0-9_.-]{3,255})(?:\/([^#/]{1,200}))?\/?$/.exec(text);
  if (ddb) return { kind: 'dynamodb', table: ddb[1], ...(ddb[2] ? { queryKey: ddb[2] } : {}) };
  if (text.startsWith('dynamodb://')) {
    throw new InvalidOptionError(
      `${what} ${JSON.stringify(uri)} is not a DynamoDB sink URI: write dynamodb://<table> or dynamodb://<table>/<queryKey>, e.g. dynamodb://orders-per-minute`,
    );
  }
  if (!text.startsWith('s3://')) {
    throw new InvalidOptionError(
      `${what} ${JSON.stringify(uri)} has an unknown scheme: write s3://<bucket>/<prefix> for JSON-lines batch objects or dynamodb://<table> for a table`,
    );
  }
  const [base, query] = text.split('?', 2);
  const loc = parseS3Uri(base, what);
  if (query === undefined) return { kind: 's3', ...loc };
  const params = new URLSearchParams(query);
  for (const k of params.keys()) {
    if (!['log', 'format', 'partitionBy', 'granularity', 'header', ...CSV_SINK_OPTION_NAMES].includes(k)) {
      throw new InvalidOptionError(
        `${what} ${JSON.stringify(uri)}: unknown parameter ${JSON.stringify(k)}; an S3 file sink takes log, format, partitionBy, granularity and (format=csv) header and Spark's CSV writer options (${CSV_SINK_OPTION_NAMES.join(', ')}), e.g. s3://bucket/out?format=parquet&partitionBy=window.start&granularity=day`,
      );
    }
  }
  const format = params.get('format') ?? undefined;
  if (format !== undefined && !(SINK_FORMATS as readonly string[]).includes(format)) {
    throw new InvalidOptionError(
      `${what} ${JSON.stringify(uri)}: format ${JSON.stringify(format)} is not one the S3 file sink writes: write format=${SINK_FORMATS.join(' or format=')}`,
    );
  }
  const granularity = params.get('granularity') ?? undefined;
  if (granularity !== undefined && !['value', 'day', 'hour'].includes(granularity)) {
    throw new InvalidOptionError(
      `${what} ${JSON.stringify(uri)}: granularity ${JSON.stringify(granularity)} is not one the file sink knows: write granularity=value, day or hour`,
    );
  }
  const header = params.get('header');
  if (header !== null && (format !== 'csv' || !['true', 'false'].includes(header))) {
    throw new InvalidOptionError(
      `${what} ${JSON.stringify(uri)}: header=${header} is a parameter of format=csv, true or false: write s3://bucket/out?format=csv&header=true`,
    );
  }
  const csvOptions = Object.fromEntries([...params].filter(([k]) => CSV_SINK_OPTION_NAMES.includes(k)));
  if (Object.keys(csvOptions).length > 0) {
    if (format !== 'csv') {
      throw new InvalidOptionError(
        `${what} ${JSON.stringify(uri)}: ${Object.keys(csvOptions).join(', ')} ${Object.keys(csvOptions).length > 1 ? 'are parameters' : 'is a parameter'} of format=csv: add format=csv, or drop ${Object.keys(csvOptions).length > 1 ? 'them' : 'it'}`,
      );
    }
    try {
      csvSinkFormatOf(csvOptions);
    } catch (e) {
      if (e instanceof InvalidOptionError) throw new InvalidOptionError(`${what} ${JSON.stringify(uri)}: ${e.message}`);
      throw e;
    }
  }
  return {
    kind: 's3-files',
    ...loc,
    ...(format ? { format: format as SinkFormat } : {}),
    ...(header === 'true' ? { header: true } : {}),
    ...(Object.keys(csvOptions).length > 0 ? { csvOptions } : {}),
    ...(params.get('partitionBy') ? { partitionBy: params.get('partitionBy')! } : {}),
    ...(granularity ? { partitionGranularity: granularity as PartitionGranularity } : {}),
  };
}

export function describeSink(sink: SinkLocation): string {
  if (sink.kind === 'dynamodb') return `dynamodb://${sink.table}${sink.queryKey ? `/${sink.queryKey}` : ''}`;
  return `s3://${sink.bucket}/${sink.prefix}${sink.kind === 's3-files' ? ` (${sink.format === 'parquet' ? 'Parquet ' : sink.format === 'csv' ? 'CSV ' : ''}files + sink log)` : ''}`;
}

/** Where malformed records and kept late rows go: the config's, else a sibling of the checkpoint (its head() lists its own prefix). */
export function deadLetterLocation(cfg: Pick<PipelineConfig, 'deadLetter' | 'checkpoint'>): S3Location {
  return cfg.deadLetter ?? { bucket: cfg.checkpoint.bucket, prefix: `${cfg.checkpoint.prefix}-dead-letter` };
}

/**
 * The executor of `plan` on AWS, with every adapter it runs on. The SDK clients come from
 * `extras.clients` when given (a Lambda container's, which outlive the run); otherwise they are
 * created here and returned, and the caller destroys them when done.
 */
export function buildExecutor(conn: AwsConnection, given: QueryPlan, cfg: PipelineConfig, extras: PipelineExtras = {}) {
  // --state-partitions stands for the query's option('statePartitions', P)
  const plan = cfg.statePartitions === undefined ? given : { ...given, statePartitions: cfg.statePartitions };
  checkQueryName(plan, cfg);
  // A sibling of the checkpoint prefix, not inside it: the checkpoint's head() lists its prefix.
  const dl = deadLetterLocation(cfg);
  checkWrittenOutsideSources(plan, cfg, dl);
  const clients = extras.clients ?? createClients(conn);
  const checkpoint = new S3CheckpointStore({ client: clients.s3, bucket: cfg.checkpoint.bucket, prefix: cfg.checkpoint.prefix });
  // Notification mode (SLUICE_NOTIFICATION_QUEUE_URL): the main source's candidates come from the queue, not a listing.
  const notifications = extras.source ? undefined : notificationDiscovery(plan, cfg, clients, extras.log);
  const openSource = (loc: SourceLocation, spec: SourceSpec, limits: BatchLimits, sourceIndex: number): Source =>
    loc.kind === 's3'
      ? new S3LandingSource({
          client: clients.s3,
          bucket: loc.bucket,
          prefix: loc.prefix,
          schema: spec.schema,
          checkpoint,
          limits,
          log: extras.log,
          sourceIndex,
          format: spec.format,
          readerOptions: spec.options,
          ...landingOptionsFromSpec(spec.options),
          ...(sourceIndex === 0 && notifications ? { discovery: notifications } : {}),
        })
      : new KinesisSource({ client: clients.kinesis, streamName: loc.streamName, schema: spec.schema, checkpoint, ...kinesisOptionsFromSpec(spec.options) });
  const source: Source = extras.source ?? openSource(cfg.source, plan.source, plan.limits, 0);
  const inputs = plan.inputs ?? [];
  const inputSources: Source[] = extras.inputSources
    ? [...extras.inputSources]
    : inputs.map((input, k) => openSource(inputLocation(cfg, k, input), input.source, input.limits, k + 1));
  const namespace = stateNamespace(plan.name, cfg.checkpoint);
  const sinkLoc = cfg.sink;
  let sink: Sink;
  if (extras.sink) sink = extras.sink;
  else if (sinkLoc.kind === 's3') sink = new S3JsonSink({ client: clients.s3, bucket: sinkLoc.bucket, prefix: sinkLoc.prefix });
  else if (sinkLoc.kind === 's3-files') {
    const opts = {
      client: clients.s3,
      bucket: sinkLoc.bucket,
      prefix: sinkLoc.prefix,
      partitionBy: sinkLoc.partitionBy,
      partitionGranularity: sinkLoc.partitionGranularity,
    };
    sink =
      sinkLoc.format === 'parquet'
        ? new S3ParquetSink(opts)
        : sinkLoc.format === 'csv'
          ? new S3CsvSink({ ...opts, header: sinkLoc.header, options: sinkLoc.csvOptions })
          : new S3FileSink(opts);
  } else {
    sink = new DynamoDbSink({
      client: clients.dynamodb,
      tableName: sinkLoc.table,
      queryKey: sinkLoc.queryKey,
      leaseTable: cfg.stateTable,
      leaseKey: namespace,
      clock: extras.clock,
    });
  }
  const deadLetters = new S3DeadLetterSink({ client: clients.s3, bucket: dl.bucket, prefix: dl.prefix });
  const state = new DynamoDbStateStore({
    client: clients.dynamodb,
    tableName: cfg.stateTable,
    namespace,
    partitions: plan.statePartitions,
    clock: extras.clock,
    ...(extras.stateCache ? { cache: extras.stateCache } : {}),
  });
  const lease = new DynamoDbLease({ client: clients.dynamodb, tableName: cfg.stateTable, leaseKey: namespace, clock: extras.clock });
  // A test's crash (extras.crash) sits in front of the ports; the executor knows nothing of it.
  const ports = extras.crash ? crashingAt(extras.crash, { source, checkpoint, state, sink, lease }) : { source, checkpoint, state, sink, lease };
  const deps: ExecutorDeps = {
    plan,
    ...ports,
    inputSources,
    deadLetters,
    lateRows: cfg.keepLateRows || plan.lateRows === 'dead-letter' ? deadLetters : undefined,
    clock: extras.clock,
    ...(extras.processingClock ? { processingClock: extras.processingClock } : {}),
    log: extras.log,
    meter: clients.meter,
    staticTables: extras.staticTables ?? awsStaticTables(clients),
  };
  const options = { leaseDurationMs: cfg.leaseDurationMs, retainBatches: cfg.retainBatches };
  // Each run's report carries what its requests consumed (RunReport.consumed), from the clients'
  // meter, and each batch's progress record its own share (sluice.consumed).
  const metered = meterRuns(new MicroBatchExecutor(deps, options), clients.meter);
  // The messages a run took and did not commit are made visible again when it ends, so the next
  // run receives them at once (a run that dies without this gets them after their visibility timeout).
  const executor = notifications ? releasingAtEnd(metered, notifications) : metered;
  /**
   * A task of a partitioned run on the same ports (lib/engine/schedule/partitioned.ts): its hand-offs in
   * the shuffle beside the checkpoint (`<checkpoint>-shuffle`; head() lists the checkpoint's own
   * prefix, so they stay out of it). Build one per task, as a Lambda or a worker thread does.
   * @internal the task containers build it; a user's entry uses createPartitionedTaskLambda
   */
  const partitioned = (o: Pick<PartitionedOptions, 'maxSplits' | 'memo'> = {}) =>
    new PartitionedRun(
      { ...deps, shuffle: new S3ShuffleStore({ client: clients.s3, bucket: cfg.checkpoint.bucket, prefix: shufflePrefix(cfg.checkpoint) }) },
      { ...options, ...o },
    );
  return { executor, partitioned, clients, checkpoint, source, sink, state, lease, deadLetters };
}

/**
 * How the query's readStream says its files are found: `.option('discovery', 'notifications')`
 * (S3 event notifications through SQS, the CDK's `PipelineSource.s3(bucket, prefix, { discovery:
 * 'notifications' })`), or 'list' (the default).
 */
export function discoveryOf(spec: SourceSpec): 'list' | 'notifications' {
  const d = spec.options.discovery;
  if (d === undefined || d === 'list') return 'list';
  if (d === 'notifications' && spec.kind === 'files') return 'notifications';
  throw new InvalidOptionError(
    d === 'notifications'
      ? `option discovery='notifications' is for an S3 source (S3 event notifications), not a ${spec.kind} source: leave it out`
      : `option discovery=${JSON.stringify(d)} is not a discovery mode: use 'list' (the default) or 'notifications'`,
  );
}

/** Notification mode's discovery for the query's main source, or undefined in listing mode. */
function notificationDiscovery(plan: QueryPlan, cfg: PipelineConfig, clients: AwsClients, log: PipelineExtras['log']): NotificationFileDiscovery | undefined {
  if (cfg.notificationQueueUrl === undefined) {
    if (discoveryOf(plan.source) === 'notifications') {
      throw new InvalidOptionError(
        `the query reads its source with .option('discovery', 'notifications'), but no notification queue is given: deploy with PipelineSource.s3(bucket, prefix, { discovery: 'notifications' }) (it sets SLUICE_NOTIFICATION_QUEUE_URL), or run it with \`sluice run\`, which creates the queue on the local stack`,
      );
    }
    return undefined;
  }
  if (cfg.source.kind !== 's3') {
    throw new InvalidOptionError(
      `notification mode (queue ${cfg.notificationQueueUrl}) reads S3 event notifications, but the query's source is ${cfg.source.kind}: leave SLUICE_NOTIFICATION_QUEUE_URL out`,
    );
  }
  return new NotificationFileDiscovery(
    new SqsNotificationDiscovery({ client: clients.sqs, queueUrl: cfg.notificationQueueUrl, bucket: cfg.source.bucket, prefix: cfg.source.prefix, log }),
  );
}

/** The executor whose every run, however it ends, releases the notifications it still holds. */
function releasingAtEnd(executor: MicroBatchExecutor, discovery: NotificationFileDiscovery): MicroBatchExecutor {
  const run = executor.run.bind(executor);
  executor.run = async (o?: RunOptions) => {
    try {
      return await run(o);
    } finally {
      await discovery.release().catch(() => undefined);
    }
  };
  return executor;
}

/**
 * Refuses a query whose name is not the one the deployment scoped the state table to: its state
 * and lease would be under another namespace, which the role may not read or write (and a renamed
 * query would start from empty state while the checkpoint goes on).
 */
function checkQueryName(plan: QueryPlan, cfg: PipelineConfig): void {
  if (cfg.queryName === undefined || cfg.queryName === plan.name) return;
  throw new InvalidOptionError(
    `the query is named ${JSON.stringify(plan.name)}, but this deployment is for query ${JSON.stringify(cfg.queryName)} (SLUICE_QUERY_NAME): its role may read and write only the state-table items of ${JSON.stringify(stateNamespace(cfg.queryName, cfg.checkpoint))}. Set the AvailableNowPipeline's queryName prop to ${JSON.stringify(plan.name)} (its default is pipelineName)`,
    { details: { queryName: plan.name, expected: cfg.queryName } },
  );
}

/** Where a partitioned run's shuffle lives: beside the checkpoint's prefix. */
export function shufflePrefix(checkpoint: S3Location): string {
  return `${checkpoint.prefix}-shuffle`;
}

/**
 * Refuses, before any request, an S3 location the pipeline writes (checkpoint, S3 sink,
 * dead letters, shuffle) that the listing of any S3 input would see (lib/aws/locations.ts): the
 * query's first source and every stream-stream join input. With a source of the whole bucket, the
 * CLI's `_sluice/...` defaults would be read back as input; with the sink inside a join input's
 * prefix, the sink's own files would be read as that input's rows.
 */
function checkWrittenOutsideSources(plan: QueryPlan, cfg: PipelineConfig, deadLetter: S3Location): void {
  const written: NamedS3Location[] = [
    { name: 'the checkpoint', ...cfg.checkpoint },
    { name: 'the dead-letter location', ...deadLetter },
    { name: "the partitioned run's shuffle", bucket: cfg.checkpoint.bucket, prefix: shufflePrefix(cfg.checkpoint) },
  ];
  if (cfg.sink.kind === 's3' || cfg.sink.kind === 's3-files') written.splice(1, 0, { name: 'the sink', bucket: cfg.sink.bucket, prefix: cfg.sink.prefix });
  if (cfg.source.kind === 's3') checkOutsideSource({ name: 'the source', bucket: cfg.source.bucket, prefix: cfg.source.prefix }, written);
  (plan.inputs ?? []).forEach((input, k) => {
    const loc = inputLocation(cfg, k, input);
    if (loc.kind === 's3') checkOutsideSource({ name: `input ${input.name}`, bucket: loc.bucket, prefix: loc.prefix }, written);
  });
}

/**
 * Builds the executor (see buildExecutor) and runs it once, availableNow, up to `deadlineMs`;
 * `onProgress` hears each batch's progress record once it committed.
 */
export async function runPipeline(
  conn: AwsConnection,
  plan: QueryPlan,
  cfg: PipelineConfig,
  opts: PipelineExtras & Pick<RunOptions, 'deadlineMs' | 'onProgress'> = {},
): Promise<RunReport> {
  const { executor } = buildExecutor(conn, plan, cfg, opts);
  return executor.run({ deadlineMs: opts.deadlineMs, onProgress: opts.onProgress });
}
