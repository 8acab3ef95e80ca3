/**
 * The CLI's commands (bin/cli.ts defines the command line and loads this module only when a
 * command runs, so `--help` and usage errors answer without loading the AWS SDK).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { parseCase, type ConformanceCase } from '../lib/conformance/case';
import { compareCase, type CaseResult } from '../lib/conformance/results';
import { parseCrashPlan } from '../lib/engine/testing/crash';
import { InvalidOptionError, SluiceError } from '../lib/engine/errors';
import type { QueryPlan } from '../lib/engine/plan/types';
import { connectionFromEnv, createClients } from '../lib/aws/clients';
import type { AwsConnection } from '../lib/aws/config';
import {
  buildExecutor,
  discoveryOf,
  deadLetterLocation,
  describeSink,
  parseS3Uri,
  parseSinkUri,
  type PipelineConfig,
  type S3Location,
  type SinkLocation,
  type SourceLocation,
} from '../lib/aws/pipeline';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { S3CheckpointStore } from '../lib/aws/s3/checkpoint';
import { sourceIdentity } from '../lib/aws/source-identity';
import { parseShortDuration } from '../lib/observe/format';
import type { ArrivalSample } from '../lib/observe/lateness';
import type { LatenessSection } from '../lib/observe/report';
import { randomUUID } from 'node:crypto';
import type { RunReport } from '../lib/engine/run/types';
import { partitionedRunReport, runPartitioned } from '../lib/engine/schedule/driver';
import { loadQueryModule, WorkerPool } from '../lib/local/workers';
import { createRunDisplay } from '../lib/observe/progress-line';
import { analyseStatus, loadStatus, renderStatus } from '../lib/observe/status';
import { prepareConformance, runCase, type ConformanceOptions } from '../lib/conformance/runner';
import { putJsonRecords } from '../lib/conformance/kinesis';
import { ensureBucket, ensureNotificationQueue, ensureStateTable, ensureStream } from '../lib/local/resources';
import { startLocalStack, type LocalStack } from '../lib/local/stack';

export { EXIT_CODES } from './exit-codes';
import { EXIT_CODES } from './exit-codes';
import { explainPlan } from '../lib/observe/explain';

export type Service = 'dynamodb' | 's3' | 'kinesis' | 'sqs';

/** The endpoint to use: AWS_ENDPOINT_URL (LocalStack), real AWS (--aws), or the embedded stack. */
export async function connect(aws: boolean | undefined, services: Service[], dataDir?: string): Promise<{ conn: AwsConnection; stack?: LocalStack }> {
  const fromEnv = connectionFromEnv(process.env);
  if (fromEnv) return { conn: fromEnv };
  if (aws) return { conn: { region: process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1' } };
  const stack = await startLocalStack({ services, dataDir });
  return { conn: stack.connection, stack };
}

// ------------------------------------------------------------------------------------------ run

/** Loads a query module; a .ts one through tsx (a dependency), unless TypeScript loads already. */
export async function loadPlan(modulePath: string): Promise<QueryPlan> {
  try {
    return loadQueryModule(modulePath);
  } catch (e) {
    if (e instanceof SluiceError) throw e; // a missing module, no query exported, a query refused: already one line
    // a syntax error, a failed import, a throw at load: one line, not a stack trace (exit 2)
    // its first line, and the next ones while a line only announces them ("Transform failed with 1 error:")
    // duck-typed: an error thrown in the module may come from another realm (a test runner's)
    const err = e as { name?: unknown; message?: unknown } | null;
    const lines = (typeof err?.message === 'string' ? err.message : String(e)).split('\n').filter((l) => l.trim() !== '');
    const end = lines.findIndex((l) => !l.trimEnd().endsWith(':'));
    const first = lines.slice(0, end < 0 ? 1 : end + 1).join(' ') || 'no message';
    throw new InvalidOptionError(
      `query module ${modulePath} failed to load (${typeof err?.name === 'string' ? err.name : typeof e}: ${first.trim()}): fix the module; node --import tsx ${modulePath} shows the whole error`,
    );
  }
}

function inputFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((n) => statSync(join(dir, n)).isFile())
    .sort();
}

/** Copies the files of a local folder into the landing prefix (those not there yet), in name order. */
async function uploadInput(clients: ReturnType<typeof createClients>, dir: string, bucket: string, prefix: string): Promise<void> {
  const existing = new Set<string>();
  let token: string | undefined;
  do {
    const page = await clients.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix ? `${prefix}/` : undefined, ContinuationToken: token }));
    for (const o of page.Contents ?? []) existing.add(o.Key!);
    token = page.NextContinuationToken;
  } while (token);
  for (const n of inputFiles(dir)) {
    const key = prefix ? `${prefix}/${n}` : n;
    if (existing.has(key)) continue;
    await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: readFileSync(join(dir, n)) }));
    console.error(`sluice: uploaded ${join(dir, n)} to s3://${bucket}/${key}`);
  }
}

