#!/usr/bin/env node
/**
 * The sluice CLI (`npx sluice`), on commander. This is an edge: it alone reads process.env and
 * argv, and passes plain values down. `sluice --help` lists the commands; `sluice <command> --help`
 * explains one, with an example.
 *
 * Exit codes (EXIT_CODES, also in `sluice --help` and the README):
 *   0  done
 *   1  the run failed (an error while running), or `conformance check` found a mismatch
 *   2  the command line or the query is wrong: an unknown command or flag, a missing or invalid value
 *   3  `run` found the query's lease held by another run and did nothing
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { parseCase } from '../lib/conformance/case';
import { compareCase, CaseResult } from '../lib/conformance/results';
import { CRASH_POINTS, parseCrashPlan } from '../lib/engine/testing/crash';
import { parseInterval } from '../lib/engine/duration';
import { InvalidOptionError, InvalidQueryError, SluiceError } from '../lib/engine/errors';
import type { QueryPlan } from '../lib/engine/query';
import { connectionFromEnv, createClients } from '../lib/aws/clients';
import type { AwsConnection } from '../lib/aws/config';
import { buildExecutor, parseS3Uri, parseSinkUri, PipelineConfig, SinkLocation, SourceLocation } from '../lib/aws/pipeline';
import { prepareConformance, runCase, ConformanceOptions } from '../lib/conformance/runner';
import { putJsonRecords } from '../lib/conformance/kinesis';
import { ensureBucket, ensureStateTable, ensureStream } from '../lib/local/resources';
import { startLocalStack, LocalStack } from '../lib/local/stack';
import { SEED_FILES, showTotals, windowedTotals } from '../examples/windowed-totals';
import { initProject, INIT_SINKS, INIT_SOURCES } from './init';

export const EXIT_CODES = {
  ok: 0,
  failed: 1,
  usage: 2,
  leaseHeld: 3,
} as const;

const EXIT_HELP = `
Exit codes:
  0  done
  1  the run failed, or conformance check found a mismatch
  2  the command line or the query is wrong (unknown command or flag, missing or invalid value)
  3  run: the query's lease is held by another run; nothing was done`;

type Service = 'dynamodb' | 's3' | 'kinesis';

/** `--state-partitions <n>`: a positive integer. */
function positiveInteger(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n <= 0) {
    throw new InvalidArgumentError('The number of state partitions must be a positive integer: write e.g. --state-partitions 4.');
  }
  return n;
}

const awsOption = () => new Option('--aws', 'target real AWS (credentials and AWS_REGION from the environment) instead of the embedded local stack');
const statePartitionsOption = () =>
  new Option('--state-partitions <n>', 'split the query\'s DynamoDB state into n partitions (a positive integer)').argParser(positiveInteger);

/** The endpoint to use: AWS_ENDPOINT_URL (LocalStack), real AWS (--aws), or the embedded stack. */
async function connect(aws: boolean | undefined, services: Service[], dataDir?: string): Promise<{ conn: AwsConnection; stack?: LocalStack }> {
  const fromEnv = connectionFromEnv(process.env);
  if (fromEnv) return { conn: fromEnv };
  if (aws) return { conn: { region: process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1' } };
  const stack = await startLocalStack({ services, dataDir });
  return { conn: stack.connection, stack };
}

// ------------------------------------------------------------------------------- example seed

async function exampleSeed(aws: boolean | undefined): Promise<number> {
  const { conn, stack } = await connect(aws, ['dynamodb', 's3']);
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
    return EXIT_CODES.ok;
  } finally {
    await stack?.stop();
  }
}

async function exampleSeedKinesis(aws: boolean | undefined): Promise<number> {
  const { conn, stack } = await connect(aws, ['dynamodb', 's3', 'kinesis']);
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { runKinesisExample } = require('../lib/local/kinesis-demo') as typeof import('../lib/local/kinesis-demo');
    await runKinesisExample(conn);
    return EXIT_CODES.ok;
  } finally {
    await stack?.stop();
  }
}

// ------------------------------------------------------------------------------------------ run

