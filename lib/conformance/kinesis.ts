/**
 * Conformance cases on a Kinesis stream instead of a landing prefix
 * (`sluice conformance run --source kinesis CASE.json...`): each case gets its own stream of
 * three shards, and each of a step's files is put as records, one record per row.
 *
 * Rows are spread over the shards by partition key, as a producer partitions by entity (by the
 * first stateful operator's keys in a chain: the later ones see its output, not the stream's order):
 * - dropDuplicates: the dedup columns' values, so that the first of two duplicates in a step is
 *   still read first (rows of one key share a shard, whose order is the put order);
 * - aggregations grouped by columns: those columns' values, so per-group order holds;
 * - transformWithState: its grouping keys' values, so a processor sees each key's rows in put order;
 * - otherwise the row's running number, spreading rows evenly (order across shards does not
 *   change a count, sum, min, max or avg, nor the watermark, which is a maximum per batch);
 * - a stateless query: one key, one shard, so that its dead letters come in the input order a
 *   case's deadLetterErrors lists them in.
 *
 * What does not carry over: file boundaries. `maxFilesPerTrigger` means nothing to a stream (the
 * source ignores it), so a case that splits a step into several batches by files gets one batch
 * per step here.
 */
import { createHash } from 'node:crypto';
import { PutRecordsCommand, type KinesisClient, type PutRecordsRequestEntry } from '@aws-sdk/client-kinesis';
import type { QueryPlan } from '../engine/plan/types';
import type { AwsConnection } from '../aws/config';
import { createClients } from '../aws/clients';
import { isRetriable } from '../aws/request/errors';
import { RetryableResult, retryPolicy, withRetry } from '../aws/request/retry';
import { SluiceError } from '../engine/errors';
import { KinesisSource, type KinesisSourceOptions } from '../aws/kinesis/source';
import type { CaseSource } from './runner';
import { recordText } from './case';
import { ensureStream } from '../local/resources';

/** Shards of each case's stream. */
const CASE_STREAM_SHARDS = 3;

/** The runner's source factory for Kinesis: a stream per case, rows put as records. */
export function kinesisCaseSource(
  conn: AwsConnection,
  opts: Partial<Pick<KinesisSourceOptions, 'minGetRecordsIntervalMs' | 'maxRecordsPerCall' | 'log'>> = {},
): (plan: QueryPlan, caseId: string, sourceIndex?: number) => Promise<CaseSource> {
  const clients = createClients(conn);
  return async (plan, caseId, sourceIndex = 0) => {
    // an input of a stream-stream join (source k + 1: plan.inputs[k]) gets a stream of its own
    const input = sourceIndex > 0 ? plan.inputs?.[sourceIndex - 1] : undefined;
    if (sourceIndex > 0 && !input) throw new SluiceError(`kinesisCaseSource: the plan has no input for source ${sourceIndex}`, { retriable: false });
    const spec = input ? input.source : plan.source;
    if (spec.format !== undefined && spec.format !== 'json')
      throw new SluiceError(
        `a case whose input is read as ${spec.format} files needs the S3 landing source: Kinesis records are JSON (run it without --source kinesis)`,
        { retriable: false },
      );
    const streamName = caseStreamName(input ? `${caseId}-in${sourceIndex}` : caseId);
    await ensureStream(clients.kinesis, streamName, CASE_STREAM_SHARDS);
    const source = new KinesisSource({ client: clients.kinesis, streamName, schema: spec.schema, ...opts });
    const keyOf = partitionKeyFor(input ? { source: input.source, stateful: input.operators[0]?.spec ?? null } : plan);
    let rowNo = 0;
    return {
      source,
      location: { kind: 'kinesis', streamName },
      async put(_fileIndex, rows) {
        await putJsonRecords(
          clients.kinesis,
          streamName,
          rows.map((row) => ({ data: row, partitionKey: keyOf(row, rowNo++) })),
        );
      },
    };
  };
}