/** Puts each line of the folder's files (in name order) as one record. */
async function putInputRecords(clients: ReturnType<typeof createClients>, dir: string, streamName: string): Promise<void> {
  for (const n of inputFiles(dir)) {
    const lines = readFileSync(join(dir, n), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
    const records = lines.map((line, i) => {
      try {
        return { data: JSON.parse(line) as unknown, partitionKey: `${n}:${i + 1}` };
      } catch {
        throw new InvalidOptionError(
          `--input ${join(dir, n)} line ${i + 1} is not JSON: each line becomes one Kinesis record, so write one JSON object per line`,
        );
      }
    });
    await putJsonRecords(clients.kinesis, streamName, records);
    console.error(`sluice: put ${records.length} records from ${join(dir, n)} on kinesis://${streamName}`);
  }
}

/** The names the CLI feeds a query's inputs by: `input1` for its first stream, then each joined stream's join name (default input2, ...). */
export function inputNames(plan: QueryPlan): string[] {
  return ['input1', ...(plan.inputs ?? []).map((i) => i.name)];
}

/** `name=value` or a bare value; a name is what a join's `name` may be (1-64 letters, digits, '.', '_' or '-'). */
function splitNamed(text: string): { name?: string; value: string } {
  const m = /^([A-Za-z0-9][A-Za-z0-9_.-]{0,63})=(.*)$/s.exec(text);
  return m ? { name: m[1], value: m[2] } : { value: text };
}

/**
 * The values of a flag that may name one of the query's inputs (`--input clicks=./clicks`,
 * `--source clicks=s3://...`), by input index. A bare value is the only input's; with several
 * inputs every value names its input, and no input is named twice.
 */
export function valuesByInput(plan: QueryPlan, flag: string, given: string | readonly string[] | undefined, example: string): Map<number, string> {
  const list = given === undefined ? [] : typeof given === 'string' ? [given] : given;
  const names = inputNames(plan);
  const listed = `${names.map((n, i) => `${n}${i === 0 ? ' (its first stream)' : ''}`).join(', ')}`;
  const out = new Map<number, string>();
  for (const text of list) {
    const { name, value } = splitNamed(text);
    let index: number;
    if (name === undefined) {
      if (names.length > 1) {
        throw new InvalidOptionError(
          `${flag} ${text} names no input, but query ${plan.name} reads ${names.length} inputs (${listed}): name the one it feeds, e.g. ${flag} ${names[1]}=${example}`,
        );
      }
      index = 0;
    } else {
      index = names.indexOf(name);
      if (index < 0) {
        throw new InvalidOptionError(
          `${flag} ${text}: query ${plan.name} has no input named ${name}; its inputs are ${listed}: write ${flag} <input>=${example} with one of them`,
        );
      }
    }
    if (out.has(index)) {
      throw new InvalidOptionError(`${flag} ${text}: input ${names[index]} is given more than once: give each input once (${listed})`);
    }
    if (value.trim() === '') throw new InvalidOptionError(`${flag} ${text} has no value: write e.g. ${flag} ${name ? `${name}=` : ''}${example}`);
    out.set(index, value);
  }
  return out;
}

/** Where a query reads, keeps its checkpoint and writes: the flags, else the query's load(...) path and the defaults under `_sluice/<query>`. */
export function locationsOf(
  plan: QueryPlan,
  o: { source?: string | readonly string[]; checkpoint?: string; sink?: string },
): { source: SourceLocation; inputs: SourceLocation[]; checkpoint: S3Location; sink: SinkLocation } {
  const given = valuesByInput(plan, '--source', o.source, 's3://bucket/prefix');
  const names = inputNames(plan);
  const specs = [plan.source, ...(plan.inputs ?? []).map((i) => i.source)];
  const all = specs.map((spec, k) => {
    const uri = given.get(k) ?? spec.path;
    if (!uri) {
      throw new InvalidOptionError(
        names.length === 1
          ? "sluice needs --source s3://bucket/prefix or kinesis://stream (or a path in the query's load(...))"
          : `input ${names[k]} of query ${plan.name} has no location: give --source ${names[k]}=s3://bucket/prefix (or kinesis://stream), or a path in its load(...)`,
      );
    }
    const loc = given.has(k) ? sourceFromUri(uri) : spec.kind === 'kinesis' ? kinesisOfPath(uri) : sourceFromUri(uri);
    checkSourceKind(plan, spec, loc, uri, names.length > 1 ? names[k] : undefined);
    return loc;
  });
  const source = all[0];
  const checkpoint = o.checkpoint ? parseS3Uri(o.checkpoint, '--checkpoint') : defaultCheckpoint(plan, source);
  const sink: SinkLocation = o.sink ? parseSinkUri(o.sink, '--sink') : { kind: 's3', bucket: homeBucket(source), prefix: `_sluice/${plan.name}/output` };
  return { source, inputs: all.slice(1), checkpoint, sink };
}

/** A Kinesis query's kinesis('stream') path: a stream name or ARN. */
function kinesisOfPath(path: string): SourceLocation {
  if (/^kinesis:/i.test(path)) return sourceFromUri(path);
  return { kind: 'kinesis', streamName: path.replace(/^arn:aws[a-z-]*:kinesis:[^:]*:\d+:stream\//, '') };
}

/**
 * Refuses to report on a checkpoint created for another source than the one the command names
 * (--source, or the query's load path): the default checkpoint does not depend on the source, so
 * it would describe the old prefix's runs as the new one's.
 */
async function checkCheckpointSource(store: S3CheckpointStore, source: SourceLocation | null): Promise<void> {
  if (!source) return;
  const stored = (await store.head()).metadata?.sources?.[0];
  const given = sourceIdentity(source);
  if (stored === undefined || stored === given) return;
  throw new InvalidOptionError(
    `checkpoint ${store.description} belongs to the source ${stored}, not ${given}: name that source (--source ${stored}), or the checkpoint of ${given} (--checkpoint)`,
  );
}

function sourceFromUri(uri: string): SourceLocation {
  const text = uri.trim();
  if (/^kinesis:/i.test(text)) {
    const kinesis = /^kinesis:\/\/([A-Za-z0-9_.-]{1,128})$/.exec(text);
    if (!kinesis)
      throw new InvalidOptionError(
        `--source ${uri} is not a Kinesis stream URI: write kinesis://<stream name> (1 to 128 of A-Z a-z 0-9 _ . -), e.g. kinesis://events`,
      );
    return { kind: 'kinesis', streamName: kinesis[1] };
  }
  return { kind: 's3', ...parseS3Uri(uri, '--source') };
}

/** Refuses a source of the other kind than the query's input reads (readStream.format('kinesis') or files). */
function checkSourceKind(plan: QueryPlan, spec: QueryPlan['source'], source: SourceLocation, uri: string, input?: string): void {
  const wants = spec.kind === 'kinesis' ? 'kinesis' : 's3';
  if (source.kind === wants) return;
  const who = input ? `input ${input} of query ${plan.name}` : `query ${plan.name}`;
  const flag = input ? `--source ${input}=` : '--source ';
  throw new InvalidOptionError(
    wants === 'kinesis'
      ? `${who} reads a Kinesis stream (readStream.format('kinesis')), but --source ${uri} is an S3 prefix: give ${flag}kinesis://<stream>, or read files in the query`
      : `${who} reads files from S3, but --source ${uri} is a Kinesis stream: give ${flag}s3://bucket/prefix, or read .format('kinesis') in the query`,
  );
}

/** Where sluice keeps a query's own objects by default: the source's bucket, else sluice-local. */
function homeBucket(source: SourceLocation | null): string {
  return source?.kind === 's3' ? source.bucket : 'sluice-local';
}

/** The checkpoint `run` uses without --checkpoint: s3://<home bucket>/_sluice/<query>/checkpoint. */
function defaultCheckpoint(plan: QueryPlan, source: SourceLocation | null): S3Location {
  return { bucket: homeBucket(source), prefix: `_sluice/${plan.name}/checkpoint` };
}

export interface RunOptions {
  json?: boolean;
  /** `--source [input=]uri`, repeatable: one per input of the query. */
  source?: string[];
  checkpoint?: string;
  sink?: string;
  stateTable: string;
  maxDuration?: string;
  /** `--input [input=]folder`, repeatable: one per input of the query. */
  input?: string[];
  dataDir: string;
  ephemeral?: boolean;
  statePartitions?: number;
  workers?: number;
  aws?: boolean;
}

/** The folders of `--input`, by input index; each must be a folder. */
function inputFolders(plan: QueryPlan, given: readonly string[] | undefined): Map<number, string> {
  const folders = valuesByInput(plan, '--input', given, './folder');
  const names = inputNames(plan);
  for (const [k, dir] of folders) {
    let isDir = false;
    try {
      isDir = statSync(dir).isDirectory();
    } catch {
      // absent: said below
    }
    if (!isDir) {
      const flag = names.length > 1 ? `--input ${names[k]}=${dir}` : `--input ${dir}`;
      throw new InvalidOptionError(`${flag}: ${resolve(dir)} is not a folder: give a folder whose files are the input, e.g. --input ./sample`);
    }
  }
  return folders;
}

/**
 * Notification mode's queue: on the local stack, created with its dead-letter queue and the
 * bucket's notification (before any input is uploaded, so the uploads are announced); elsewhere
 * (--aws, AWS_ENDPOINT_URL) the one SLUICE_NOTIFICATION_QUEUE_URL names, as the Lambda is given it.
 */
async function notificationQueue(conn: AwsConnection, stack: LocalStack | undefined, source: SourceLocation, queryName: string): Promise<string> {
  if (source.kind !== 's3') throw new InvalidOptionError(`option discovery='notifications' is for an S3 source, not ${describeSource(source)}`);
  if (!stack) {
    const url = process.env.SLUICE_NOTIFICATION_QUEUE_URL;
    if (!url) {
      throw new InvalidOptionError(
        "the query reads with .option('discovery', 'notifications'): set SLUICE_NOTIFICATION_QUEUE_URL to the queue S3 notifies (the stack of PipelineSource.s3(bucket, prefix, { discovery: 'notifications' }) outputs it), or run on the local stack, which creates one",
      );
    }
    return url;
  }
  const clients = createClients(conn);
  try {
    const name = `sluice-${queryName.replace(/[^A-Za-z0-9_-]/g, '-')}-notifications`.slice(0, 76);
    return (await ensureNotificationQueue(clients, { bucket: source.bucket, prefix: source.prefix, name })).queueUrl;
  } finally {
    clients.destroy();
  }
}

/** Waits (at most 5 s) until the queue's message count holds still for 300 ms. */
async function queueSettled(conn: AwsConnection, queueUrl: string): Promise<void> {
  const clients = createClients(conn);
  try {
    let last = -1;
    let still = 0;
    for (let i = 0; i < 50 && still < 3; i++) {
      const res = await clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }));
      const n = Number(res.Attributes?.ApproximateNumberOfMessages ?? 0);
      still = n === last ? still + 1 : 0;
      last = n;
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    clients.destroy();
  }
}

export async function runQuery(modulePath: string, o: RunOptions): Promise<number> {
  const plan = await loadPlan(modulePath);
  const { source, inputs, checkpoint, sink } = locationsOf(plan, o);
  const folders = inputFolders(plan, o.input);
  const all = [source, ...inputs];
  const crash = parseCrashPlan(process.env.SLUICE_CRASH_AT);
  const deadlineMs = o.maxDuration ? Date.now() + parseShortDuration(o.maxDuration, '--max-duration') : undefined;
  // notification mode (.option('discovery', 'notifications')): the local stack runs SQS too, and S3 notifies it
  const notifications = discoveryOf(plan.source) === 'notifications';
  if (notifications && o.workers) {
    throw new InvalidOptionError(
      "--workers: the query reads with .option('discovery', 'notifications'), which does not run partitioned (a partitioned run discovers files in its plan task and commits in another, and the queue's receipt handles do not pass between them): leave out --workers, or the option",
    );
  }
  const services: Service[] = [
    'dynamodb',
    's3',
    ...(all.some((l) => l.kind === 'kinesis') ? (['kinesis'] as const) : []),
    ...(notifications ? (['sqs'] as const) : []),
  ];
  const { conn, stack } = await connect(o.aws, services, o.ephemeral ? undefined : o.dataDir);
  try {
    if (stack) {
      const clients = createClients(conn);
      await Promise.all([
        ...[...new Set(all.filter((l) => l.kind === 's3').map((l) => l.bucket))].map((b) => ensureBucket(clients.s3, b)),
        ...[...new Set(all.filter((l) => l.kind === 'kinesis').map((l) => l.streamName))].map((n) => ensureStream(clients.kinesis, n, 2)),
        ensureBucket(clients.s3, checkpoint.bucket),
        sink.kind === 'dynamodb' ? ensureStateTable(clients.dynamodb, sink.table) : ensureBucket(clients.s3, sink.bucket),
        ensureStateTable(clients.dynamodb, o.stateTable),
      ]);
    }
    const notificationQueueUrl = notifications ? await notificationQueue(conn, stack, source, plan.name) : undefined;
    for (const [k, dir] of [...folders].sort((a, b) => a[0] - b[0])) {
      const loc = all[k];
      if (loc.kind === 's3') await uploadInput(createClients(conn), dir, loc.bucket, loc.prefix);
      else await putInputRecords(createClients(conn), dir, loc.streamName);
    }
    // the local S3 notifies asynchronously: let the uploads' notifications reach the queue before the run notes what is there
    if (notificationQueueUrl && stack && folders.size > 0) await queueSettled(conn, notificationQueueUrl);
    const cfg: PipelineConfig = {
      checkpoint,
      stateTable: o.stateTable,
      source,
      ...(inputs.length ? { inputs } : {}),
      sink,
      ...(o.statePartitions ? { statePartitions: o.statePartitions } : {}),
      ...(notificationQueueUrl ? { notificationQueueUrl } : {}),
    };
    // On a terminal: a live line per batch and a short summary; otherwise (or --json) plain output.
    const display = createRunDisplay({ out: process.stdout, err: process.stderr, json: o.json === true, deadlineMs });
    const built = buildExecutor(conn, plan, cfg, { crash: crash ?? undefined, log: display.log });
    const startedMs = Date.now();
    const run = async (): Promise<RunReport> => {
      if (!o.workers) return built.executor.run({ deadlineMs, collectRows: true, onProgress: display.onProgress });
      // partitioned: the tasks on worker threads, as the deployed state machine runs them
      const pool = new WorkerPool(o.workers, { connection: conn, config: cfg, plan: { kind: 'module', path: resolve(modulePath) } });
      try {
        const { batches } = await runPartitioned(pool.handler({ crash: process.env.SLUICE_CRASH_AT || undefined }), {
          runId: randomUUID(),
          concurrency: o.workers,
        });
        return await partitionedRunReport(plan, built.checkpoint, batches);
      } finally {
        await pool.close();
      }
    };
    const report = await run().catch((e: unknown) => {
      display.abort();
      throw e;
    });
    const dl = deadLetterLocation(cfg);
    // from source (this repository) the CLI is `npm run sluice --`; from the package, `npx sluice`
    const cli = __filename.endsWith('.ts') ? 'npm run sluice --' : 'npx sluice';
    const flags = [
      ...(o.source ?? []).map((s) => `--source ${s}`),
      ...(o.checkpoint ? [`--checkpoint ${o.checkpoint}`] : []),
      ...(o.sink ? [`--sink ${o.sink}`] : []),
      ...(stack && o.dataDir !== '.sluice/local' ? [`--data-dir ${o.dataDir}`] : []),
      ...(o.aws ? ['--aws'] : []),
    ];
    display.finish(report, {
      // a DynamoDB sink keeps the rows under the URI's query key, else the checkpoint's query id
      output: sink.kind === 'dynamodb' && !sink.queryKey ? `${describeSink(sink)}/${report.queryId}` : describeSink(sink),
      // an --ephemeral stack is gone when the run ends: nothing to read back
      readBack: stack && o.ephemeral ? undefined : `${cli} show outputs|dead-letters|checkpoint ${modulePath}${flags.length ? ` ${flags.join(' ')}` : ''}`,
      checkpoint: `s3://${checkpoint.bucket}/${checkpoint.prefix}`,
      deadLetters: `s3://${dl.bucket}/${dl.prefix}`,
      elapsedMs: Date.now() - startedMs,
    });
    return report.stoppedBy === 'lease-held' ? EXIT_CODES.leaseHeld : EXIT_CODES.ok;
  } finally {
    await stack?.stop();
  }
}

// --------------------------------------------------------------------------------------- status

export interface StatusCliOptions {
  source?: string;
  checkpoint?: string;
  interval: string;
  runs: number;
  /** The verdict's thresholds (lib/observe/status.ts STATUS_DEFAULTS). */
  behindAt?: number;
  idleRuns?: number;
  stateGrowth?: number;
  json?: boolean;
  dataDir: string;
  aws?: boolean;
}

/** `sluice status`: the checkpoint's recent runs and batches as a table, and a verdict (lib/observe/status.ts). */
/** `sluice explain`: the query's plan as text (lib/observe/explain.ts), with no AWS call. */
export async function explainCommand(modulePath: string): Promise<number> {
  process.stdout.write(explainPlan(await loadPlan(modulePath)));
  return EXIT_CODES.ok;
}

export async function status(modulePath: string | undefined, o: StatusCliOptions): Promise<number> {
  const intervalMs = parseShortDuration(o.interval, '--interval');
  if (!modulePath && !o.checkpoint) {
    throw new InvalidOptionError(
      'sluice status needs the query module (as for sluice run) or --checkpoint s3://bucket/prefix: write e.g. sluice status src/query.ts',
    );
  }
  const plan = modulePath ? await loadPlan(modulePath) : null;
  const checkpoint = plan ? locationsOf(plan, o).checkpoint : parseS3Uri(o.checkpoint!, '--checkpoint');
  const { conn, stack } = await connect(o.aws, ['s3'], o.dataDir);
  const clients = createClients(conn);
  try {
    const store = new S3CheckpointStore({ client: clients.s3, bucket: checkpoint.bucket, prefix: checkpoint.prefix });
    await checkCheckpointSource(store, sourceOf(o, plan));
    const { records, tip } = await loadStatus(store);
    const a = analyseStatus(records, {
      nowMs: Date.now(),
      intervalMs,
      tip,
      runs: o.runs,
      ...(o.behindAt !== undefined ? { nearIntervalFraction: o.behindAt } : {}),
      ...(o.idleRuns !== undefined ? { noInputRuns: o.idleRuns } : {}),
      ...(o.stateGrowth !== undefined ? { stateGrowthPctPerDay: o.stateGrowth } : {}),
    });
    if (o.json) {
      console.log(JSON.stringify({ checkpoint: `s3://${checkpoint.bucket}/${checkpoint.prefix}`, ...a }, null, 2));
      return EXIT_CODES.ok;
    }
    console.log(renderStatus(a, `s3://${checkpoint.bucket}/${checkpoint.prefix}`, intervalMs));
    return EXIT_CODES.ok;
  } finally {
    clients.destroy();
    await stack?.stop();
  }
}

// -------------------------------------------------------------------------------- conformance

export interface ConformanceCliOptions {
  crash?: string;
  source: 's3' | 'kinesis';
  sink: 's3' | 'files' | 'dynamodb';
  statePartitions?: number;
  workers?: number;
  aws?: boolean;
}

export async function conformance(sub: 'run' | 'check', files: string[], o: ConformanceCliOptions): Promise<number> {
  const crash = o.crash ? parseCrashPlan(o.crash)! : undefined;
  const cases = files.map((f) => ({ file: f, text: readFileSync(f, 'utf8') }));
  const { conn, stack } = await connect(o.aws, o.source === 'kinesis' ? ['dynamodb', 's3', 'kinesis'] : ['dynamodb', 's3']);
  let failed = 0;
  try {
    const opts: ConformanceOptions = {
      connection: conn,
      crash,
      sink: o.sink,
      ...(o.statePartitions ? { statePartitions: o.statePartitions } : {}),
      ...(o.workers ? { workers: o.workers } : {}),
      ...(await sourceFactoryFor(o.source, conn)),
    };
    await prepareConformance(conn, 'sluice-conformance', 'sluice-conformance-state');
    for (const { file, text } of cases) {
      let c: ConformanceCase | undefined;
      let result: CaseResult;
      try {
        c = parseCase(text, file);
        result = await runCase(c, opts);
      } catch (e) {
        result = { name: c?.name ?? file, error: (e as Error).message };
      }
      const { crashesFired, ...printed } = result;
      console.log(JSON.stringify(printed));
      if (crash && crashesFired !== undefined) {
        const steps = c?.steps.length ?? 0;
        console.error(
          `crash ${o.crash} fired in ${crashesFired} of ${steps} step${steps === 1 ? '' : 's'} of ${result.name}${crashesFired === 0 ? ': the case never reaches that point on this sink, so this run is the same as one without a crash' : ''}`,
        );
      }
      if (sub === 'check') {
        const problems = c ? compareCase(c, result) : [`error: ${result.error}`];
        if (problems.length) {
          failed++;
          console.error(`FAIL ${result.name} (${file})`);
          for (const p of problems) console.error(`  ${p}`);
        } else console.error(`ok   ${result.name}`);
      }
    }
  } finally {
    await stack?.stop();
  }
  if (sub === 'check') console.error(`${cases.length - failed} passed, ${failed} failed`);
  return failed ? EXIT_CODES.failed : EXIT_CODES.ok;
}

async function sourceFactoryFor(kind: string, conn: AwsConnection): Promise<Pick<ConformanceOptions, 'sourceFactory'>> {
  if (kind === 's3') return {};
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require('../lib/conformance/kinesis') as {
    kinesisCaseSource: ConformanceOptions['sourceFactory'] extends infer F ? (conn: AwsConnection) => F : never;
  };
  return { sourceFactory: mod.kinesisCaseSource(conn) };
}

// ------------------------------------------------------------------------- report and lateness
// (its own import here, to keep this block apart from the rest of the file)
import { writeFileSync } from 'node:fs';

/** A --source URI as `run` reads it: kinesis://stream, else s3://bucket/prefix. */
/** --source, else the path in the query's load(...), else null. */
function sourceOf(o: { source?: string }, plan: QueryPlan | null): SourceLocation | null {
  if (o.source) return sourceFromUri(o.source);
  const path = plan?.source.path;
  if (!path) return null;
  return plan?.source.kind === 'kinesis' ? kinesisOfPath(path) : sourceFromUri(path);
}

/** The checkpoint as `run` finds it: --checkpoint, else s3://<source bucket, or sluice-local>/_sluice/<query>/checkpoint. */
function checkpointOf(o: { checkpoint?: string; source?: string }, plan: QueryPlan | null): { bucket: string; prefix: string } {
  if (o.checkpoint) return parseS3Uri(o.checkpoint, '--checkpoint');
  if (!plan)
    throw new InvalidOptionError('sluice report needs --checkpoint s3://bucket/prefix, or the query module whose default checkpoint `sluice run` used');
  return defaultCheckpoint(plan, sourceOf(o, plan));
}

export interface LatenessCliOptions {
  source?: string;
  column?: string;
  sample: number;
  since: string;
  delay?: string;
  json?: boolean;
  dataDir: string;
  aws?: boolean;
}

/** Samples the source's lateness; the column defaults to the query's watermark column, the current delay to its delay. */
async function measureLateness(conn: AwsConnection, source: SourceLocation, column: string, o: { sample: number; since: string; delayMs?: number }) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { latenessStats, latenessHistogram, parseDurationFlag }: typeof import('../lib/observe/lateness') = require('../lib/observe/lateness');
  const sinceMs = Date.now() - parseDurationFlag(o.since, '--since');
  const clients = createClients(conn);
  // Loaded when used, as the other commands' modules; annotated rather than cast, so that knip sees which exports are used.
  let sample: ArrivalSample;
  if (source.kind === 's3') {
    const { sampleS3Arrivals }: typeof import('../lib/aws/s3/arrivals') = require('../lib/aws/s3/arrivals');
    sample = await sampleS3Arrivals({ client: clients.s3, bucket: source.bucket, prefix: source.prefix, column, sinceMs, sample: o.sample });
  } else {
    const { sampleKinesisArrivals }: typeof import('../lib/aws/kinesis/arrivals') = require('../lib/aws/kinesis/arrivals');
    sample = await sampleKinesisArrivals({ client: clients.kinesis, streamName: source.streamName, column, sinceMs, sample: o.sample });
  }
  const stats = latenessStats(sample.latenessMs, { currentDelayMs: o.delayMs, unreadable: sample.unreadable });
  return { sample, stats, histogram: latenessHistogram(sample.latenessMs) };
}

