/**
 * The cost bench (`npm run bench -- --only cost`): consecutive scheduled runs of the reference
 * workload on the embedded local stack (DynamoDB Local + s3rver), through the same wiring a
 * deployed Lambda runs (lib/aws/pipeline.ts: S3 landing source, S3 sink, DynamoDB state and lease),
 * every request metered at the client (lib/aws/request/meter.ts: the ConsumedCapacity DynamoDB
 * returns, S3 requests by price class), priced with bench/prices.json.
 *
 * The reference workload: 1,000 events/s of ~200-byte JSON lines over 10,000 keys, 10-minute
 * tumbling windows grouped by key, a 10-minute watermark, append mode, a run every 15 minutes of
 * event time (900,000 events). The landing prefix receives one file per minute of event time, as
 * Firehose drops them with a 60 s buffer (`yyyy/mm/dd/hh/events-<minute>.json`, 60,000 events,
 * ~12 MB each), 15 files a run, uploaded before the run that reads them. `--events-per-run N`
 * shrinks the files (same 15 a run, same keys and windows).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PutObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { createClients, type AwsClients } from '../lib/aws/clients';
import { buildExecutor, type PipelineConfig } from '../lib/aws/pipeline';
import type { Consumption } from '../lib/aws/request/meter';
import type { RunReport } from '../lib/engine/run/types';
import type { StateChange } from '../lib/engine/ports';
import { DynamoDbStateStore } from '../lib/aws/dynamodb/state-store';
import type { QueryPlan } from '../lib/engine/plan/types';
import { ensureBucket, ensureStateTable } from '../lib/local/resources';
import { startLocalStack } from '../lib/local/stack';
import { benchPlan } from './query';
import { fileBody } from './lazy-files';
import { readStream, StatefulProcessor, type StatefulProcessorHandle, type TimerValues, type ValueState } from '../lib/api/query';

const BUCKET = 'sluice-cost';
const TABLE = 'sluice-cost-state';
export const REFERENCE_EVENTS_PER_RUN = 900_000;
const FILES_PER_RUN = 15; // one per minute of event time, a run every 15 minutes
const KEYS = 10_000;
const RUNS_PER_MONTH = 2_880; // 30 days x 96 runs a day
const HOURS_PER_MONTH = 720; // the same 30 days
const SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600;
const EVENTS_PER_SECOND = 1_000;
/** The construct's default memory (lib/infra/pipeline-props.ts, lambdaMemoryMiB). */
const LAMBDA_MEMORY_MIB = 1024;
/** How long an item with a TTL is stored: the state store writes none any more (a commit deletes what no replay can read), but items of earlier versions carry one of 50 days. */
const TTL_DAYS = 50;

/**
 * Per-request latency on DynamoDB and S3 in the same region, from a Lambda (the model's
 * assumption, not a measurement): DynamoDB's documented single-digit milliseconds for a single
 * item, somewhat more for a batch of 25 to 100 items; S3's first byte in tens of milliseconds and
 * about 100 MB/s per connection for a body.
 */
export const AWS_LATENCY_MS = { dynamodbItem: 5, dynamodbBatch: 15, s3Request: 25 } as const;
const S3_MB_PER_SECOND = 100;

interface Prices {
  asOf: string;
  prices: Record<string, { usd?: number; gb?: number; source: string; confirmed: string }>;
}

export function loadPrices(): Prices {
  return JSON.parse(readFileSync(join(process.cwd(), 'bench', 'prices.json'), 'utf8')) as Prices;
}

/**
 * The reference query: the bench's windowed totals by user, with the landing source's default
 * limits; recursiveFileLookup, since Firehose's yyyy/mm/dd/hh/ folders are not col=value folders.
 */
export function costPlan(): QueryPlan {
  const plan = benchPlan(undefined, 'cost-reference');
  return { ...plan, source: { ...plan.source, options: { ...plan.source.options, recursiveFileLookup: true } } };
}

const START_MS = Date.UTC(2026, 9, 1, 12, 0, 0); // lazy-files' event time origin

/** The key a producer like Firehose gives the file of minute `m` (lexical order = time order). */
function landingKey(minute: number): string {
  const iso = new Date(START_MS + minute * 60_000).toISOString();
  return `landing/cost/${iso.slice(0, 4)}/${iso.slice(5, 7)}/${iso.slice(8, 10)}/${iso.slice(11, 13)}/events-${iso.slice(0, 16).replace(/[-:T]/g, '')}.json`;
}

// ---- measuring ---------------------------------------------------------------------------------

/** Per service: requests, the sum of their local durations, and the wall time with one in flight. */
class Timing {
  private readonly s = new Map<string, { n: number; sumMs: number; inFlight: number; since: number; busyMs: number }>();
  private any = { inFlight: 0, since: 0, busyMs: 0 };

