/**
 * `runQueryOnSample`: one availableNow run of a query over sample input on the embedded local
 * stack (or a stack or endpoint the caller gives), returning the rows the query emitted, typed by
 * the plan. For a user's tests:
 *
 *   const rows = await runQueryOnSample(windowedTotals(), { files: 'sample' });
 *   expect(rows).toEqual([{ window: { start: '...', end: '...' }, total: 19, events: 3 }]);
 *
 * The input lands where the query reads it: files under an S3 landing prefix (in name order), or,
 * for a Kinesis query, each line of them (or each of `records`) as one record. Every call uses
 * fresh names (bucket prefix, state table, stream), so calls do not see each other's state.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { InvalidOptionError } from '../engine/errors';
import type { RunReport } from '../engine/run/types';
import type { QueryPlan } from '../engine/plan/types';
import { createClients } from '../aws/clients';
import type { AwsConnection } from '../aws/config';
import { buildExecutor, parseSinkUri, type PipelineConfig, type SourceLocation } from '../aws/pipeline';
import { putJsonRecords } from '../conformance/kinesis';
import { ensureBucket, ensureStateTable, ensureStream } from './resources';
import { startLocalStack, type LocalStack } from './stack';

/** One sample file: its name (sets the order) and its text (e.g. JSON lines or CSV), its bytes (e.g. Parquet) or its rows. */
export interface SampleFile {
  readonly name: string;
  readonly text?: string;
  readonly bytes?: Uint8Array;
  readonly rows?: ReadonlyArray<Record<string, unknown>>;
}

export interface RunQueryOnSampleOptions {
  /** A folder of files in the query's format (put as they are, in name order), or the files themselves. */
  readonly files?: string | readonly SampleFile[];
  /** Rows as one file (an S3 query) or one record each (a Kinesis query). */
  readonly records?: ReadonlyArray<Record<string, unknown>>;
  /**
   * Where the query writes: `s3://bucket/prefix[?format=...]` or `dynamodb://table[/key]`; the
   * bucket or table is created. @default an S3 prefix in the sample bucket
   */
  readonly sink?: string;
  /** Use this stack instead of starting (and stopping) one. */
  readonly stack?: LocalStack;
  /** Use this endpoint (e.g. LocalStack's) instead of the embedded stack. */
  readonly connection?: AwsConnection;
  /** Receives the whole run report (batches, watermark, dead letters). */
  readonly onReport?: (report: RunReport) => void;
}

const BUCKET = 'sluice-sample';

/** Runs `plan` once (availableNow) over the sample input and returns every row it emitted, batch by batch. */
export async function runQueryOnSample<R>(plan: QueryPlan<R>, opts: RunQueryOnSampleOptions): Promise<R[]> {
  const files = sampleFiles(opts);
  if (files.length === 0) {
    throw new InvalidOptionError('runQueryOnSample has no input: pass files (a folder or [{ name, text | rows }]) or records');
  }
  const kinesis = plan.source.kind === 'kinesis';
  const own = opts.stack || opts.connection ? undefined : await startLocalStack({ services: kinesis ? ['dynamodb', 's3', 'kinesis'] : ['dynamodb', 's3'] });
  const conn = opts.connection ?? opts.stack?.connection ?? own!.connection;
  try {
    const clients = createClients(conn);
    const id = `${plan.name}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`.replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 100);
    const stateTable = `sample-${id}`.slice(0, 255);
    const sink = opts.sink ? parseSinkUri(opts.sink, 'runQueryOnSample sink') : ({ kind: 's3', bucket: BUCKET, prefix: `${id}/output` } as const);
    const source: SourceLocation = kinesis ? { kind: 'kinesis', streamName: id.slice(0, 128) } : { kind: 's3', bucket: BUCKET, prefix: `${id}/landing` };
    await Promise.all([
      ensureBucket(clients.s3, BUCKET),
      ensureStateTable(clients.dynamodb, stateTable),
      sink.kind === 'dynamodb' ? ensureStateTable(clients.dynamodb, sink.table) : ensureBucket(clients.s3, sink.bucket),
      source.kind === 'kinesis' ? ensureStream(clients.kinesis, source.streamName, 1) : Promise.resolve(),
    ]);
    if (source.kind === 'kinesis') {
      const rows = files.flatMap((f) => fileRows(f));
      await putJsonRecords(
        clients.kinesis,
        source.streamName,
        rows.map((data, i) => ({ data, partitionKey: String(i) })),
      );
    } else {
      for (const f of files) {
        const body = f.bytes ?? f.text ?? (f.rows ?? []).map((r) => JSON.stringify(r)).join('\n');
        await clients.s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `${source.prefix}/${f.name}`, Body: body }));
      }
    }
    const cfg: PipelineConfig = { checkpoint: { bucket: BUCKET, prefix: `${id}/checkpoint` }, stateTable, source, sink };
    try {
      const report = await buildExecutor(conn, plan as QueryPlan, cfg, { clients }).executor.run({ collectRows: true });
      opts.onReport?.(report);
      return report.batches.flatMap((b) => b.rows) as R[];
    } finally {
      clients.destroy();
    }
  } finally {
    await own?.stop();
  }
}

function sampleFiles(opts: RunQueryOnSampleOptions): SampleFile[] {
  const out: SampleFile[] = [];
  if (typeof opts.files === 'string') {
    const dir = opts.files;
    const names = readdirSync(dir)
      .filter((n) => statSync(join(dir, n)).isFile())
      .sort();
    // Bytes, not text: a Parquet file is not UTF-8.
    for (const name of names) out.push({ name, bytes: readFileSync(join(dir, name)) });
  } else if (opts.files) out.push(...[...opts.files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)));
  if (opts.records) out.push({ name: 'zzzz-records.json', rows: opts.records });
  return out;
}

/** A file's rows, for a Kinesis query: each non-empty line is one record. */
function fileRows(f: SampleFile): unknown[] {
  if (f.rows) return [...f.rows];
  return (f.text ?? (f.bytes ? Buffer.from(f.bytes).toString('utf8') : ''))
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l, i) => {
      try {
        return JSON.parse(l);
      } catch {
        throw new InvalidOptionError(
          `sample file ${f.name} line ${i + 1} is not JSON: for a Kinesis query each line becomes one record, so write one JSON object per line`,
        );
      }
    });
}