function describeSource(s: SourceLocation): string {
  return s.kind === 's3' ? `s3://${s.bucket}/${s.prefix}` : `kinesis://${s.streamName}`;
}

function watermarkOf(plan: QueryPlan | null, column?: string): { column: string; delayMs: number } | undefined {
  const marks = (plan?.stages ?? []).filter((s): s is Extract<QueryPlan['stages'][number], { kind: 'watermark' }> => s.kind === 'watermark');
  return marks.find((m) => column === undefined || m.column === column);
}

export async function latenessCommand(modulePath: string | undefined, o: LatenessCliOptions): Promise<number> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { formatLatenessText, parseDurationFlag }: typeof import('../lib/observe/lateness') = require('../lib/observe/lateness');
  const plan = modulePath ? await loadPlan(modulePath) : null;
  const source = sourceOf(o, plan);
  if (!source)
    throw new InvalidOptionError('sluice lateness needs --source s3://bucket/prefix or kinesis://stream (or a query module with a path in its load(...))');
  const mark = watermarkOf(plan, o.column);
  const column = o.column ?? mark?.column;
  if (!column) throw new InvalidOptionError('sluice lateness needs --column <event-time field>, or a query module with withWatermark(column, delay)');
  const delayMs = o.delay !== undefined ? parseDurationFlag(o.delay, '--delay') : mark?.delayMs;
  parseDurationFlag(o.since, '--since'); // a bad value is a usage error before any emulator starts
  const { conn, stack } = await connect(o.aws, [source.kind === 's3' ? 's3' : 'kinesis'], o.dataDir);
  try {
    const { sample, stats } = await measureLateness(conn, source, column, { sample: o.sample, since: o.since, delayMs });
    if (o.json) console.log(JSON.stringify({ source: describeSource(source), column, sampled: sample.sampled, capped: sample.capped, ...stats }, null, 2));
    else
      console.log(
        formatLatenessText(stats, {
          source: describeSource(source),
          column,
          sampled: sample.sampled + (sample.capped ? ` (capped at --sample ${o.sample})` : ''),
        }),
      );
    return EXIT_CODES.ok;
  } finally {
    await stack?.stop();
  }
}