  attach(client: { middlewareStack: { add(mw: unknown, o: Record<string, unknown>): void } }, service: string): void {
    const st = this.s.get(service) ?? { n: 0, sumMs: 0, inFlight: 0, since: 0, busyMs: 0 };
    this.s.set(service, st);
    const any = this.any;
    client.middlewareStack.add(
      (next: (a: unknown) => Promise<unknown>) => async (a: unknown) => {
        const t0 = performance.now();
        st.n++;
        if (st.inFlight++ === 0) st.since = t0;
        if (any.inFlight++ === 0) any.since = t0;
        try {
          return await next(a);
        } finally {
          const t1 = performance.now();
          st.sumMs += t1 - t0;
          if (--st.inFlight === 0) st.busyMs += t1 - st.since;
          if (--any.inFlight === 0) any.busyMs += t1 - any.since;
        }
      },
      { step: 'initialize', priority: 'low', name: `costTiming-${service}` },
    );
  }
  of(service: string) {
    const st = this.s.get(service) ?? { n: 0, sumMs: 0, busyMs: 0 };
    return { requests: st.n, sumMs: st.sumMs, busyMs: st.busyMs, concurrency: st.busyMs > 0 ? st.sumMs / st.busyMs : 1 };
  }
  anyBusyMs(): number {
    return this.any.busyMs;
  }
}

export interface CommitMeasure {
  readonly batchId: number;
  readonly changes: number;
  readonly evictions: number;
  /** JSON bytes of the values the commit wrote (deletes write none). */
  readonly changedBytes: number;
  /** Write units the DynamoDB responses reported during the commit. */
  readonly writeUnits: number;
  /** Of those, the pages written only for deletions (evictions), a write unit each. */
  readonly evictionWriteUnits: number;
  readonly requests: number;
  /** Pages written, of them into free slots (the items of retired pages), and items deleted (the state store's counters). */
  readonly pages: number;
  readonly pagesIntoFreeSlots: number;
  readonly deletes: number;
}

export interface RunMeasure {
  readonly run: number;
  readonly events: number;
  readonly landingBytes: number;
  readonly report: Omit<RunReport, 'batches'> & { batches: number };
  readonly consumed: Consumption;
  readonly wallSeconds: number;
  readonly modelledSeconds: number;
  readonly engineSeconds: number;
  readonly local: { dynamodb: ReturnType<Timing['of']>; s3: ReturnType<Timing['of']> };
  readonly dynamodbByCommand: Record<string, { n: number; units: number; ms: number }>;
  readonly commits: CommitMeasure[];
}

/** DynamoDB's item size: attribute names plus values (UTF-8 strings, numbers ~ digits/2 + 1). */
function itemBytes(item: Record<string, AttributeValue>): number {
  const value = (v: AttributeValue): number => {
    if (v.S !== undefined) return Buffer.byteLength(v.S);
    if (v.N !== undefined) return Math.ceil(v.N.replace(/^-|\./g, '').length / 2) + 1;
    if (v.B !== undefined) return v.B.length;
    if (v.BOOL !== undefined || v.NULL !== undefined) return 1;
    if (v.L) return 3 + v.L.reduce((n, x) => n + 1 + value(x), 0);
    if (v.M) return 3 + Object.entries(v.M).reduce((n, [k, x]) => n + 1 + Buffer.byteLength(k) + value(x), 0);
    if (v.SS) return v.SS.reduce((n, s) => n + Buffer.byteLength(s), 0);
    if (v.NS) return v.NS.reduce((n, s) => n + Math.ceil(s.length / 2) + 1, 0);
    return 0;
  };
  return Object.entries(item).reduce((n, [k, v]) => n + Buffer.byteLength(k) + value(v), 0);
}

async function upload(clients: AwsClients, minutes: number[], eventsPerFile: number): Promise<number> {
  let next = 0;
  let bytes = 0;
  await Promise.all(
    Array.from({ length: 2 }, async () => {
      while (next < minutes.length) {
        const m = minutes[next++];
        const body = Buffer.from(fileBody(m, { eventsPerFile, keys: KEYS, minutesPerFile: 1 }), 'latin1');
        bytes += body.length;
        await clients.s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: landingKey(m), Body: body, ContentType: 'application/json' }));
      }
    }),
  );
  return bytes;
}

const CFG: PipelineConfig = {
  checkpoint: { bucket: BUCKET, prefix: 'checkpoints/cost' },
  stateTable: TABLE,
  source: { kind: 's3', bucket: BUCKET, prefix: 'landing/cost' },
  sink: { kind: 's3', bucket: BUCKET, prefix: 'out/cost' },
};

/** What the transformWithState line measured: each of its runs' requests. */
interface TwsLine {
  readonly keys: number;
  readonly runs: Array<{ readonly what: string; readonly batches: number; readonly rowsOut: number; readonly consumed: Consumption }>;
}

/**
 * The transformWithState line: a processor keeping one value and one processing-time timer 30
 * minutes on for each of KEYS keys, on the same stack and wiring. Three runs, each its own
 * executor and clients: the one that reads the keys' events, one a minute later with no new data
 * and nothing due (the idle run a schedule makes most often: it looks at the due index and runs no
 * batch), and one 31 minutes later when every timer is due (one no-data batch fires them all).
 */
