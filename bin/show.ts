/**
 * `sluice show`: what a run wrote, read back where `sluice run` put it (the same defaults:
 * bin/commands.ts locationsOf). Four views, as a Spark user looks at a query's output path, its
 * checkpoint folder and its state:
 *
 *   outputs        the sink's objects (S3) or items (DynamoDB), and the rows in them
 *   dead-letters   the dead-letter objects, and each record with its reason and where it came from
 *   checkpoint     the checkpoint's entries (metadata, offsets/N, commits/N, progress/N, sources/...), or one of them
 *   state          the state rows of a grouping key, read through the state store's own reads
 *
 * Loaded by bin/cli.ts only when `show` runs, as commands.ts is.
 */
import { formatTimestamp, parseTimestamp } from '../lib/engine/timestamps';
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { InvalidOptionError } from '../lib/engine/errors';
import type { QueryPlan } from '../lib/engine/plan/types';
import { ddlOf } from '../lib/engine/ddl';
import { csvOptions, csvRecords, tokenOf } from '../lib/engine/formats/csv';
import { decodeParquet } from '../lib/engine/formats/parquet';
import { type DataType, outputValue, parseSchema, type Schema, WINDOW_STRUCT } from '../lib/engine/schema';
import type { Json } from '../lib/engine/ports';
import { outputColumnTypes } from '../lib/engine/run/runtime';
import { createClients, type AwsClients } from '../lib/aws/clients';
import { deadLetterLocation, describeSink, parseS3Uri, parseSinkUri, type S3Location, type SinkLocation } from '../lib/aws/pipeline';
import { S3CheckpointStore } from '../lib/aws/s3/checkpoint';
import { DynamoDbSink } from '../lib/aws/dynamodb/sink';
import { DynamoDbStateStore } from '../lib/aws/dynamodb/state-store';
import { stateNamespace } from '../lib/aws/namespace';
import { operatorChain } from '../lib/engine/plan/chain';
import { createOperator } from '../lib/engine/operators/registry';
import { connect, loadPlan, locationsOf } from './commands';
import { EXIT_CODES } from './exit-codes';

type ShowView = 'outputs' | 'dead-letters' | 'checkpoint' | 'state';

export interface ShowCliOptions {
  /** `--source [input=]uri`, repeatable, as for run. */
  source?: string[];
  checkpoint?: string;
  sink?: string;
  deadLetter?: string;
  /** @default 'sluice-state' (state only) */
  stateTable?: string;
  entry?: string;
  key?: string;
  /** @default 20 (outputs and dead letters) */
  limit?: number;
  json?: boolean;
  dataDir: string;
  aws?: boolean;
}

type Shown = ShowCliOptions & { readonly stateTable: string; readonly limit: number };

interface Where {
  plan: QueryPlan | null;
  checkpoint: S3Location | null;
  sink: SinkLocation | null;
}

const s3Uri = (l: S3Location) => `s3://${l.bucket}/${l.prefix}`;

/** The locations as `run` picks them: the flags, else the query module's defaults. */
async function whereOf(view: ShowView, modulePath: string | undefined, o: ShowCliOptions): Promise<Where> {
  const plan = modulePath ? await loadPlan(modulePath) : null;
  // the defaults sit under the source's bucket: without a source (none given, none in load(...)) only the flags locate
  const located = plan !== null && (o.source !== undefined || plan.source.path !== undefined);
  const defaults = located ? locationsOf(plan, { source: o.source, checkpoint: o.checkpoint, sink: o.sink }) : null;
  const checkpoint = defaults?.checkpoint ?? (o.checkpoint ? parseS3Uri(o.checkpoint, '--checkpoint') : null);
  const sink = defaults?.sink ?? (o.sink ? parseSinkUri(o.sink, '--sink') : null);
  const needs: Record<ShowView, string | null> = {
    outputs: sink ? null : '--sink s3://bucket/prefix (or dynamodb://table/queryKey)',
    'dead-letters': checkpoint || o.deadLetter ? null : '--checkpoint s3://bucket/prefix (or --dead-letter s3://bucket/prefix)',
    checkpoint: checkpoint ? null : '--checkpoint s3://bucket/prefix',
    state: !plan ? '' : checkpoint ? null : '--source s3://bucket/prefix (where its default checkpoint is) or --checkpoint s3://bucket/prefix',
  };
  const need = needs[view];
  if (need === '')
    throw new InvalidOptionError(
      `sluice show state needs the query module (its operators name the state): write e.g. sluice show state src/query.ts --key alice`,
    );
  if (need !== null)
    throw new InvalidOptionError(`sluice show ${view} needs the query module (as for sluice run) or ${need}: write e.g. sluice show ${view} src/query.ts`);
  return { plan, checkpoint, sink };
}