/** Loads a query module; a .ts one through tsx (a dependency), unless TypeScript loads already. */
async function loadPlan(modulePath: string): Promise<QueryPlan> {
  const file = resolve(modulePath);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  if (/\.[cm]?tsx?$/.test(file) && !require.extensions['.ts']) require('tsx/cjs');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(file);
  const exported = mod.default ?? mod.query ?? mod.plan;
  const plan = typeof exported === 'function' ? exported() : exported;
  if (!plan || typeof plan !== 'object' || !('stateful' in plan) || !('source' in plan)) {
    throw new InvalidOptionError(
      `${modulePath} does not export a query: export default a QueryPlan (readStream...writeStream...plan()) or a function returning one`,
    );
  }
  return plan as QueryPlan;
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
    const lines = readFileSync(join(dir, n), 'utf8').split('\n').filter((l) => l.trim() !== '');
    const records = lines.map((line, i) => {
      try {
        return { data: JSON.parse(line) as unknown, partitionKey: `${n}:${i + 1}` };
      } catch {
        throw new InvalidOptionError(`--input ${join(dir, n)} line ${i + 1} is not JSON: each line becomes one Kinesis record, so write one JSON object per line`);
      }
    });
    await putJsonRecords(clients.kinesis, streamName, records);
    console.error(`sluice: put ${records.length} records from ${join(dir, n)} on kinesis://${streamName}`);
  }
}

interface RunOptions {
  source?: string;
  checkpoint?: string;
  sink?: string;
  stateTable: string;
  maxDuration?: string;
  input?: string;
  dataDir: string;
  ephemeral?: boolean;
  statePartitions?: number;
  aws?: boolean;
}

async function runQuery(modulePath: string, o: RunOptions): Promise<number> {
  const plan = await loadPlan(modulePath);
  const sourceUri = o.source ?? plan.source.path;
  if (!sourceUri) throw new InvalidOptionError("sluice run needs --source s3://bucket/prefix or kinesis://stream (or a path in the query's load(...))");
  const kinesis = /^kinesis:\/\/([A-Za-z0-9_.-]{1,128})$/.exec(sourceUri.trim());
  const source: SourceLocation = kinesis ? { kind: 'kinesis', streamName: kinesis[1] } : { kind: 's3', ...parseS3Uri(sourceUri, '--source') };
  const home = source.kind === 's3' ? source.bucket : 'sluice-local';
  const checkpoint = o.checkpoint ? parseS3Uri(o.checkpoint, '--checkpoint') : { bucket: home, prefix: `_sluice/${plan.name}/checkpoint` };
  const sink: SinkLocation = o.sink ? parseSinkUri(o.sink, '--sink') : { kind: 's3', bucket: home, prefix: `_sluice/${plan.name}/output` };
  const crash = parseCrashPlan(process.env.SLUICE_CRASH_AT);
  const deadlineMs = o.maxDuration ? Date.now() + parseInterval(o.maxDuration, '--max-duration').ms : undefined;
  const services: Service[] = source.kind === 'kinesis' ? ['dynamodb', 's3', 'kinesis'] : ['dynamodb', 's3'];
  const { conn, stack } = await connect(o.aws, services, o.ephemeral ? undefined : o.dataDir);
  try {
    if (stack) {
      const clients = createClients(conn);
      await Promise.all([
        source.kind === 's3' ? ensureBucket(clients.s3, source.bucket) : ensureStream(clients.kinesis, source.streamName, 2),
        ensureBucket(clients.s3, checkpoint.bucket),
        sink.kind === 'dynamodb' ? ensureStateTable(clients.dynamodb, sink.table) : ensureBucket(clients.s3, sink.bucket),
        ensureStateTable(clients.dynamodb, o.stateTable),
      ]);
    }
    if (o.input) {
      if (source.kind === 's3') await uploadInput(createClients(conn), o.input, source.bucket, source.prefix);
      else await putInputRecords(createClients(conn), o.input, source.streamName);
    }
    const cfg: PipelineConfig = { checkpoint, stateTable: o.stateTable, source, sink, ...(o.statePartitions ? { statePartitions: o.statePartitions } : {}) };
    const { executor } = buildExecutor(conn, plan, cfg, {
      crash: crash ?? undefined,
      log: (e) => console.error(JSON.stringify(e)),
    });
    const report = await executor.run({ deadlineMs, collectRows: true });
    const { batches, ...summary } = report;
    console.log(JSON.stringify({ ...summary, batches: batches.map((b) => ({ batchId: b.batchId, noData: b.noData, rowsIn: b.numInputRows, rows: b.rows })) }, null, 2));
    return report.stoppedBy === 'lease-held' ? EXIT_CODES.leaseHeld : EXIT_CODES.ok;
  } finally {
    await stack?.stop();
  }
}

// -------------------------------------------------------------------------------- conformance