async function twsLine(conn: Parameters<typeof createClients>[0], setup: AwsClients): Promise<TwsLine> {
  class Sessions extends StatefulProcessor<{ user: string }, { user: string }, { user: string; events: number }> {
    private events!: ValueState<number>;
    init(handle: StatefulProcessorHandle): void {
      this.events = handle.getValueState<number>('events');
    }
    handleInputRows(_key: { user: string }, rows: IterableIterator<{ user: string }>, tv: TimerValues) {
      this.events.update((this.events.get() ?? 0) + [...rows].length);
      this.getHandle().registerTimer(tv.getCurrentProcessingTimeInMs() + 30 * 60_000);
      return [];
    }
    handleExpiredTimer(key: { user: string }) {
      const n = this.events.get() ?? 0;
      this.events.clear();
      return [{ user: key.user, events: n }];
    }
  }
  const plan = readStream
    .format('json')
    .schema('user STRING')
    .load()
    .groupBy('user')
    .transformWithState(Sessions, { timeMode: 'processingTime', outputSchema: 'user STRING, events INT' })
    .writeStream.outputMode('update')
    .queryName('cost-tws')
    .plan();
  const cfg: PipelineConfig = {
    checkpoint: { bucket: BUCKET, prefix: 'checkpoints/cost-tws' },
    stateTable: TABLE,
    source: { kind: 's3', bucket: BUCKET, prefix: 'landing/cost-tws' },
    sink: { kind: 's3', bucket: BUCKET, prefix: 'out/cost-tws' },
  };
  const body = Array.from({ length: KEYS }, (_, k) => JSON.stringify({ user: `u${k}` })).join('\n');
  await setup.s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'landing/cost-tws/events-0.json', Body: body }));
  const t0 = Date.UTC(2026, 9, 1, 12);
  const runs: TwsLine['runs'] = [];
  for (const [what, at] of [
    ['reads the events', t0],
    ['idle: nothing due', t0 + 60_000],
    ['every timer due', t0 + 31 * 60_000],
  ] as const) {
    const clients = createClients(conn);
    try {
      const report = await buildExecutor(conn, plan, cfg, { clients, processingClock: { now: () => at } }).executor.run();
      runs.push({ what, batches: report.batches.length, rowsOut: report.rowsOut, consumed: report.consumed! });
    } finally {
      clients.destroy();
    }
  }
  return { keys: KEYS, runs };
}

/** One scheduled run, as a Lambda invocation makes it: its own clients, metered and timed. */
async function measuredRun(
  conn: Parameters<typeof createClients>[0],
  plan: QueryPlan,
  run: number,
  events: number,
  landingBytes: number,
  log: (s: string) => void,
): Promise<RunMeasure> {
  const clients = createClients(conn);
  const timing = new Timing();
  timing.attach(clients.dynamodb, 'dynamodb');
  timing.attach(clients.s3, 's3');
  const byCommand: RunMeasure['dynamodbByCommand'] = {};
  let inCommit: { units: number; requests: number } | null = null;
  const off = clients.meter.onDynamoDbRequest((r) => {
    const c = (byCommand[r.command.replace(/Command$/, '')] ??= { n: 0, units: 0, ms: 0 });
    c.n++;
    c.units += r.readUnits + r.writeUnits;
    c.ms += r.ms;
    if (inCommit) {
      inCommit.units += r.writeUnits;
      inCommit.requests++;
    }
  });
  try {
    const built = buildExecutor(conn, plan, CFG, {
      clients,
      log: (e) => {
        if (e.event === 'batch') log(`    batch ${e.batchId}: ${e.rowsIn} rows in, ${e.rowsOut} out, ${e.durationMs} ms`);
      },
    });
    // The state commit, measured: what it was given (changed values' JSON bytes) and what its requests cost.
    const commits: CommitMeasure[] = [];
    const state = built.state;
    const commit = state.commit.bind(state);
    const stats = () => (state instanceof DynamoDbStateStore ? state.stats() : { evictionPagesWritten: 0, pagesWritten: 0, pagesIntoFreeSlots: 0, deletes: 0 });
    state.commit = async (op, version, changes: StateChange[], fence) => {
      inCommit = { units: 0, requests: 0 };
      const before = stats();
      try {
        await commit(op, version, changes, fence);
      } finally {
        const m = inCommit!;
        inCommit = null;
        const written = changes.filter((c) => c.value !== null);
        commits.push({
          batchId: version,
          changes: changes.length,
          evictions: changes.length - written.length,
          changedBytes: written.reduce((n, c) => n + Buffer.byteLength(JSON.stringify(c.value)), 0),
          writeUnits: m.units,
          // pages written only for deletions, a write unit each (every page is at most 1 KB)
          evictionWriteUnits: stats().evictionPagesWritten - before.evictionPagesWritten,
          requests: m.requests,
          pages: stats().pagesWritten - before.pagesWritten,
          pagesIntoFreeSlots: stats().pagesIntoFreeSlots - before.pagesIntoFreeSlots,
          deletes: stats().deletes - before.deletes,
        });
      }
    };
    const t0 = performance.now();
    const report = await built.executor.run();
    const wallMs = performance.now() - t0;
    const ddb = timing.of('dynamodb');
    const s3 = timing.of('s3');
    // The model: time outside any AWS request as measured, plus each service's requests at AWS's
    // latency, overlapped as much as the run overlapped them locally.
    const engineMs = Math.max(0, wallMs - timing.anyBusyMs());
    const batchy = ['BatchGetItem', 'BatchWriteItem', 'Query', 'Scan', 'TransactWriteItems', 'TransactGetItems'];
    const ddbAwsMs = Object.entries(byCommand).reduce(
      (n, [cmd, c]) => n + c.n * (batchy.includes(cmd) ? AWS_LATENCY_MS.dynamodbBatch : AWS_LATENCY_MS.dynamodbItem),
      0,
    );
    const s3AwsMs = s3.requests * AWS_LATENCY_MS.s3Request + (landingBytes / (S3_MB_PER_SECOND * 1e6)) * 1000;
    const modelledMs = engineMs + ddbAwsMs / Math.max(1, ddb.concurrency) + s3AwsMs / Math.max(1, s3.concurrency);
    const { batches, ...rest } = report;
    return {
      run,
      events,
      landingBytes,
      report: { ...rest, batches: batches.length },
      consumed: report.consumed!,
      wallSeconds: wallMs / 1000,
      modelledSeconds: modelledMs / 1000,
      engineSeconds: engineMs / 1000,
      local: { dynamodb: ddb, s3 },
      dynamodbByCommand: byCommand,
      commits,
    };
  } finally {
    off();
    clients.destroy();
  }
}