// ------------------------------------------------------------------------------------ S3 reads

interface Listed {
  readonly key: string;
  readonly size: number;
  readonly lastModified: string;
}

async function listAll(clients: AwsClients, loc: S3Location): Promise<Listed[]> {
  const out: Listed[] = [];
  let token: string | undefined;
  do {
    const page = await clients.s3.send(
      new ListObjectsV2Command({ Bucket: loc.bucket, Prefix: loc.prefix ? `${loc.prefix}/` : undefined, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) out.push({ key: o.Key!, size: o.Size ?? 0, lastModified: o.LastModified?.toISOString() ?? '' });
    token = page.NextContinuationToken;
  } while (token);
  return out.sort((a, b) => a.key.localeCompare(b.key, 'en', { numeric: true }));
}

async function getBytes(clients: AwsClients, bucket: string, key: string): Promise<Uint8Array> {
  const r = await clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return r.Body!.transformToByteArray();
}

async function getText(clients: AwsClients, bucket: string, key: string): Promise<string> {
  const bytes = Buffer.from(await getBytes(clients, bucket, key));
  return (key.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
}

function jsonLines(text: string, where: string): Json[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l, i) => {
      try {
        return JSON.parse(l) as Json;
      } catch {
        throw new InvalidOptionError(`${where} line ${i + 1} is not JSON: it was not written by sluice; point --sink or --checkpoint at a sluice location`);
      }
    });
}

/** The batch of a sink or dead-letter object named batch-0000000042.jsonl, else null. */
function batchOfKey(key: string): number | null {
  const m = /batch-(\d+)\.jsonl(\.gz)?$/.exec(key);
  return m ? Number(m[1]) : null;
}

function table(head: string[], rows: (string | number)[][]): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Table = require('cli-table3') as typeof import('cli-table3');
  const t = new Table({ head, style: { head: [], border: [] } });
  for (const r of rows) t.push(r.map(String));
  return t.toString();
}

const relative = (key: string, loc: S3Location) => (loc.prefix && key.startsWith(`${loc.prefix}/`) ? key.slice(loc.prefix.length + 1) : key);

// ------------------------------------------------------------------------------------- outputs

