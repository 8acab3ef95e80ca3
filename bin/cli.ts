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
import { resolve } from 'node:path';
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { CRASH_POINTS, parseCrashPlan } from '../lib/engine/testing/crash';
import { InvalidOptionError, InvalidQueryError, SluiceError } from '../lib/engine/errors';
import type { ConformanceCliOptions, LatenessCliOptions, ReportCliOptions, RunOptions, StatusCliOptions } from './commands';
import type { ShowCliOptions } from './show';
import { initProject, INIT_FORMATS, INIT_LANGS, INIT_SINKS, INIT_SOURCES } from './init';

export { EXIT_CODES } from './exit-codes';
import { EXIT_CODES } from './exit-codes';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const commands = () => require('./commands') as typeof import('./commands');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadShow = () => require('./show') as typeof import('./show');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadExample = () => require('./example') as typeof import('./example');

/** sluice show's views (bin/show.ts SHOW_VIEWS, repeated here so that help loads nothing else). */
const SHOW_VIEWS = ['outputs', 'dead-letters', 'checkpoint', 'state'] as const;
type ShowView = (typeof SHOW_VIEWS)[number];

const EXIT_HELP = `
Exit codes:
  0  done
  1  the run failed, or conformance check found a mismatch
  2  the command line or the query is wrong (unknown command or flag, missing or invalid value)
  3  run: the query's lease is held by another run; nothing was done`;

/** `--state-partitions <n>` (and `--runs <n>`): a positive integer. */
function positiveIntegerFor(example: string, what = 'The number'): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n <= 0)
      throw new InvalidArgumentError(`${what} must be a positive integer: write e.g. ${example}.`);
    return n;
  };
}
const positiveInteger = positiveIntegerFor('--state-partitions 4', 'The number of state partitions');

/** A flag that may be given once per input (`--input clicks=./clicks --input input1=./imps`): its values in order. */
function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** A positive number no greater than `max` (a fraction, a percentage). */
function positiveNumberFor(flag: string, example: string, max = Number.POSITIVE_INFINITY): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\s*\d+(\.\d+)?\s*$/.test(value) || !(n > 0) || n > max) {
      throw new InvalidArgumentError(
        `${flag} ${value} must be a number above 0${max < Number.POSITIVE_INFINITY ? ` and at most ${max}` : ''}: write e.g. ${flag} ${example}.`,
      );
    }
    return n;
  };
}

const awsOption = () => new Option('--aws', 'target real AWS (credentials and AWS_REGION from the environment) instead of the embedded local stack');
const statePartitionsOption = () =>
  new Option('--state-partitions <n>', "split the query's DynamoDB state into n partitions (a positive integer)").argParser(positiveInteger);
const workersOption = () =>
  new Option(
    '--workers <n>',
    'run each run partitioned on n worker threads: plan, read, partition and commit tasks, as the deployed state machine runs them (a positive integer)',
  ).argParser(positiveInteger);

/**
 * Commander's usage errors as one line: `sluice: <what is wrong> (<likely fix>) (run "<help>" for
 * usage)`, its suggestion ("Did you mean --source?") joined onto the line.
 */
function oneLineError(help: string): (text: string, write: (s: string) => void) => void {
  return (text, write) =>
    write(
      `sluice: ${text
        .replace(/^error: /, '')
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
        .join(' ')} (run "${help}" for usage)\n`,
    );
}

// ---------------------------------------------------------------------------------- the program