/** A Kinesis stream name for a case ID: [a-zA-Z0-9_.-], at most 128 characters. */
function caseStreamName(caseId: string): string {
  const cleaned = `conf-${caseId}`.replace(/[^a-zA-Z0-9_.-]+/g, '-');
  if (cleaned.length <= 128) return cleaned;
  const hash = createHash('sha256').update(caseId).digest('hex').slice(0, 12);
  return `${cleaned.slice(0, 115)}-${hash}`;
}

/** How rows of a case are spread over shards (see the header). */
function partitionKeyFor(plan: Pick<QueryPlan, 'source' | 'stateful'>): (row: Record<string, unknown>, rowNo: number) => string {
  const st = plan.stateful;
  // a stateless query: one shard, so its output and its dead letters keep the input order a case lists them in
  if (st === null) return () => 'all';
  let columns: readonly string[] = [];
  // (a stream-stream join matches a batch's rows whatever their order: spread them)
  if (st?.kind === 'dedup') columns = st.columns ?? plan.source.schema.columns.map((c) => c.name);
  // a processor sees a key's rows in input order (list state appends, puts): one key, one shard
  else if (st?.kind === 'transformWithState') columns = st.keys;
  else if (st?.kind === 'aggregate') {
    columns = st.keys.flatMap((k) => (k.kind === 'column' ? [k.name] : []));
    // first/last, the collected lists and max_by's ties depend on order within the group; with only a window to group by, keep one shard.
    const ordered = ['first', 'any_value', 'last', 'collect_list', 'collect_set', 'max_by', 'min_by'];
    if (columns.length === 0 && st.aggs.some((a) => ordered.includes(a.fn))) return () => 'all';
  }
  if (columns.length === 0) return (_row, rowNo) => String(rowNo);
  return (row) => boundedKey(JSON.stringify(columns.map((c) => row[c] ?? null)));
}

/** Kinesis partition keys are 1 to 256 characters. */
function boundedKey(text: string): string {
  if (text.length >= 1 && text.length <= 256) return text;
  return createHash('sha256').update(text).digest('hex');
}

export interface JsonRecord {
  readonly data: unknown;
  readonly partitionKey: string;
}

/** Six tries of a PutRecords call, backing off from 100 ms (the project's one retry loop). */
const PUT_RETRY = retryPolicy({ maxAttempts: 6, baseDelayMs: 100, maxDelayMs: 3_200 }, 'putJsonRecords');

/**
 * Puts records (JSON-encoded) with PutRecords, 500 per call, in order. Records the stream
 * rejects (throttled) are put again, with the call's retries; only then does their order change.
 */
export async function putJsonRecords(kinesis: Pick<KinesisClient, 'send'>, streamName: string, records: readonly JsonRecord[]): Promise<void> {
  for (let i = 0; i < records.length; i += 500) {
    let entries: PutRecordsRequestEntry[] = records
      .slice(i, i + 500)
      .map((r) => ({ Data: Buffer.from(recordText(r.data), 'utf8'), PartitionKey: r.partitionKey }));
    await withRetry(
      PUT_RETRY,
      (e) => isRetriable('kinesis', e),
      async () => {
        const out = await kinesis.send(new PutRecordsCommand({ StreamName: streamName, Records: entries }));
        if (!out.FailedRecordCount) return;
        entries = entries.filter((_, j) => out.Records?.[j]?.ErrorCode);
        const first = out.Records?.find((r) => r.ErrorCode);
        throw new RetryableResult(`${first?.ErrorCode}: ${first?.ErrorMessage}`, entries.length);
      },
      {
        fail: ({ error, attempts }) =>
          error instanceof RetryableResult
            ? new SluiceError(
                `PutRecords to ${streamName}: ${error.value} records still rejected after ${attempts} tries (${error.message}): the stream is throttling writes; add shards or put more slowly`,
                { retriable: true },
              )
            : (error as Error),
      },
    );
  }
}