async function showOutputs(clients: AwsClients, w: Where, o: Shown): Promise<void> {
  const sink = w.sink!;
  if (sink.kind === 'dynamodb') {
    let queryKey = sink.queryKey;
    if (!queryKey && w.checkpoint) {
      const store = new S3CheckpointStore({ client: clients.s3, bucket: w.checkpoint.bucket, prefix: w.checkpoint.prefix, conditionalWrites: false });
      queryKey = (await store.head()).metadata?.id;
    }
    if (!queryKey) {
      throw new InvalidOptionError(
        `sluice show outputs: the rows of ${describeSink(sink)} are kept by query key (the URI's, else the checkpoint's query id), and neither is known: give --sink dynamodb://${sink.table}/<queryKey>, or the query module or --checkpoint of the run`,
      );
    }
    // with the query module, its output types read each value back as it was output (a DECIMAL with its scale)
    const types = w.plan ? outputColumnTypes(w.plan) : undefined;
    const items = await new DynamoDbSink({ client: clients.dynamodb, tableName: sink.table, queryKey }).readItems(queryKey, types);
    if (o.json) {
      console.log(
        JSON.stringify(
          { sink: `dynamodb://${sink.table}/${queryKey}`, items: items.length, rows: items.map((i) => ({ batchId: i.batchId, key: i.key, row: i.row })) },
          null,
          2,
        ),
      );
      return;
    }
    console.log(
      `dynamodb://${sink.table}/${queryKey}: ${items.length} item${items.length === 1 ? '' : 's'}${items.length > o.limit ? `, the first ${o.limit} below (--limit)` : ''}`,
    );
    if (items.length)
      console.log(
        table(
          ['batch', 'key', 'row'],
          items.slice(0, o.limit).map((i) => [i.batchId, i.key, JSON.stringify(i.row)]),
        ),
      );
    return;
  }
  const objects = await listAll(clients, sink);
  const rows: { batchId: number | null; file: string; row: Json }[] = [];
  const counts = new Map<string, number | null>();
  const csv = sink.kind === 's3-files' && sink.format === 'csv' ? sink : null;
  // a Parquet object is read with the query module's output types (the file's own would lose a DECIMAL's digits)
  const parquetSchema = sink.kind === 's3-files' && sink.format === 'parquet' && w.plan ? outputSchemaOf(w.plan) : null;
  for (const obj of objects) {
    const isCsv = csv !== null && /\.csv(\.gz)?$/.test(obj.key);
    if (parquetSchema !== null && obj.key.endsWith('.parquet')) {
      const read = await parquetObjectRows(await getBytes(clients, sink.bucket, obj.key), `s3://${sink.bucket}/${obj.key}`, parquetSchema);
      counts.set(obj.key, read.length);
      for (const row of read) rows.push({ batchId: batchOfKey(obj.key), file: relative(obj.key, sink), row });
      continue;
    }
    if (!isCsv && !/\.jsonl?(\.gz)?$/.test(obj.key)) {
      counts.set(obj.key, null); // a sink log entry, a Parquet file without the query module: listed, not read
      continue;
    }
    const text = await getText(clients, sink.bucket, obj.key);
    const read = isCsv ? csvObjectRows(text, csv, w.plan ?? undefined) : jsonLines(text, `s3://${sink.bucket}/${obj.key}`);
    counts.set(obj.key, read.length);
    for (const row of read) rows.push({ batchId: batchOfKey(obj.key), file: relative(obj.key, sink), row });
  }
  if (o.json) {
    console.log(
      JSON.stringify(
        { sink: describeSink(sink), objects: objects.map((x) => ({ key: x.key, size: x.size, lastModified: x.lastModified, rows: counts.get(x.key) })), rows },
        null,
        2,
      ),
    );
    return;
  }
  console.log(
    `${describeSink(sink)}: ${objects.length} object${objects.length === 1 ? '' : 's'}, ${rows.length} row${rows.length === 1 ? '' : 's'} in ${csv ? 'CSV (each value its text)' : sink.kind === 's3-files' && sink.format === 'parquet' ? (parquetSchema ? 'Parquet' : 'Parquet (give the query module to read them)') : 'JSON lines'}`,
  );
  if (objects.length)
    console.log(
      table(
        ['object', 'bytes', 'rows', 'written (UTC)'],
        objects.map((x) => [relative(x.key, sink), x.size, counts.get(x.key) ?? '–', x.lastModified]),
      ),
    );
  if (rows.length) {
    console.log(`rows${rows.length > o.limit ? ` (the first ${o.limit} of ${rows.length}: --limit)` : ''}:`);
    for (const r of rows.slice(0, o.limit)) console.log(`  ${r.file}  ${JSON.stringify(r.row)}`);
  }
}

/**
 * The rows of a CSV sink object, each value its text (CSV carries no types) and null where the
 * writer wrote its nullValue unquoted. Read with the reader's rules under the options the sink
 * wrote with (sep, quote, escape, nullValue, emptyValue, lineSep; a quoted value may hold a line
 * break); named by the header row, else by the query module's output columns, else _c0, _c1, ...
 * as Spark names a CSV file's columns.
 */