/** The CLI's commands; `run` receives each command's exit code. */
export function buildProgram(done: (code: number) => void, version = '0.0.0'): Command {
  const program = new Command('sluice')
    .description('Spark Structured Streaming-style availableNow runs on AWS Lambda, and the tools to build, run and test them')
    .version(version, '-V, --version')
    .showSuggestionAfterError(true)
    .addHelpText('after', EXIT_HELP)
    .exitOverride()
    .configureOutput({ outputError: oneLineError('sluice --help') });

  program
    .command('init')
    .description('write a new pipeline project (query, Lambda handler, CDK app, sample input, a test) into <directory>')
    .argument('<directory>', "the new project's folder (created; must be empty or absent); its name names the package")
    .addOption(new Option('--source <kind>', 'where the pipeline reads').choices(INIT_SOURCES).default('s3'))
    .addOption(
      new Option('--format <format>', "the landing files' format of an S3 source (csv: with a header row); a Kinesis source reads JSON only")
        .choices(INIT_FORMATS)
        .default('json'),
    )
    .addOption(
      new Option(
        '--sink <kind>',
        'where it writes (parquet: S3 Parquet files, needs a sluice with the Parquet sink; csv: S3 CSV files with a header row, the window as columns window_start and window_end)',
      )
        .choices(INIT_SINKS)
        .default('s3'),
    )
    .addOption(
      new Option('--lang <lang>', 'the query as a TypeScript module (src/query.ts) or in SQL (src/query.sql, docs/sql.md)').choices(INIT_LANGS).default('ts'),
    )
    .option('--processor', 'also write src/sessions.ts: a transformWithState query with its stateful processor (docs/transform-with-state.md)')
    .option('--sluice <spec>', 'the dependency spec for sluice in package.json: a version, or file:<path to a tarball or folder>')
    .addHelpText(
      'after',
      `
Example:
  npx sluice init my-pipeline --source kinesis --sink dynamodb
  npx sluice init my-pipeline --format csv
  npx sluice init my-pipeline --sink csv
  npx sluice init my-pipeline --lang sql
  npx sluice init my-pipeline --processor
  cd my-pipeline && npm install && npm start && npm test`,
    )
    .action(
      (
        dir: string,
        o: {
          source: (typeof INIT_SOURCES)[number];
          format: (typeof INIT_FORMATS)[number];
          sink: (typeof INIT_SINKS)[number];
          lang: (typeof INIT_LANGS)[number];
          processor?: boolean;
          sluice?: string;
        },
      ) => {
        const written = initProject({
          dir: resolve(dir),
          source: o.source,
          format: o.format,
          sink: o.sink,
          lang: o.lang,
          sluiceSpec: o.sluice,
          ...(o.processor ? { processor: true } : {}),
        });
        console.log(`sluice: wrote ${written.files.length} files to ${written.dir}:`);
        for (const f of written.files) console.log(`  ${f}`);
        console.log(`\nthe query (${o.lang === 'sql' ? 'src/query.sql' : 'src/query.ts'}) reads ${written.reads}; sample/ holds some`);
        console.log(`\nnext: cd ${dir} && npm install && npm start   (then: npm test, npx cdk synth)`);
        done(EXIT_CODES.ok);
      },
    );

  program
    .command('example')
    .description(
      "run the reference windowed-totals example as three scheduled availableNow runs on the embedded local stack, in append and update mode, printing each run's rows",
    )
    .addArgument(new Argument('[name]', 'the example').choices(['seed']).default('seed'))
    .addOption(new Option('--source <kind>', 'input as files under an S3 prefix, or records in a Kinesis stream').choices(['s3', 'kinesis']).default('s3'))
    .addOption(
      new Option('--discovery <mode>', "how the S3 source finds new files: listing the prefix, or S3's event notifications through SQS (notification mode)")
        .choices(['list', 'notifications'])
        .default('list'),
    )
    .option('--data-dir <folder>', 'where the embedded stack keeps its data (sluice status reads the runs from there afterwards)', '.sluice/local')
    .option('--ephemeral', 'start the embedded stack with no data directory')
    .addOption(awsOption())
    .addHelpText('after', '\nExample:\n  npx sluice example seed --source kinesis\n  npx sluice example seed --discovery notifications')
    .action(
      async (_name: string, o: { source: 's3' | 'kinesis'; discovery: 'list' | 'notifications'; aws?: boolean; dataDir: string; ephemeral?: boolean }) => {
        const dataDir = o.ephemeral ? undefined : o.dataDir;
        if (o.source === 'kinesis' && o.discovery !== 'list') {
          throw new InvalidOptionError(
            `--discovery ${o.discovery} is how an S3 source finds files, not a Kinesis stream: leave out --source kinesis, or --discovery`,
          );
        }
        done(o.source === 'kinesis' ? await loadExample().exampleSeedKinesis(o.aws, dataDir) : await loadExample().exampleSeed(o.aws, dataDir, o.discovery));
      },
    );

  program
    .command('run')
    .description(
      'one availableNow run of the query a module exports (default export: a QueryPlan, or a function returning one); prints a summary (--json: the run report). Targets AWS_ENDPOINT_URL when set (LocalStack), real AWS with --aws, otherwise the embedded local stack',
    )
    .argument('<query-module>', 'a .ts or .js module exporting the query')
    .option(
      '--source <[input=]uri>',
      "s3://bucket/prefix or kinesis://stream (default: the path in the input's load(...) or kinesis(...)); with several inputs, once per input to move: --source clicks=s3://bucket/clicks",
      collect,
    )
    .option('--checkpoint <uri>', 's3://bucket/prefix of the checkpoint (default: s3://<source bucket>/_sluice/<query>/checkpoint)')
    .option('--sink <uri>', 's3://bucket/prefix[?format=...] or dynamodb://table[/key] (default: s3://<source bucket>/_sluice/<query>/output)')
    .option('--state-table <name>', 'the DynamoDB table for state and the lease', 'sluice-state')
    .option('--max-duration <interval>', 'stop starting batches when this little time is left, e.g. 10m')
    .option(
      '--input <[input=]folder>',
      "first put the folder's files into the input's source: new files into its S3 landing prefix, or each line as a Kinesis record; with several inputs, once per input: --input clicks=./clicks",
      collect,
    )
    .option('--data-dir <folder>', 'where the embedded stack keeps its data between runs', '.sluice/local')
    .option('--ephemeral', 'start the embedded stack with no data directory: every run starts from nothing')
    .addOption(statePartitionsOption())
    .addOption(workersOption())
    .addOption(awsOption())
    .option('--json', "print the machine-readable run report (with each batch's progress record) instead of the summary")
    .addHelpText(
      'after',
      `
On a terminal a live line shows the batch, rows/s, watermark, backlog and time left; then a short summary.

Several inputs (a stream-stream join): the query's first stream is the input named input1, each
joined stream the input its join names (join(other, on, type, { name: 'clicks' }); default input2,
input3, ...). Each input reads the location its load(...) or kinesis(...) gives, unless
--source <input>=<uri> moves it; --input <input>=<folder> feeds it. A bare --input or --source is
for a query with one input.

Failure injection: SLUICE_CRASH_AT=<point>[@batch] crashes the run there (points: ${CRASH_POINTS.join(', ')}).

Example:
  npx sluice run src/query.ts --source s3://sluice-local/landing --input sample --sink dynamodb://totals
  npx sluice run src/ad-clicks.ts --input input1=./impressions --input clicks=./clicks`,
    )
    .action(async (modulePath: string, o: RunOptions) => done(await commands().runQuery(modulePath, o)));

  program
    .command('explain')
    .description(
      "print the query's plan: its source and columns, every stage and stateful operator in the order a batch runs them (with the filters Spark's optimizer moves and the columns it leaves uncomputed), each operator's columns, event time and state, the other inputs, and the output's columns; no AWS call",
    )
    .argument('<query-module>', 'the query module, as for run (a .ts/.js module or a .sql file)')
    .addHelpText('after', '\nExample:\n  npx sluice explain src/query.ts')
    .action(async (modulePath: string) => done(await commands().explainCommand(modulePath)));

  program
    .command('status')
    .description("the recent runs and batches of a query's checkpoint as a table, and a verdict: healthy, falling behind, no input, state growing, failing")
    .argument('[query-module]', 'the query module, as for run (or give --checkpoint)')
    .option('--source <uri>', 'as for run: locates the default checkpoint')
    .option('--checkpoint <uri>', 's3://bucket/prefix of the checkpoint (default: as run picks it)')
    .option('--interval <duration>', 'the schedule interval durations are measured against, e.g. 15m, 1h', '15m')
    .addOption(new Option('--runs <n>', 'show the last n runs (a positive integer)').argParser(positiveIntegerFor('--runs 10')).default(5))
    .addOption(
      new Option('--behind-at <fraction>', 'a run or batch taking this fraction of the interval or more is falling behind (0 to 1)')
        .argParser(positiveNumberFor('--behind-at', '0.5', 1))
        .default(0.8),
    )
    .addOption(
      new Option('--idle-runs <n>', 'runs without input before the verdict says "no input" (a positive integer)')
        .argParser(positiveIntegerFor('--idle-runs 4'))
        .default(2),
    )
    .addOption(
      new Option('--state-growth <percent>', 'state growth a day (fitted over the retained batches) the verdict reports')
        .argParser(positiveNumberFor('--state-growth', '5'))
        .default(10),
    )
    .option('--json', 'print the analysis as JSON')
    .option('--data-dir <folder>', 'where the embedded stack keeps its data (as for run)', '.sluice/local')
    .addOption(awsOption())
    .addHelpText(
      'after',
      '\nExample:\n  npx sluice status src/query.ts --interval 15m\n  npx sluice status --checkpoint s3://my-bucket/checkpoints/orders --aws',
    )
    .action(async (modulePath: string | undefined, o: StatusCliOptions) => done(await commands().status(modulePath, o)));

  // ----------------------------------------------------------------- report and lateness
  const sampleSize = (value: string): number => {
    const n = Number(value);
    if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n <= 0)
      throw new InvalidArgumentError('The sample must be a positive number of rows: write e.g. --sample 100000.');
    return n;
  };
  program
    .command('report')
    .description(
      "write one self-contained HTML file (works offline) with plots over the checkpoint's retained batches: rates, batch duration vs the schedule, watermark lag, state rows, late rows and dead letters, backlog, and optionally the lateness histogram",
    )
    .argument('[query-module]', 'the query module, to find the checkpoint `run` used by default (not needed with --checkpoint)')
    .option('--checkpoint <uri>', 's3://bucket/prefix of the checkpoint (default: as `run` finds it)')
    .option(
      '--source <uri>',
      "s3://bucket/prefix or kinesis://stream, for the checkpoint's default and --lateness-column (default: the query's load(...) path)",
    )
    .option('--out <file>', 'the HTML file to write', 'report.html')
    .option('--interval <duration>', 'the schedule interval, drawn against the batch durations (e.g. 15m, 1h)', '15m')
    .option('--lateness-column <column>', "also sample the source's lateness on this event-time column and draw its histogram")
    .option('--sample <n>', 'with --lateness-column: at most this many rows', sampleSize, 100000)
    .option('--since <duration>', 'with --lateness-column: data that arrived in this last while (e.g. 7d, 12h)', '7d')
    .option('--data-dir <folder>', 'where the embedded stack keeps its data (as for run)', '.sluice/local')
    .addOption(awsOption())
    .addHelpText('after', '\nExample:\n  npx sluice report src/query.ts --source s3://sluice-local/landing --out report.html --interval 15m')
    .action(async (modulePath: string | undefined, o: ReportCliOptions) => done(await commands().reportCommand(modulePath, o)));
  program
    .command('lateness')
    .description(
      "measure how late the source's rows arrive (arrival time − event time): p50, p90, p99, p99.9, max, the share each watermark delay would drop, and a recommended withWatermark delay",
    )
    .argument('[query-module]', 'the query module: its load(...) path, watermark column and delay are the defaults')
    .option('--source <uri>', "s3://bucket/prefix (arrival: the object's LastModified) or kinesis://stream (ApproximateArrivalTimestamp)")
    .option('--column <name>', "the event-time field (default: the query's withWatermark column)")
    .option('--sample <n>', 'at most this many rows (S3: the newest objects first; Kinesis: from --since on)', sampleSize, 100000)
    .option('--since <duration>', 'data that arrived in this last while (e.g. 7d, 12h)', '7d')
    .option('--delay <duration>', "the query's current watermark delay, to list what it drops (default: the module's)")
    .option('--json', 'print the figures as JSON')
    .option('--data-dir <folder>', 'where the embedded stack keeps its data (as for run)', '.sluice/local')
    .addOption(awsOption())
    .addHelpText('after', '\nExample:\n  npx sluice lateness --source s3://sluice-local/landing --column event_time --since 7d')
    .action(async (modulePath: string | undefined, o: LatenessCliOptions) => done(await commands().latenessCommand(modulePath, o)));

  const showCmd = program
    .command('show')
    .description(
      "read what a run wrote, where `run` put it: the sink's rows (outputs), the dead letters with their reasons (dead-letters), the checkpoint's entries (checkpoint), the state of a grouping key (state)",
    )
    .addHelpText(
      'after',
      `
Each view takes the query module (the locations are found as run finds them) or the flags it names.

Example:
  npx sluice show outputs src/query.ts
  npx sluice show dead-letters src/query.ts
  npx sluice show checkpoint src/query.ts --entry offsets/0
  npx sluice show state src/query.ts --key alice`,
    );
  const showViews: Record<ShowView, string> = {
    outputs: "the sink's objects and the rows in them (S3), or its items (DynamoDB)",
    'dead-letters': 'the dead-letter objects, and each record with its reason and source location (file and line, or shard and sequence number)',
    checkpoint: "the checkpoint's entries (metadata, offsets/N, commits/N, progress/N, sources/...); --entry prints one",
    state: 'the state rows (per stateful operator) whose grouping values include --key, after the last committed batch',
  };
  for (const view of SHOW_VIEWS) {
    const sub = showCmd
      .command(view)
      .description(showViews[view])
      .argument('[query-module]', 'the query module, as for run (or give the locations as flags)')
      .option('--source <[input=]uri>', "as for run: the default checkpoint and sink are under the first input's bucket", collect)
      .option('--checkpoint <uri>', 's3://bucket/prefix of the checkpoint (default: as run picks it)');
    if (view === 'outputs') sub.option('--sink <uri>', 's3://bucket/prefix or dynamodb://table[/queryKey] (default: as run picks it)');
    if (view === 'dead-letters')
      sub.option('--dead-letter <uri>', 's3://bucket/prefix of the dead letters (default: <checkpoint>-dead-letter, as run writes them)');
    if (view === 'checkpoint') sub.option('--entry <name>', 'print this entry, e.g. offsets/3, commits/3, progress/3 or metadata');
    if (view === 'state') {
      sub
        .requiredOption('--key <value>', 'a grouping value, e.g. the user of groupBy(window(...), "user"): the rows whose key includes it')
        .option('--state-table <name>', 'the DynamoDB table of state (as for run)', 'sluice-state');
    }
    if (view !== 'checkpoint' && view !== 'state')
      sub.addOption(new Option('--limit <n>', 'print at most n rows or records (a positive integer)').argParser(positiveIntegerFor('--limit 50')).default(20));
    sub
      .option('--json', 'print what is shown as JSON')
      .option('--data-dir <folder>', 'where the embedded stack keeps its data (as for run)', '.sluice/local')
      .addOption(awsOption())
      .addHelpText(
        'after',
        `\nExample:\n  npx sluice show ${view} src/query.ts${view === 'state' ? ' --key alice' : view === 'checkpoint' ? ' --entry commits/0' : ''}`,
      )
      .action(async (modulePath: string | undefined, o: ShowCliOptions) => done(await loadShow().show(view, modulePath, o)));
  }

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
        new Option('--sink <kind>', 's3: one object per batch; files: the S3 file sink with its sink log; dynamodb: the DynamoDB table sink')
          .choices(['s3', 'files', 'dynamodb'])
          .default('s3'),
      )
      .addOption(statePartitionsOption())
      .addOption(workersOption())
      .addOption(awsOption())
      .addHelpText('after', `\nExample:\n  npx sluice conformance ${sub} --crash mid-sink@1 --sink dynamodb test/conformance/cases/*.json`)
      .action(async (files: string[], o: ConformanceCliOptions) => {
        if (o.crash) parseCrashPlan(o.crash); // a bad point is a usage error before any emulator starts
        done(await commands().conformance(sub, files, o));
      });
  }
  // A command group without its subcommand prints its help, and with an unknown one says which
  // it has: both usage errors.
  for (const group of [conf, showCmd]) {
    group.allowExcessArguments(true).action(() => {
      const sub = group.args[0] as string | undefined;
      if (sub === undefined) group.outputHelp({ error: true });
      else {
        const names = group.commands.map((c) => c.name());
        console.error(
          `sluice: unknown command '${group.name()} ${sub}': sluice ${group.name()} has ${names.join(', ')}: write e.g. sluice ${group.name()} ${names[0]} (run "sluice ${group.name()} --help" for usage)`,
        );
      }
      done(EXIT_CODES.usage);
    });
  }
  for (const c of program.commands) c.exitOverride().configureOutput({ outputError: oneLineError(`sluice ${c.name()} --help`) });
  for (const group of [conf, showCmd])
    for (const c of group.commands) c.exitOverride().configureOutput({ outputError: oneLineError(`sluice ${group.name()} ${c.name()} --help`) });
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

/** The flags a command takes once per input of the query (bin/commands.ts valuesByInput checks them). */
const PER_INPUT_FLAGS: Readonly<Record<string, readonly string[]>> = { run: ['--input', '--source'], show: ['--source'] };

/**
 * A flag given twice: commander keeps the last value and drops the first without a word (a second
 * --input replaced the first). Only the flags a command takes once per input may repeat; any other
 * repeat is refused.
 */
function repeatedFlag(argv: readonly string[]): string | null {
  const seen = new Set<string>();
  const repeatable = PER_INPUT_FLAGS[argv[0]] ?? [];
  for (const arg of argv) {
    if (arg === '--') break;
    const flag = /^(--[a-z][a-z0-9-]*)(=|$)/.exec(arg)?.[1];
    if (!flag || repeatable.includes(flag)) continue;
    if (seen.has(flag)) return flag;
    seen.add(flag);
  }
  return null;
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
  const repeated = repeatedFlag(argv);
  if (repeated) {
    console.error(`sluice: ${repeated} is given more than once, and only one value is taken: give it once (run with --help for usage)`);
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