interface ConformanceCliOptions {
  crash?: string;
  source: 's3' | 'kinesis';
  sink: 's3' | 'files' | 'dynamodb';
  statePartitions?: number;
  aws?: boolean;
}

async function conformance(sub: 'run' | 'check', files: string[], o: ConformanceCliOptions): Promise<number> {
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
      ...(await sourceFactoryFor(o.source, conn)),
    };
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
  return failed ? EXIT_CODES.failed : EXIT_CODES.ok;
}

async function sourceFactoryFor(kind: string, conn: AwsConnection): Promise<Pick<ConformanceOptions, 'sourceFactory'>> {
  if (kind === 's3') return {};
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require('../lib/conformance/kinesis') as { kinesisCaseSource: ConformanceOptions['sourceFactory'] extends infer F ? (conn: AwsConnection) => F : never };
  return { sourceFactory: mod.kinesisCaseSource(conn) };
}

// ---------------------------------------------------------------------------------- the program

/** The CLI's commands; `run` receives each command's exit code. */
export function buildProgram(done: (code: number) => void, version = '0.0.0'): Command {
  const program = new Command('sluice')
    .description('Spark Structured Streaming-style availableNow runs on AWS Lambda, and the tools to build, run and test them')
    .version(version, '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .showSuggestionAfterError(true)
    .addHelpText('after', EXIT_HELP)
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(`sluice: ${text.replace(/^error: /, '')}`) });

  program
    .command('init')
    .description('write a new pipeline project (query, Lambda handler, CDK app, sample input, a test) into <directory>')
    .argument('<directory>', 'the new project\'s folder (created; must be empty or absent); its name names the package')
    .addOption(new Option('--source <kind>', 'where the pipeline reads').choices(INIT_SOURCES).default('s3'))
    .addOption(new Option('--sink <kind>', 'where it writes (parquet: S3 Parquet files, needs a sluice with the Parquet sink)').choices(INIT_SINKS).default('s3'))
    .option('--sluice <spec>', 'the dependency spec for sluice in package.json: a version, or file:<path to a tarball or folder>')
    .addHelpText(
      'after',
      `
Example:
  npx sluice init my-pipeline --source kinesis --sink dynamodb
  cd my-pipeline && npm install && npm start && npm test`,
    )
    .action((dir: string, o: { source: (typeof INIT_SOURCES)[number]; sink: (typeof INIT_SINKS)[number]; sluice?: string }) => {
      const written = initProject({ dir: resolve(dir), source: o.source, sink: o.sink, sluiceSpec: o.sluice });
      console.log(`sluice: wrote ${written.files.length} files to ${written.dir}:`);
      for (const f of written.files) console.log(`  ${f}`);
      console.log(`\nnext: cd ${dir} && npm install && npm start   (then: npm test, npx cdk synth)`);
      done(EXIT_CODES.ok);
    });

  program
    .command('example')
    .description('run the reference windowed-totals example as three scheduled availableNow runs on the embedded local stack, in append and update mode, printing each run\'s rows')
    .addArgument(new Argument('[name]', 'the example').choices(['seed']).default('seed'))
    .addOption(new Option('--source <kind>', 'input as files under an S3 prefix, or records in a Kinesis stream').choices(['s3', 'kinesis']).default('s3'))
    .addOption(awsOption())
    .addHelpText('after', '\nExample:\n  npx sluice example seed --source kinesis')
    .action(async (_name: string, o: { source: 's3' | 'kinesis'; aws?: boolean }) => {
      done(o.source === 'kinesis' ? await exampleSeedKinesis(o.aws) : await exampleSeed(o.aws));
    });

  program
    .command('run')
    .description(
      'one availableNow run of the query a module exports (default export: a QueryPlan, or a function returning one); prints the run report as JSON. Targets AWS_ENDPOINT_URL when set (LocalStack), real AWS with --aws, otherwise the embedded local stack',
    )
    .argument('<query-module>', 'a .ts or .js module exporting the query')
    .option('--source <uri>', "s3://bucket/prefix or kinesis://stream (default: the path in the query's load(...))")
    .option('--checkpoint <uri>', 's3://bucket/prefix of the checkpoint (default: s3://<source bucket>/_sluice/<query>/checkpoint)')
    .option('--sink <uri>', 's3://bucket/prefix[?format=...] or dynamodb://table[/key] (default: s3://<source bucket>/_sluice/<query>/output)')
    .option('--state-table <name>', 'the DynamoDB table for state and the lease', 'sluice-state')
    .option('--max-duration <interval>', 'stop starting batches when this little time is left, e.g. 10m')
    .option('--input <folder>', "first put the folder's files into the source: new files into the S3 landing prefix, or each line as a Kinesis record")
    .option('--data-dir <folder>', "where the embedded stack keeps its data between runs", '.sluice/local')
    .option('--ephemeral', 'start the embedded stack with no data directory: every run starts from nothing')
    .addOption(statePartitionsOption())
    .addOption(awsOption())
    .addHelpText(
      'after',
      `
Failure injection: SLUICE_CRASH_AT=<point>[@batch] crashes the run there (points: ${CRASH_POINTS.join(', ')}).

Example:
  npx sluice run src/query.ts --source s3://sluice-local/landing --input sample --sink dynamodb://totals`,
    )
    .action(async (modulePath: string, o: RunOptions) => done(await runQuery(modulePath, o)));

  const conf = program
    .command('conformance')
    .description('run conformance cases (the executable spec, FORMAT.md) through the code a deployed pipeline runs')
    .addHelpText('after', '\nExample:\n  npx sluice conformance check --sink dynamodb test/conformance/cases/*.json');
  for (const sub of ['run', 'check'] as const) {
    conf
      .command(sub)
      .description(
        sub === 'run'
          ? 'print one JSON result per case'
          : 'compare each case with its "expect" and print ok or FAIL with the differences; exits 1 on a mismatch',
      )
      .argument('<case...>', 'CASE.json files')
      .option(
        '--crash <point[@batch]>',
        `crash each step's first run there (in any batch, or only in @batch) keeping its lease, as a killed Lambda does; the next run takes over and replays. Points: ${CRASH_POINTS.join(', ')} (mid-sink fires with sinks that write in pieces: dynamodb, files)`,
      )
      .addOption(new Option('--source <kind>', 'feed the cases through an S3 landing prefix or a Kinesis stream').choices(['s3', 'kinesis']).default('s3'))
      .addOption(
        new Option('--sink <kind>', 's3: one object per batch; files: the S3 file sink with its sink log; dynamodb: the DynamoDB table sink').choices(['s3', 'files', 'dynamodb']).default('s3'),
      )
      .addOption(statePartitionsOption())
      .addOption(awsOption())
      .addHelpText('after', `\nExample:\n  npx sluice conformance ${sub} --crash mid-sink@1 --sink dynamodb test/conformance/cases/*.json`)
      .action(async (files: string[], o: ConformanceCliOptions) => {
        if (o.crash) parseCrashPlan(o.crash); // a bad point is a usage error before any emulator starts
        done(await conformance(sub, files, o));
      });
  }
  // A command group without its subcommand prints its help and is a usage error.
  conf.action(() => {
    conf.outputHelp({ error: true });
    done(EXIT_CODES.usage);
  });
  for (const c of program.commands) c.exitOverride().configureOutput({ outputError: (text, write) => write(`sluice: ${text.replace(/^error: /, '')}`) }).showHelpAfterError(`(run "sluice ${c.name()} --help" for usage)`);
  for (const c of conf.commands) c.exitOverride().configureOutput({ outputError: (text, write) => write(`sluice: ${text.replace(/^error: /, '')}`) }).showHelpAfterError(`(run "sluice conformance ${c.name()} --help" for usage)`);
  return program;
}

function packageVersion(): string {
  for (const p of ['../package.json', '../../package.json']) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      return (require(p) as { version: string }).version;
    } catch {
      // not at this depth (the CLI runs from bin/ in the repository, from dist/bin/ in the package)
    }
  }
  return '0.0.0';
}

export async function main(argv: string[]): Promise<number> {
  // The AWS SDK warns on Node.js 20 that its releases after January 2027 will need Node.js 22; the
  // versions sluice pins support Node.js 20 (and the Lambda runs Node.js 22). README "The CLI".
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  let code: number | undefined;
  const program = buildProgram((c) => (code = c), packageVersion());
  if (argv.length === 0) {
    program.outputHelp({ error: true });
    return EXIT_CODES.usage;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return EXIT_CODES.ok;
      return EXIT_CODES.usage;
    }
    if (e instanceof InvalidOptionError || e instanceof InvalidQueryError) {
      console.error(`sluice: ${e.message}`);
      return EXIT_CODES.usage;
    }
    if (e instanceof SluiceError) console.error(`sluice: ${e.message}`);
    else console.error(e);
    return EXIT_CODES.failed;
  }
  return code ?? EXIT_CODES.ok;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      console.error(e);
      process.exit(EXIT_CODES.failed);
    },
  );
}