function csvObjectRows(text: string, sink: Extract<SinkLocation, { kind: 's3-files' }>, plan: QueryPlan | undefined): Json[] {
  const given = sink.csvOptions ?? {};
  const shared = Object.fromEntries(Object.entries(given).filter(([k]) => CSV_READ_BACK.includes(k)));
  const o = csvOptions({ ...shared, header: sink.header ? 'true' : 'false', multiLine: 'true' });
  let names: string[] | null = plan ? Object.keys(outputColumnTypes(plan)) : null;
  const out: Json[] = [];
  let first = true;
  for (const rec of csvRecords(text, o)) {
    const values = rec.fields.map((f) => {
      const token = tokenOf(f, o);
      return !f.quoted && token === o.nullValue ? null : token;
    });
    if (first && o.header) {
      names = values.map((v) => v ?? '');
      first = false;
      continue;
    }
    first = false;
    const row: Record<string, Json> = {};
    values.forEach((v, i) => {
      row[names?.[i] ?? `_c${i}`] = v;
    });
    out.push(row);
  }
  return out;
}

/** The schema of a query's output rows: its output columns with their types (a window as its STRUCT). */
function outputSchemaOf(plan: QueryPlan): { schema: Schema; types: Record<string, DataType> } {
  const types: Record<string, DataType> = {};
  for (const [name, t] of Object.entries(outputColumnTypes(plan))) types[name] = t === 'WINDOW' ? WINDOW_STRUCT : t;
  const ddl = Object.entries(types)
    .map(([name, t]) => `\`${name.replace(/`/g, '``')}\` ${ddlOf(t)}`)
    .join(', ');
  return { schema: parseSchema(ddl), types };
}

/** The rows of a Parquet sink object, read by the source's reader under the query's output types, as output rows show them (exact DECIMALs and BIGINTs, ISO timestamps). */
async function parquetObjectRows(bytes: Uint8Array, where: string, out: { schema: Schema; types: Record<string, DataType> }): Promise<Json[]> {
  const rows: Json[] = [];
  for await (const r of decodeParquet(out.schema, where, bytes, bytes.length)) {
    if (r.deadLetters.length > 0) {
      throw new InvalidOptionError(
        `${where} does not hold the query's output (${r.deadLetters[0].reason}): give the query module that wrote it, or --sink its location`,
      );
    }
    for (const row of r.rows) {
      const shown: Record<string, Json> = {};
      for (const [name, t] of Object.entries(out.types)) shown[name] = outputValue(t, row[name]) as Json;
      rows.push(shown);
    }
  }
  return rows;
}

/** The CSV writer's options that say how to read its objects back. */
const CSV_READ_BACK = ['sep', 'delimiter', 'quote', 'escape', 'charToEscapeQuoteEscaping', 'nullValue', 'emptyValue', 'lineSep'];

// -------------------------------------------------------------------------------- dead letters

/** Where a dead letter came from, as one phrase: the file and line, or the shard and sequence number. */
function origin(record: Json): string {
  const src = (record as { source?: { file?: string; line?: number; shardId?: string; sequenceNumber?: string } } | null)?.source;
  if (!src || typeof src !== 'object') return '–';
  if (src.file !== undefined) return `${src.file}${src.line !== undefined ? ` line ${src.line}` : ''}`;
  if (src.shardId !== undefined) return `${src.shardId} ${src.sequenceNumber ?? ''}`.trim();
  return JSON.stringify(src);
}

async function showDeadLetters(clients: AwsClients, w: Where, o: Shown): Promise<void> {
  const loc = o.deadLetter ? parseS3Uri(o.deadLetter, '--dead-letter') : deadLetterLocation({ checkpoint: w.checkpoint! });
  const objects = await listAll(clients, loc);
  const records: { kind: string; batchId: number | null; reason: string; source: string; record: Json }[] = [];
  for (const obj of objects) {
    const kind = relative(obj.key, loc).split('/')[0];
    for (const record of jsonLines(await getText(clients, loc.bucket, obj.key), `s3://${loc.bucket}/${obj.key}`)) {
      const reason = (record as { reason?: unknown } | null)?.reason;
      records.push({
        kind,
        batchId: batchOfKey(obj.key),
        reason: typeof reason === 'string' ? reason : kind === 'late' ? 'later than the watermark' : '–',
        source: origin(record),
        record,
      });
    }
  }
  if (o.json) {
    console.log(JSON.stringify({ deadLetters: s3Uri(loc), objects: objects.map((x) => ({ key: x.key, size: x.size })), records }, null, 2));
    return;
  }
  console.log(`${s3Uri(loc)}/: ${objects.length} object${objects.length === 1 ? '' : 's'}, ${records.length} record${records.length === 1 ? '' : 's'}`);
  if (!objects.length) return;
  console.log(
    table(
      ['object', 'bytes', 'written (UTC)'],
      objects.map((x) => [relative(x.key, loc), x.size, x.lastModified]),
    ),
  );
  for (const r of records.slice(0, o.limit)) {
    const raw = (r.record as { raw?: unknown } | null)?.raw;
    console.log(`${r.kind} batch ${r.batchId ?? '?'}  ${r.source}: ${r.reason}`);
    console.log(`  ${typeof raw === 'string' ? raw : JSON.stringify((r.record as { row?: Json } | null)?.row ?? r.record)}`);
  }
  if (records.length > o.limit) console.log(`(the first ${o.limit} of ${records.length} records: --limit)`);
}