/** The state table's items, split by whether they carry a TTL (kept until it passes) or not (live). */
async function stateStorage(clients: AwsClients): Promise<{ liveItems: number; liveBytes: number; ttlItems: number; ttlBytes: number }> {
  const r = { liveItems: 0, liveBytes: 0, ttlItems: 0, ttlBytes: 0 };
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await clients.dynamodb.send(new ScanCommand({ TableName: TABLE, ExclusiveStartKey: start }));
    for (const item of page.Items ?? []) {
      const b = itemBytes(item) + 100; // DynamoDB bills 100 bytes of overhead per item
      if (item.ttl) {
        r.ttlItems++;
        r.ttlBytes += b;
      } else {
        r.liveItems++;
        r.liveBytes += b;
      }
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return r;
}

async function prefixBytes(clients: AwsClients, prefix: string): Promise<{ objects: number; bytes: number }> {
  let token: string | undefined;
  const r = { objects: 0, bytes: 0 };
  do {
    const page = await clients.s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix, ContinuationToken: token }));
    for (const o of page.Contents ?? []) {
      r.objects++;
      r.bytes += o.Size ?? 0;
    }
    token = page.NextContinuationToken;
  } while (token);
  return r;
}

// ---- the section -------------------------------------------------------------------------------

export interface CostResult {
  readonly json: Record<string, unknown>;
}

const usd = (x: number) => (x >= 100 ? `$${x.toFixed(0)}` : x >= 1 ? `$${x.toFixed(2)}` : `$${x.toFixed(4)}`);
const int = (x: number) => Math.round(x).toLocaleString('en-US');