export interface ReportCliOptions {
  checkpoint?: string;
  source?: string;
  out: string;
  interval: string;
  latenessColumn?: string;
  sample: number;
  since: string;
  dataDir: string;
  aws?: boolean;
}

export async function reportCommand(modulePath: string | undefined, o: ReportCliOptions): Promise<number> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { parseDurationFlag }: typeof import('../lib/observe/lateness') = require('../lib/observe/lateness');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { buildReport }: typeof import('../lib/observe/report') = require('../lib/observe/report');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { loadProgressHistory }: typeof import('../lib/observe/history') = require('../lib/observe/history');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { S3CheckpointStore }: typeof import('../lib/aws/s3/checkpoint') = require('../lib/aws/s3/checkpoint');
  const plan = modulePath ? await loadPlan(modulePath) : null;
  const checkpoint = checkpointOf(o, plan);
  const intervalMs = parseDurationFlag(o.interval, '--interval');
  if (intervalMs <= 0) throw new InvalidOptionError(`--interval ${o.interval} must be positive: give the schedule the query runs on, e.g. 15m`);
  parseDurationFlag(o.since, '--since');
  const source = o.latenessColumn ? sourceOf(o, plan) : null;
  if (o.latenessColumn && !source)
    throw new InvalidOptionError(
      'sluice report --lateness-column needs --source s3://bucket/prefix or kinesis://stream (or a query module with a path in its load(...))',
    );
  const assets = {
    uplotJs: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'),
    uplotCss: readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'),
  };
  const services: Service[] = source?.kind === 'kinesis' ? ['s3', 'kinesis'] : ['s3'];
  const { conn, stack } = await connect(o.aws, services, o.dataDir);
  try {
    const store = new S3CheckpointStore({ client: createClients(conn).s3, bucket: checkpoint.bucket, prefix: checkpoint.prefix, conditionalWrites: false });
    await checkCheckpointSource(store, sourceOf(o, plan));
    const records = await loadProgressHistory(store);
    if (records.length === 0) {
      throw new InvalidOptionError(`${store.description} holds no progress records: run the query first (sluice run), or point --checkpoint at its checkpoint`);
    }
    let lateness: LatenessSection | undefined;
    if (source && o.latenessColumn) {
      const { stats, histogram } = await measureLateness(conn, source, o.latenessColumn, o);
      lateness = { source: describeSource(source), column: o.latenessColumn, stats, histogram };
    }
    const html = buildReport(records, { intervalMs, checkpoint: store.description, generatedAtMs: Date.now(), assets, ...(lateness ? { lateness } : {}) });
    writeFileSync(o.out, html);
    console.log(`sluice: wrote ${resolve(o.out)} (${records.length} batches, ${(html.length / 1024).toFixed(0)} KiB; opens offline)`);
    return EXIT_CODES.ok;
  } finally {
    await stack?.stop();
  }
}