// ---------------------------------------------------------------------------------- checkpoint

async function showCheckpoint(clients: AwsClients, w: Where, o: Shown): Promise<void> {
  const loc = w.checkpoint!;
  const store = new S3CheckpointStore({ client: clients.s3, bucket: loc.bucket, prefix: loc.prefix, conditionalWrites: false });
  const objects = await listAll(clients, loc);
  if (o.entry !== undefined) {
    const name = o.entry.replace(/^\/+/, '');
    const found = objects.find((x) => relative(x.key, loc) === name);
    if (!found) {
      const some = objects.slice(-5).map((x) => relative(x.key, loc));
      throw new InvalidOptionError(
        `--entry ${o.entry}: ${s3Uri(loc)} has no entry ${name}: give one sluice show checkpoint lists${some.length ? `, e.g. --entry ${some[some.length - 1]}` : ' (it is empty: run the query first)'}`,
      );
    }
    const text = await getText(clients, loc.bucket, found.key);
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // a source log is JSON; anything else is printed as it is
    }
    console.log(
      o.json ? JSON.stringify({ entry: name, key: found.key, body: parsed }, null, 2) : typeof parsed === 'string' ? parsed : JSON.stringify(parsed, null, 2),
    );
    return;
  }
  const head = await store.head();
  const entries = objects.map((x) => ({ entry: relative(x.key, loc), size: x.size, lastModified: x.lastModified }));
  if (o.json) {
    console.log(
      JSON.stringify(
        {
          checkpoint: s3Uri(loc),
          queryId: head.metadata?.id ?? null,
          latestOffsetBatch: head.latestOffsetBatch,
          latestCommitBatch: head.latestCommitBatch,
          entries,
        },
        null,
        2,
      ),
    );
    return;
  }
  console.log(
    `${s3Uri(loc)}: query ${head.metadata ? `${head.metadata.name} (id ${head.metadata.id})` : '– (no metadata: never run)'}, offsets up to batch ${head.latestOffsetBatch}, commits up to batch ${head.latestCommitBatch}`,
  );
  if (entries.length)
    console.log(
      table(
        ['entry', 'bytes', 'written (UTC)'],
        entries.map((e) => [e.entry, e.size, e.lastModified]),
      ),
    );
  console.log('print one with --entry <entry>, e.g. --entry offsets/0');
}

// -------------------------------------------------------------------------------------- state

/** The grouping values of a state id (stateId: a JSON array; a stream-stream join's has its side's letter in front), or null. */
function groupValues(id: string): unknown[] | null {
  try {
    const values: unknown = JSON.parse(id.slice(id.indexOf('[')));
    return Array.isArray(values) ? values : null;
  } catch {
    return null;
  }
}

const isWindow = (v: unknown): v is [number, number] => Array.isArray(v) && v.length === 2 && v.every((x) => typeof x === 'number');

/**
 * Whether a state row belongs to grouping key `key`: one of its grouping values is `key` as text,
 * or its window starts at the time `key` names (e.g. 2026-10-01T12:00:00Z).
 */
function ofKey(id: string, key: string): boolean {
  const values = groupValues(id);
  if (!values) return id === key;
  const at = parseTimestamp(key); // window bounds in state are epoch µs, as TIMESTAMP values
  return values.some((v) => (isWindow(v) ? v[0] === at : (typeof v === 'string' ? v : JSON.stringify(v)) === key));
}

