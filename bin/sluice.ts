/**
 * The sluice CLI (`npx sluice`). This is an edge: it alone reads process.env and argv, and
 * passes plain values down.
 *
 *   sluice example seed                         the reference example as three scheduled runs
 *   sluice run <query-module> [options]         one availableNow run of a query
 *   sluice conformance run|check CASE.json...   the executable spec (FORMAT.md)
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { parseCase } from '../lib/conformance/case';
import { compareCase, CaseResult } from '../lib/conformance/results';
import { CRASH_POINTS, parseCrashPlan } from '../lib/engine/testing/crash';
import { parseInterval } from '../lib/engine/duration';
import { InvalidOptionError, SluiceError } from '../lib/engine/errors';
import type { QueryPlan } from '../lib/engine/query';
import { connectionFromEnv, createClients } from '../lib/aws/clients';
import type { AwsConnection } from '../lib/aws/config';
import { buildExecutor, parseS3Uri, parseSinkUri, PipelineConfig, SinkLocation, SourceLocation } from '../lib/aws/pipeline';
import { prepareConformance, runCase, ConformanceOptions } from '../lib/conformance/runner';
import { ensureBucket, ensureStateTable, ensureStream } from '../lib/local/resources';
import { startLocalStack, LocalStack } from '../lib/local/stack';
import { SEED_FILES, showTotals, windowedTotals } from '../examples/windowed-totals';

const USAGE = `usage:
  sluice example seed [--source kinesis]
      Runs the windowed-totals example of the reference article as three scheduled runs on the
      embedded local AWS stack, in append and then update mode, printing each run's rows; the
      input lands as files under an S3 prefix, or as records in a Kinesis stream.
  sluice run <query-module.ts> --source s3://bucket/prefix|kinesis://stream [--checkpoint s3://bucket/prefix]
             [--sink s3://bucket/prefix | dynamodb://table] [--state-table name] [--max-duration 10m]
             [--input ./folder]   (uploads the folder's new files into the landing prefix first)
      One availableNow run of the query the module exports (default export: a QueryPlan or a
      function returning one). Targets AWS_ENDPOINT_URL when set (LocalStack), real AWS with
      --aws, otherwise the embedded local stack.
  sluice conformance run   [--crash <point>[@batch]] [--source s3|kinesis] [--sink s3|files|dynamodb] CASE.json...
  sluice conformance check [--crash <point>[@batch]] [--source s3|kinesis] [--sink s3|files|dynamodb] CASE.json...
      Runs conformance cases (see FORMAT.md); check compares with "expect" and exits 1 on a mismatch.
      With --crash, each step's first run crashes there (in any batch, or only in @batch) and keeps
      its lease, as a killed Lambda does; the next run takes over once it expires and replays.
      Crash points: ${CRASH_POINTS.join(', ')} (mid-sink: after the first durable piece of a sink
      write, for sinks that write in pieces: --sink dynamodb or files).`;

interface Args {
  positional: string[];
  flags: Map<string, string | true>;
}

function parseArgs(argv: string[]): Args {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      if (eq > 0) flags.set(a.slice(2, eq), a.slice(eq + 1));
      else if (i + 1 < argv.length && !argv[i + 1].startsWith('--') && !['aws', 'help'].includes(a.slice(2))) flags.set(a.slice(2), argv[++i]);
      else flags.set(a.slice(2), true);
    } else positional.push(a);
  }
  return { positional, flags };
}

function flag(args: Args, name: string): string | undefined {
  const v = args.flags.get(name);
  if (v === true) throw new InvalidOptionError(`--${name} needs a value: write --${name} <value>`);
  return v;
}

/** The endpoint to use: AWS_ENDPOINT_URL (LocalStack), real AWS (--aws), or the embedded stack. */
async function connect(args: Args, services: Array<'dynamodb' | 's3' | 'kinesis'>, dataDir?: string): Promise<{ conn: AwsConnection; stack?: LocalStack }> {
  const fromEnv = connectionFromEnv(process.env);
  if (fromEnv) return { conn: fromEnv };
  if (args.flags.has('aws')) return { conn: { region: process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1' } };
  const stack = await startLocalStack({ services, dataDir });
  return { conn: stack.connection, stack };
}

async function exampleSeed(args: Args): Promise<number> {
  const { conn, stack } = await connect(args, ['dynamodb', 's3']);
  try {
    const clients = createClients(conn);
    const bucket = 'sluice-example';
    const table = 'sluice-example-state';
    await Promise.all([ensureBucket(clients.s3, bucket), ensureStateTable(clients.dynamodb, table)]);
    const runId = Date.now().toString(36);
    console.log('sluice: the windowed-totals example (reference/000), three scheduled availableNow runs');
    console.log('query: 10-minute tumbling windows on event_time, sum(amount) as total, count(*) as events, watermark 10 minutes\n');
    for (const mode of ['append', 'update'] as const) {
      const plan = windowedTotals({ outputMode: mode });
      const base = `${runId}/${mode}`;
      const cfg: PipelineConfig = {
        checkpoint: { bucket, prefix: `${base}/checkpoint` },
        stateTable: table,
        source: { kind: 's3', bucket, prefix: `${base}/landing` },
        sink: { kind: 's3', bucket, prefix: `${base}/sink` },
      };
      console.log(`${mode} mode  (landing s3://${bucket}/${base}/landing, checkpoint s3://${bucket}/${base}/checkpoint)`);
      for (let i = 0; i < SEED_FILES.length; i++) {
        const f = SEED_FILES[i];
        await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${base}/landing/${f.name}`, Body: f.rows.map((r) => JSON.stringify(r)).join('\n') }));
        const report = await buildExecutor(conn, plan, cfg).executor.run({ collectRows: true });
        const shown = showTotals(report.batches.flatMap((b) => b.rows));
        const dropped = report.droppedByWatermark ? `, ${report.droppedByWatermark} late row dropped` : '';
        console.log(
          `  run ${i + 1}: dropped ${f.name} -> batches ${report.batches.map((b) => b.batchId + (b.noData ? ' (no data)' : '')).join(', ')}; emitted [${shown}]; watermark ${report.watermark}${dropped}`,
        );
      }
      console.log('');
    }
    console.log('Expected (Spark): append run 1 [], run 2 [(12:00, 12:10, 19.0)], run 3 [(12:10, 12:20, 7.0), (12:20, 12:30, 3.0)];');
    console.log('                  update run 1 [(12:00, 12:10, 15.0), (12:10, 12:20, 7.0)], run 2 [(12:00, 12:10, 19.0), (12:20, 12:30, 3.0)], run 3 [(12:40, 12:50, 1.0)]');
    return 0;
  } finally {
    await stack?.stop();
  }
}

async function exampleSeedKinesis(args: Args): Promise<number> {
  const { conn, stack } = await connect(args, ['dynamodb', 's3', 'kinesis']);
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { runKinesisExample } = require('../lib/local/kinesis-demo') as typeof import('../lib/local/kinesis-demo');
    await runKinesisExample(conn);
    return 0;
  } finally {
    await stack?.stop();
  }
}

async function loadPlan(modulePath: string): Promise<QueryPlan> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(resolve(modulePath));
  const exported = mod.default ?? mod.query ?? mod.plan;
  const plan = typeof exported === 'function' ? exported() : exported;
  if (!plan || typeof plan !== 'object' || !('stateful' in plan) || !('source' in plan)) {
    throw new InvalidOptionError(
      `${modulePath} does not export a query: export default a QueryPlan (readStream...writeStream...plan()) or a function returning one`,
    );
  }
  return plan as QueryPlan;
}

/** Copies the files of a local folder into the landing prefix (those not there yet), in name order. */
async function uploadInput(clients: ReturnType<typeof createClients>, dir: string, bucket: string, prefix: string): Promise<void> {
  const names = readdirSync(dir).filter((n) => statSync(join(dir, n)).isFile()).sort();
  const existing = new Set<string>();
  let token: string | undefined;
  do {
    const page = await clients.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix ? `${prefix}/` : undefined, ContinuationToken: token }));
    for (const o of page.Contents ?? []) existing.add(o.Key!);
    token = page.NextContinuationToken;
  } while (token);
  for (const n of names) {
    const key = prefix ? `${prefix}/${n}` : n;
    if (existing.has(key)) continue;
    await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: readFileSync(join(dir, n)) }));
    console.error(`sluice: uploaded ${join(dir, n)} to s3://${bucket}/${key}`);
  }
}

async function runQuery(args: Args): Promise<number> {
  const modulePath = args.positional[1];
  if (!modulePath) throw new InvalidOptionError('sluice run needs a query module: sluice run examples/windowed-totals.ts --source s3://bucket/prefix');
  const plan = await loadPlan(modulePath);
  const sourceUri = flag(args, 'source') ?? plan.source.path;
  if (!sourceUri) throw new InvalidOptionError('sluice run needs --source s3://bucket/prefix (or a path in the query\'s load(...))');
  const kinesis = /^kinesis:\/\/([A-Za-z0-9_.-]{1,128})$/.exec(sourceUri.trim());
  const source: SourceLocation = kinesis ? { kind: 'kinesis', streamName: kinesis[1] } : { kind: 's3', ...parseS3Uri(sourceUri, '--source') };
  const home = source.kind === 's3' ? source.bucket : 'sluice-local';
  const checkpoint = flag(args, 'checkpoint') ? parseS3Uri(flag(args, 'checkpoint')!, '--checkpoint') : { bucket: home, prefix: `_sluice/${plan.name}/checkpoint` };
  const sink: SinkLocation = flag(args, 'sink') ? parseSinkUri(flag(args, 'sink')!, '--sink') : { kind: 's3', bucket: home, prefix: `_sluice/${plan.name}/output` };
  const stateTable = flag(args, 'state-table') ?? 'sluice-state';
  const maxDuration = flag(args, 'max-duration');
  const crash = parseCrashPlan(process.env.SLUICE_CRASH_AT);
  const services: Array<'dynamodb' | 's3' | 'kinesis'> = source.kind === 'kinesis' ? ['dynamodb', 's3', 'kinesis'] : ['dynamodb', 's3'];
  const { conn, stack } = await connect(args, services, flag(args, 'data-dir') ?? '.sluice/local');
  try {
    if (stack) {
      const clients = createClients(conn);
      await Promise.all([
        source.kind === 's3' ? ensureBucket(clients.s3, source.bucket) : ensureStream(clients.kinesis, source.streamName, 2),
        ensureBucket(clients.s3, checkpoint.bucket),
        sink.kind === 'dynamodb' ? ensureStateTable(clients.dynamodb, sink.table) : ensureBucket(clients.s3, sink.bucket),
        ensureStateTable(clients.dynamodb, stateTable),
      ]);
    }
    const input = flag(args, 'input');
    if (input) {
      if (source.kind !== 's3') throw new InvalidOptionError('--input uploads files into an S3 landing prefix: use it with --source s3://bucket/prefix');
      await uploadInput(createClients(conn), input, source.bucket, source.prefix);
    }
    const cfg: PipelineConfig = { checkpoint, stateTable, source, sink };
    const deadlineMs = maxDuration ? Date.now() + parseInterval(maxDuration, '--max-duration').ms : undefined;
    const { executor } = buildExecutor(conn, plan, cfg, {
      crash: crash ?? undefined,
      log: (e) => console.error(JSON.stringify(e)),
    });
    const report = await executor.run({ deadlineMs, collectRows: true });
    const { batches, ...summary } = report;
    console.log(JSON.stringify({ ...summary, batches: batches.map((b) => ({ batchId: b.batchId, noData: b.noData, rowsIn: b.numInputRows, rows: b.rows })) }, null, 2));
    return report.stoppedBy === 'lease-held' ? 3 : 0;
  } finally {
    await stack?.stop();
  }
}

async function conformance(args: Args): Promise<number> {
  const sub = args.positional[1];
  if (sub !== 'run' && sub !== 'check') throw new InvalidOptionError(`sluice conformance ${sub ?? ''}: use "run" or "check"\n${USAGE}`);
  const files = args.positional.slice(2);
  if (!files.length) throw new InvalidOptionError('sluice conformance needs at least one CASE.json');
  const crashText = flag(args, 'crash');
  const crash = crashText ? parseCrashPlan(crashText)! : undefined;
  const sourceKind = flag(args, 'source') ?? 's3';
  if (sourceKind !== 's3' && sourceKind !== 'kinesis') throw new InvalidOptionError(`--source ${sourceKind} is not s3 or kinesis`);
  const sinkKind = flag(args, 'sink') ?? 's3';
  if (sinkKind !== 's3' && sinkKind !== 'files' && sinkKind !== 'dynamodb') {
    throw new InvalidOptionError(`--sink ${sinkKind} is not one of s3 (one object per batch), files (S3 file sink with a sink log), dynamodb (the DynamoDB table sink)`);
  }
  const cases = files.map((f) => ({ file: f, text: readFileSync(f, 'utf8') }));
  const { conn, stack } = await connect(args, sourceKind === 'kinesis' ? ['dynamodb', 's3', 'kinesis'] : ['dynamodb', 's3']);
  let failed = 0;
  try {
    const opts: ConformanceOptions = { connection: conn, crash, sink: sinkKind, ...(await sourceFactoryFor(sourceKind, conn)) };
    await prepareConformance(conn, 'sluice-conformance', 'sluice-conformance-state');
    for (const { file, text } of cases) {
      let c;
      let result: CaseResult;
      try {
        c = parseCase(text, file);
        result = await runCase(c, opts);
      } catch (e) {
        result = { name: c?.name ?? file, error: (e as Error).message };
      }
      console.log(JSON.stringify(result));
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
  return failed ? 1 : 0;
}

async function sourceFactoryFor(kind: string, conn: AwsConnection): Promise<Pick<ConformanceOptions, 'sourceFactory'>> {
  if (kind === 's3') return {};
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require('../lib/conformance/kinesis') as { kinesisCaseSource: ConformanceOptions['sourceFactory'] extends infer F ? (conn: AwsConnection) => F : never };
  return { sourceFactory: mod.kinesisCaseSource(conn) };
}

async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  const cmd = args.positional[0];
  if (!cmd || args.flags.has('help') || cmd === 'help') {
    console.log(USAGE);
    return cmd ? 0 : 2;
  }
  switch (cmd) {
    case 'example':
      if ((args.positional[1] ?? 'seed') !== 'seed') throw new InvalidOptionError(`unknown example ${args.positional[1]}: the example is "seed"`);
      if ((flag(args, 'source') ?? 's3') === 'kinesis') return exampleSeedKinesis(args);
      return exampleSeed(args);
    case 'run':
      return runQuery(args);
    case 'conformance':
      return conformance(args);
    default:
      throw new InvalidOptionError(`unknown command ${JSON.stringify(cmd)}\n${USAGE}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    if (e instanceof SluiceError) console.error(`sluice: ${e.message}`);
    else console.error(e);
    process.exit(1);
  },
);