export async function runCostSection(opts: {
  eventsPerRun: number;
  runs: number;
  out: (s?: string) => void;
  table: (head: string[], rows: Array<Array<string | number>>, align?: string) => string;
}): Promise<CostResult> {
  const { out, table } = opts;
  const prices = loadPrices();
  const p = (k: string) => {
    const v = prices.prices[k]?.usd;
    if (v === undefined) throw new Error(`bench/prices.json has no price ${k}`);
    return v;
  };
  const eventsPerFile = Math.max(1, Math.round(opts.eventsPerRun / FILES_PER_RUN));
  const eventsPerRun = eventsPerFile * FILES_PER_RUN;
  const scale = REFERENCE_EVENTS_PER_RUN / eventsPerRun;
  out(
    `  ${opts.runs} scheduled runs of ${int(eventsPerRun)} events (${FILES_PER_RUN} landing files of ${int(eventsPerFile)} events, one per minute of event time as Firehose drops them), ` +
      `${KEYS} keys, 10-minute windows by key, 10-minute watermark, append, S3 sink, DynamoDB state and lease; prices of ${prices.asOf} (bench/prices.json)`,
  );
  if (scale !== 1)
    out(
      `  REDUCED: ${(1 / scale).toFixed(3)}x the reference's ${int(REFERENCE_EVENTS_PER_RUN)} events a run; per-month figures are for this size, not the reference`,
    );
  const t0 = Date.now();
  const stack = await startLocalStack({ services: ['dynamodb', 's3'] });
  out(`  local stack up in ${Date.now() - t0} ms`);
  const runs: RunMeasure[] = [];
  let storage: Awaited<ReturnType<typeof stateStorage>> | null = null;
  let sinkStore = { objects: 0, bytes: 0 };
  let checkpointStore = { objects: 0, bytes: 0 };
  let tws: TwsLine | null = null;
  try {
    const conn = stack.connection;
    const setup = createClients(conn);
    await ensureBucket(setup.s3, BUCKET);
    await ensureStateTable(setup.dynamodb, TABLE);
    const plan = costPlan();
    for (let r = 0; r < opts.runs; r++) {
      const minutes = Array.from({ length: FILES_PER_RUN }, (_, i) => r * FILES_PER_RUN + i);
      const tu = Date.now();
      const bytes = await upload(setup, minutes, eventsPerFile);
      out(`  run ${r + 1}: landed ${FILES_PER_RUN} files, ${(bytes / 1e6).toFixed(0)} MB, in ${((Date.now() - tu) / 1000).toFixed(1)} s (not metered: ingest)`);
      const m = await measuredRun(conn, plan, r + 1, eventsPerRun, bytes, (s) => out(s));
      runs.push(m);
      out(
        `    ${m.report.batches} batches, ${m.report.rowsIn} rows in, ${m.report.rowsOut} out, stopped by ${m.report.stoppedBy}; ${int(m.consumed.writeUnits)} WRU, ${int(m.consumed.readUnits)} RRU, ` +
          `${m.consumed.dynamodbRequests} DynamoDB requests, S3 ${m.consumed.s3Requests.put} PUT/LIST + ${m.consumed.s3Requests.get} GET; ${m.wallSeconds.toFixed(1)} s wall, ${m.modelledSeconds.toFixed(1)} s modelled`,
      );
    }
    storage = await stateStorage(setup);
    sinkStore = await prefixBytes(setup, 'out/cost/');
    checkpointStore = await prefixBytes(setup, 'checkpoints/cost/');
    // (after the reference's storage figures: its own keys, checkpoint and sink)
    tws = await twsLine(conn, setup);
    out(`  transformWithState (${int(tws.keys)} keys, a value and a processing-time timer each, update mode):`);
    for (const r of tws.runs)
      out(
        `    ${r.what}: ${r.batches} batch(es), ${int(r.rowsOut)} rows out; ${int(r.consumed.writeUnits)} WRU, ${int(r.consumed.readUnits)} RRU, ` +
          `${r.consumed.dynamodbRequests} DynamoDB requests, S3 ${r.consumed.s3Requests.put} PUT/LIST + ${r.consumed.s3Requests.get} GET`,
      );
    setup.destroy();
  } finally {
    await stack.stop();
  }

  // ---- per run and per month -------------------------------------------------------------------
  // Steady state: the runs after the first (the first starts with no state to read or evict).
  const steady = runs.length > 1 ? runs.slice(1) : runs;
  const mean = (f: (m: RunMeasure) => number) => steady.reduce((n, m) => n + f(m), 0) / steady.length;
  const gbs = (seconds: number) => seconds * (LAMBDA_MEMORY_MIB / 1024);
  const per = {
    writeUnits: mean((m) => m.consumed.writeUnits),
    readUnits: mean((m) => m.consumed.readUnits),
    refused: mean((m) => m.consumed.dynamodbRefusedWrites),
    dynamodbRequests: mean((m) => m.consumed.dynamodbRequests),
    s3Put: mean((m) => m.consumed.s3Requests.put),
    s3Get: mean((m) => m.consumed.s3Requests.get),
    s3Free: mean((m) => m.consumed.s3Requests.free),
    wall: mean((m) => m.wallSeconds),
    modelled: mean((m) => m.modelledSeconds),
    engine: mean((m) => m.engineSeconds),
  };
  // A refused conditional write is billed (at least 1 WRU) but reports no units: added at 1 each.
  const wruBilled = per.writeUnits + per.refused;
  const runUsd = {
    dynamodb: (wruBilled * p('dynamodbOnDemandPerMillionWriteUnits') + per.readUnits * p('dynamodbOnDemandPerMillionReadUnits')) / 1e6,
    s3: (per.s3Put * p('s3PerThousandPutCopyPostList') + per.s3Get * p('s3PerThousandGetAndOther')) / 1000,
    lambda: gbs(per.modelled) * p('lambdaArm64PerGbSecond') + p('lambdaPerMillionRequests') / 1e6,
    lambdaWall: gbs(per.wall) * p('lambdaArm64PerGbSecond') + p('lambdaPerMillionRequests') / 1e6,
  };
  // Storage: live state (free slots included), plus TTL'd items (written by sluice before live state stopped carrying a TTL) kept TTL_DAYS: what a run wrote, times the runs in TTL_DAYS.
  const ttlRunsKept = TTL_DAYS * 96;
  const stateGb = storage ? (storage.liveBytes + (storage.ttlBytes / runs.length) * ttlRunsKept) / 1e9 : 0;
  const storageUsd = { dynamodb: stateGb * p('dynamodbStoragePerGbMonth') };
  const month = {
    dynamodb: runUsd.dynamodb * RUNS_PER_MONTH,
    s3: runUsd.s3 * RUNS_PER_MONTH,
    lambda: runUsd.lambda * RUNS_PER_MONTH,
    lambdaWall: runUsd.lambdaWall * RUNS_PER_MONTH,
    dynamodbStorage: storageUsd.dynamodb,
  };
  const total = month.dynamodb + month.s3 + month.lambda + month.dynamodbStorage;
  // S3 storage of what the pipeline writes, besides the landing data: the sink's output grows by
  // its runs (the user's data: same for every engine, not in the total), the checkpoint stays small.
  const sinkGbAfterMonth = ((sinkStore.bytes / runs.length) * RUNS_PER_MONTH) / 1e9;
  const checkpointGb = checkpointStore.bytes / 1e9;

  const flinkKpu = 2;
  const flink =
    flinkKpu * HOURS_PER_MONTH * p('flinkPerKpuHour') + flinkKpu * (prices.prices.flinkStorageGbPerKpu?.gb ?? 50) * p('flinkRunningStoragePerGbMonth');
  const records = EVENTS_PER_SECOND * SECONDS_PER_MONTH;
  const perRecordMs = 5;
  const perRecordMiB = 128;
  const perRecord = {
    requests: (records / 1e6) * p('lambdaPerMillionRequests'),
    compute: records * (perRecordMs / 1000) * (perRecordMiB / 1024) * p('lambdaArm64PerGbSecond'),
    state: (records / 1e6) * p('dynamodbOnDemandPerMillionWriteUnits'),
  };
  const perRecordTotal = perRecord.requests + perRecord.compute + perRecord.state;

  out();
  out('  per run (mean of runs 2..N, the steady state) and per month (2,880 runs: 30 days, one every 15 minutes), side by side');
  out(
    table(
      ['', 'per run', 'per month', 'USD a month'],
      [
        [
          'DynamoDB write units (WRU)',
          int(per.writeUnits),
          int(per.writeUnits * RUNS_PER_MONTH),
          usd((per.writeUnits * p('dynamodbOnDemandPerMillionWriteUnits') * RUNS_PER_MONTH) / 1e6),
        ],
        [
          'DynamoDB writes refused by a condition (1 WRU each, not reported)',
          int(per.refused),
          int(per.refused * RUNS_PER_MONTH),
          usd((per.refused * p('dynamodbOnDemandPerMillionWriteUnits') * RUNS_PER_MONTH) / 1e6),
        ],
        [
          'DynamoDB read units (RRU)',
          int(per.readUnits),
          int(per.readUnits * RUNS_PER_MONTH),
          usd((per.readUnits * p('dynamodbOnDemandPerMillionReadUnits') * RUNS_PER_MONTH) / 1e6),
        ],
        ['DynamoDB requests', int(per.dynamodbRequests), int(per.dynamodbRequests * RUNS_PER_MONTH), '(in the units)'],
        [
          'S3 PUT/COPY/POST/LIST requests',
          int(per.s3Put),
          int(per.s3Put * RUNS_PER_MONTH),
          usd((per.s3Put * p('s3PerThousandPutCopyPostList') * RUNS_PER_MONTH) / 1000),
        ],
        ['S3 GET/HEAD requests', int(per.s3Get), int(per.s3Get * RUNS_PER_MONTH), usd((per.s3Get * p('s3PerThousandGetAndOther') * RUNS_PER_MONTH) / 1000)],
        ['S3 DELETE requests (free)', int(per.s3Free), int(per.s3Free * RUNS_PER_MONTH), '$0'],
        [`Lambda GB-s, modelled (${LAMBDA_MEMORY_MIB} MiB)`, gbs(per.modelled).toFixed(1), int(gbs(per.modelled) * RUNS_PER_MONTH), usd(month.lambda)],
        [
          `Lambda GB-s, local wall time (not billed: DynamoDB Local's time)`,
          gbs(per.wall).toFixed(1),
          int(gbs(per.wall) * RUNS_PER_MONTH),
          `(${usd(month.lambdaWall)})`,
        ],
        ['DynamoDB storage (see below)', '', `${stateGb.toFixed(2)} GB`, usd(month.dynamodbStorage)],
        ['total: DynamoDB', '', '', usd(month.dynamodb + month.dynamodbStorage)],
        ['total: Lambda', '', '', usd(month.lambda)],
        ['total: S3', '', '', usd(month.s3)],
        ['TOTAL', '', '', usd(total)],
        ['Managed Service for Apache Flink, minimum (2 KPU, 50 GB storage each)', '', `${flinkKpu * HOURS_PER_MONTH} KPU-h`, usd(flink)],
        [
          `a Lambda per record at ${EVENTS_PER_SECOND}/s (${perRecordMs} ms at ${perRecordMiB} MiB) + a DynamoDB update each`,
          '',
          `${(records / 1e9).toFixed(2)} G invocations`,
          usd(perRecordTotal),
        ],
      ],
      'lrrr',
    ),
  );
  out(
    `  a Lambda per record: requests ${usd(perRecord.requests)}, compute ${usd(perRecord.compute)}, one 1-WRU UpdateItem per record for the windowed state ${usd(perRecord.state)}`,
  );
  out(`  sluice at the reference workload: ${usd(total)} a month, ${(flink / total).toFixed(1)}x below Managed Flink's minimum (target: <= $10, 16x)`);
  out();

  // ---- latency --------------------------------------------------------------------------------
  const localDdbMs = mean((m) => m.local.dynamodb.sumMs / Math.max(1, m.local.dynamodb.requests));
  const localS3Ms = mean((m) => m.local.s3.sumMs / Math.max(1, m.local.s3.requests));
  const conc = mean((m) => m.local.dynamodb.concurrency);
  const ddbBusy = mean((m) => m.local.dynamodb.busyMs / 1000);
  out('  Lambda time: DynamoDB Local is a JVM over SQLite on this shared 2-core machine, not DynamoDB.');
  out(
    `  measured here: ${localDdbMs.toFixed(1)} ms per DynamoDB request (mean; ${conc.toFixed(1)} in flight on average; DynamoDB busy ${ddbBusy.toFixed(1)} s of a ${per.wall.toFixed(1)} s run), ` +
      `${localS3Ms.toFixed(1)} ms per S3 request (s3rver, in this process).`,
  );
  out(
    `  the model: time outside AWS requests as measured (${per.engine.toFixed(1)} s a run) + each request at AWS latency (DynamoDB ${AWS_LATENCY_MS.dynamodbItem} ms an item, ` +
      `${AWS_LATENCY_MS.dynamodbBatch} ms a batch/query/transaction; S3 ${AWS_LATENCY_MS.s3Request} ms + the landing bytes at ${S3_MB_PER_SECOND} MB/s), overlapped as the run overlapped them locally`,
  );
  out(`  = ${per.modelled.toFixed(1)} s a run (local wall time ${per.wall.toFixed(1)} s). Lambda is priced on the modelled time; both are printed above.`);
  out();

  // ---- state writes per batch -----------------------------------------------------------------
  const commits = runs.flatMap((m) => m.commits.map((c) => ({ run: m.run, ...c })));
  out('  state writes per batch: write units of the commit vs ceil(changed state bytes / 1 KB) (changed bytes: JSON of the values the commit wrote)');
  out(
    table(
      [
        'run',
        'batch',
        'changes',
        'evictions',
        'changed bytes',
        'ceil(KB)',
        'commit WRU',
        'ratio',
        'requests',
        'eviction WRU',
        'pages',
        'in free slots',
        'deletes',
      ],
      commits.map((c) => {
        const kb = Math.ceil(c.changedBytes / 1024);
        return [
          c.run,
          c.batchId,
          c.changes,
          c.evictions,
          int(c.changedBytes),
          kb,
          int(c.writeUnits),
          kb > 0 ? (c.writeUnits / kb).toFixed(2) : '-',
          c.requests,
          int(c.evictionWriteUnits),
          int(c.pages),
          int(c.pagesIntoFreeSlots),
          int(c.deletes),
        ];
      }),
    ),
  );
  const allUnits = runs.reduce((n, m) => n + m.consumed.writeUnits, 0);
  const ttlUnits = commits.reduce((n, c) => n + c.evictionWriteUnits, 0);
  const commitUnits = commits.reduce((n, c) => n + c.writeUnits, 0);
  const commitKb = commits.reduce((n, c) => n + Math.ceil(c.changedBytes / 1024), 0);
  out(
    `  over all batches: ${int(commitUnits)} commit WRU for ${int(commitKb)} ceil(KB) = ${(commitUnits / Math.max(1, commitKb)).toFixed(2)}x (target <= 1.2x + a constant)`,
  );
  // The steady state: the runs after the first, whose commits free and reuse what earlier ones wrote.
  const steadyCommits = commits.filter((c) => c.run > 1);
  const steadyUnits = steadyCommits.reduce((n, c) => n + c.writeUnits, 0);
  const steadyKb = steadyCommits.reduce((n, c) => n + Math.ceil(c.changedBytes / 1024), 0);
  const steadyRatio = steadyUnits / Math.max(1, steadyKb);
  out(
    `  steady state (runs 2..${runs.length}): ${int(steadyUnits)} commit WRU for ${int(steadyKb)} ceil(KB) = ${steadyRatio.toFixed(2)} state write units per KB of changed state (issue 26: <= 0.5); ` +
      `${int(steadyCommits.reduce((n, c) => n + c.pagesIntoFreeSlots, 0))} of ${int(steadyCommits.reduce((n, c) => n + c.pages, 0))} pages written into free slots, ${int(steadyCommits.reduce((n, c) => n + c.deletes, 0))} items deleted`,
  );
  out(
    `  evictions: ${int(ttlUnits)} WRU on pages written only for deletions = ${((100 * ttlUnits) / Math.max(1, allUnits)).toFixed(1)}% of all write units (target <= 5%; ` +
      'the state store counts them: an eviction that empties its pages writes none; their items become free slots)',
  );
  out();
  const byCmd: Record<string, { n: number; units: number; ms: number }> = {};
  for (const m of runs)
    for (const [k, v] of Object.entries(m.dynamodbByCommand)) {
      const c = (byCmd[k] ??= { n: 0, units: 0, ms: 0 });
      c.n += v.n;
      c.units += v.units;
      c.ms += v.ms;
    }
  out(
    `  DynamoDB by command over the ${runs.length} runs: ${Object.entries(byCmd)
      .sort((a, b) => b[1].n - a[1].n)
      .map(([k, v]) => `${k} ${v.n} (${int(v.units)} units, ${(v.ms / v.n).toFixed(1)} ms each)`)
      .join(', ')}`,
  );
  if ((byCmd.TransactWriteItems?.n ?? 0) > 0)
    out(
      "  NOTE: DynamoDB Local reports one item's units for a transaction of equal-size items (DynamoDB bills each): the transactions' units above are a lower bound",
    );
  if (storage) {
    out(
      `  DynamoDB storage: after ${runs.length} runs ${int(storage.liveItems)} live items (${(storage.liveBytes / 1e6).toFixed(1)} MB) and ${int(storage.ttlItems)} items with a TTL ` +
        `(${(storage.ttlBytes / 1e6).toFixed(1)} MB); TTL'd items are kept ${TTL_DAYS} days, so the table holds ${ttlRunsKept} runs' worth: ${stateGb.toFixed(2)} GB (100 bytes of overhead per item included, no free tier)`,
    );
  }
  out(
    `  S3 storage (not in the total): the sink's output grows ${(sinkStore.bytes / runs.length / 1e6).toFixed(2)} MB a run, ${sinkGbAfterMonth.toFixed(2)} GB after a month ` +
      `(${usd(sinkGbAfterMonth * p('s3StandardStoragePerGbMonth'))}/month, the user's data); the checkpoint holds ${(checkpointGb * 1000).toFixed(1)} MB; the landing data (${((mean((m) => m.landingBytes) * RUNS_PER_MONTH) / 1e9).toFixed(0)} GB a month) is ingest, the same for every engine`,
  );
  out('  left out: ingest (producers, Firehose/Kinesis), CloudWatch Logs of the run lines, data transfer (same region: free), free tiers');

  const json = {
    measuredWith: 'consumed-capacity',
    date: new Date().toISOString(),
    pricesAsOf: prices.asOf,
    eventsPerRun,
    reference: eventsPerRun === REFERENCE_EVENTS_PER_RUN,
    runs: runs.length,
    lambdaMemoryMiB: LAMBDA_MEMORY_MIB,
    perRun: {
      writeUnits: Math.round(per.writeUnits),
      readUnits: Math.round(per.readUnits),
      refusedWrites: Math.round(per.refused),
      dynamodbRequests: Math.round(per.dynamodbRequests),
      s3Requests: { put: Math.round(per.s3Put), get: Math.round(per.s3Get), free: Math.round(per.s3Free) },
      lambdaSeconds: { modelled: Number(per.modelled.toFixed(2)), localWall: Number(per.wall.toFixed(2)), outsideRequests: Number(per.engine.toFixed(2)) },
    },
    monthlyUsd: {
      total: Number(total.toFixed(2)),
      dynamodb: Number((month.dynamodb + month.dynamodbStorage).toFixed(2)),
      dynamodbRequests: Number(month.dynamodb.toFixed(2)),
      dynamodbStorage: Number(month.dynamodbStorage.toFixed(2)),
      lambda: Number(month.lambda.toFixed(2)),
      lambdaAtLocalWallTime: Number(month.lambdaWall.toFixed(2)),
      s3: Number(month.s3.toFixed(2)),
      managedFlinkMinimum: Number(flink.toFixed(2)),
      lambdaPerRecord: Number(perRecordTotal.toFixed(2)),
    },
    latency: {
      localDynamodbMsPerRequest: Number(localDdbMs.toFixed(2)),
      localDynamodbInFlight: Number(conc.toFixed(2)),
      localS3MsPerRequest: Number(localS3Ms.toFixed(2)),
      assumedAwsMs: AWS_LATENCY_MS,
    },
    stateWrites: {
      commitWriteUnits: Math.round(commitUnits),
      changedKbCeil: commitKb,
      ratio: Number((commitUnits / Math.max(1, commitKb)).toFixed(3)),
      steadyState: { runs: `2..${runs.length}`, commitWriteUnits: steadyUnits, changedKbCeil: steadyKb, writeUnitsPerKb: Number(steadyRatio.toFixed(3)) },
      evictionShare: Number((ttlUnits / Math.max(1, allUnits)).toFixed(4)),
      batches: commits.map((c) => ({
        run: c.run,
        batch: c.batchId,
        changes: c.changes,
        evictions: c.evictions,
        changedBytes: c.changedBytes,
        writeUnits: c.writeUnits,
        evictionWriteUnits: Math.round(c.evictionWriteUnits),
        pages: c.pages,
        pagesIntoFreeSlots: c.pagesIntoFreeSlots,
        deletes: c.deletes,
      })),
    },
    storage: { dynamodbGb: Number(stateGb.toFixed(3)), ...(storage ?? {}), sinkBytesPerRun: Math.round(sinkStore.bytes / runs.length) },
    byRun: runs.map((m) => ({
      run: m.run,
      batches: m.report.batches,
      rowsIn: m.report.rowsIn,
      rowsOut: m.report.rowsOut,
      consumed: m.consumed,
      wallSeconds: Number(m.wallSeconds.toFixed(2)),
      modelledSeconds: Number(m.modelledSeconds.toFixed(2)),
    })),
  };
  return { json: { ...json, transformWithState: tws } };
}