/** A state id for people: its windows as [start, end) in ISO time. */
function groupText(id: string): string {
  const values = groupValues(id);
  if (!values) return id;
  const side = id.slice(0, id.indexOf('['));
  const shown = values.map((v) => (isWindow(v) ? `[${formatTimestamp(v[0])}, ${formatTimestamp(v[1])})` : JSON.stringify(v)));
  return `${side ? `${side} ` : ''}${shown.join(', ')}`;
}

async function showState(clients: AwsClients, w: Where, o: Shown): Promise<void> {
  const plan = w.plan!;
  const loc = w.checkpoint!;
  const key = o.key!;
  const head = await new S3CheckpointStore({ client: clients.s3, bucket: loc.bucket, prefix: loc.prefix, conditionalWrites: false }).head();
  const chained = operatorChain(plan).operators;
  if (chained.length === 0) throw new InvalidOptionError(`query ${plan.name} is stateless: it keeps no state; sluice show outputs shows what it wrote`);
  const version = head.latestCommitBatch;
  const partitions = head.metadata?.statePartitions ?? plan.statePartitions;
  const store = new DynamoDbStateStore({ client: clients.dynamodb, tableName: o.stateTable, namespace: stateNamespace(plan.name, loc), partitions });
  const found: { operatorId: string; kind: string; id: string; group: string; partition: number; evictAt: number | null; value: Json }[] = [];
  if (version >= 0) {
    for (const c of chained) {
      const op = createOperator(c.spec, {
        operatorId: c.operatorId,
        outputMode: plan.outputMode,
        inputColumns: c.inputColumns,
        watermarks: c.marks,
        statePartitions: partitions,
        join: c.join,
      });
      for (const e of await store.all(op.spec, version)) {
        if (ofKey(e.key.id, key))
          found.push({
            operatorId: c.operatorId,
            kind: c.spec.kind,
            id: e.key.id,
            group: groupText(e.key.id),
            partition: e.key.partition ?? 0,
            evictAt: e.key.evictAt,
            value: e.value,
          });
      }
    }
  }
  if (o.json) {
    console.log(JSON.stringify({ checkpoint: s3Uri(loc), stateTable: o.stateTable, version, key, rows: found }, null, 2));
    return;
  }
  console.log(
    version < 0
      ? `${s3Uri(loc)} has no committed batch: no state yet`
      : `state of key ${JSON.stringify(key)} after batch ${version} (table ${o.stateTable}): ${found.length} row${found.length === 1 ? '' : 's'}`,
  );
  if (found.length)
    console.log(
      table(
        ['operator', 'group', 'evicts at', 'value'],
        found.map((f) => [`${f.operatorId} (${f.kind})`, f.group, f.evictAt === null ? '–' : new Date(f.evictAt).toISOString(), JSON.stringify(f.value)]),
      ),
    );
}

// ---------------------------------------------------------------------------------------- entry

export async function show(view: ShowView, modulePath: string | undefined, given: ShowCliOptions): Promise<number> {
  const o = { ...given, stateTable: given.stateTable ?? 'sluice-state', limit: given.limit ?? 20 };
  if (view === 'state' && o.key === undefined)
    throw new InvalidOptionError('sluice show state needs --key <grouping value>: write e.g. sluice show state src/query.ts --key alice');
  if (view !== 'checkpoint' && o.entry !== undefined) throw new InvalidOptionError(`--entry is for sluice show checkpoint, not ${view}: leave it out`);
  if (view !== 'state' && o.key !== undefined) throw new InvalidOptionError(`--key is for sluice show state, not ${view}: leave it out`);
  const w = await whereOf(view, modulePath, o);
  const { conn, stack } = await connect(o.aws, view === 'state' || w.sink?.kind === 'dynamodb' ? ['s3', 'dynamodb'] : ['s3'], o.dataDir);
  const clients = createClients(conn);
  try {
    if (view === 'outputs') await showOutputs(clients, w, o);
    else if (view === 'dead-letters') await showDeadLetters(clients, w, o);
    else if (view === 'checkpoint') await showCheckpoint(clients, w, o);
    else await showState(clients, w, o);
    return EXIT_CODES.ok;
  } finally {
    clients.destroy();
    await stack?.stop();
  }
}
