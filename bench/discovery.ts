/**
 * The discovery bench (`npm run bench -- --only discovery`, issue 28): what the landing source
 * spends finding new files on prefixes of 10^4, 10^5 and 10^6 objects, through the real source
 * (S3LandingSource with its default ListingDiscovery), the real S3 client and the real S3
 * checkpoint store. Only the planning half of a run is measured: latestOffset (the seen files, one
 * discovery) and planBatch (the batch's file list, the seen log); the files are not read, and the
 * executor's offsets/commits PUTs (2 a batch, the same whatever the prefix) are not counted.
 *
 * Where the objects live: an in-process S3 twin (S3ListTwin, bench/s3-list-twin.ts), handed to the SDK's S3Client
 * as its `send`, as strict as S3 where listing is concerned (at most 1,000 keys a page whatever
 * MaxKeys asks, UTF-8 byte order, StartAfter and Prefix as S3 applies them, 412 on If-None-Match: *
 * of an existing key). Loading 10^6 generated keys there takes about half a minute on 2 busy
 * cores; PUTting them into s3rver (an object file and a metadata file each on disk) runs at about
 * 300 a second here, near an hour for 10^6, and its listing walks the bucket's directories on every
 * page. The twin adds no network time: on AWS each LIST adds its round trip (tens of ms). s3rver runs the 10^4 prefix too, through the same
 * sequence, as a cross-check of the twin's LIST counts (the largest size up to 10^4 given).
 *
 * Per prefix size, consecutive runs 15 minutes apart on a simulated clock (the listing's backfill
 * interval is the default hour), each by a new source instance, as each Lambda run is:
 *
 *     first      everything new (a full listing; one batch logs every file)
 *     empty      nothing new
 *     last       one new key that sorts after every other (the next hour's folder)
 *     first-key  one new key that sorts before the others (into the oldest folder)
 *     then runs until the first-key file is found (at the next full listing: the backfill)
 *     recent-key one new key that sorts before the others of the last generated hour's folder (a
 *                late upload), one run after the backfill: found by the incremental listing's
 *                recent folders
 *
 * Keys: landing/disc/dt=YYYY-MM-DD/hour=HH/part-NNNNNNN.json over the 30 days before the clock's
 * start (720 hour folders), 1-byte bodies, LastModified the folder's hour.
 */
import { cpus, loadavg } from 'node:os';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { S3CheckpointStore } from '../lib/aws/s3/checkpoint';
import { S3LandingSource } from '../lib/aws/s3/landing-source';
import type { Json } from '../lib/engine/ports';
import { parseSchema } from '../lib/engine/schema';
import { ensureBucket } from '../lib/local/resources';
import { startLocalStack } from '../lib/local/stack';
import { createClients } from '../lib/aws/clients';
import { loadPrices } from './cost';
import { S3ListTwin, type TwinObject, twinClient } from './s3-list-twin';

const BUCKET = 'sluice-discovery';
const ROOT = 'landing/disc';
const DAYS = 30;
const FOLDERS = DAYS * 24;
const RUN_EVERY_MS = 15 * 60_000;
const RUNS_PER_MONTH = 2_880; // 30 days x 96 runs a day
const T0 = Date.UTC(2026, 11, 1, 0, 0, 0);
const schema = parseSchema('v INT, dt STRING, hour STRING');

/** The simulated clock: the source's `now` (backfill interval) and the twin's LastModified of new objects. */
let clock = T0;

// ---- the prefix ----------------------------------------------------------------------------------

function folderOf(f: number): { key: string; ms: number } {
  const ms = T0 - (FOLDERS - f) * 3600_000;
  const iso = new Date(ms).toISOString();
  return { key: `${ROOT}/dt=${iso.slice(0, 10)}/hour=${iso.slice(11, 13)}/`, ms };
}

/** N keys in S3's order: object i in folder floor(i * FOLDERS / N), numbered i. */
function* prefixKeys(n: number): Generator<[string, number]> {
  for (let i = 0; i < n; i++) {
    const f = folderOf(Math.floor((i * FOLDERS) / n));
    yield [`${f.key}part-${String(i).padStart(7, '0')}.json`, f.ms];
  }
}

const ONE_BYTE = new Uint8Array([0x0a]);
/** Sorts after every generated key: the folder of the clock's hour. */
const LAST_KEY = `${folderOf(FOLDERS).key}part-9999999.json`;
/** Sorts before every other key of the last generated hour's folder (the one before LAST_KEY's). */
const RECENT_KEY = `${folderOf(FOLDERS - 1).key}part-0000000-late.json`;
/** Sorts before every generated key: the oldest folder, a lower number. */
const FIRST_KEY = `${folderOf(0).key}part-0000000-late.json`;

// ---- measuring -----------------------------------------------------------------------------------

export interface DiscoveryRun {
  readonly n: number;
  readonly store: 'twin' | 's3rver';
  readonly run: number;
  readonly kind: string;
  readonly listing: 'full' | 'incremental';
  readonly lists: number;
  readonly checkpointGets: number;
  readonly checkpointPuts: number;
  readonly sourceGets: number;
  readonly newFiles: number;
  readonly foundFirstKey: boolean;
  readonly foundRecentKey: boolean;
  readonly discoverySeconds: number;
  readonly runSeconds: number;
  /** CPU seconds of this process (user + system) over the run: less moved by other processes than the wall time. */
  readonly runCpuSeconds: number;
  readonly usdPerMonth: number;
}

interface Prices {
  readonly list: number;
  readonly get: number;
  readonly put: number;
}

function usdPerMonth(p: Prices, lists: number, gets: number, puts: number): number {
  return ((lists * p.list + puts * p.put + gets * p.get) / 1000) * RUNS_PER_MONTH;
}

/** One scheduled run's planning half by a new source instance; the start offset it read from and the one it ends at. */
async function oneRun(
  client: S3Client,
  conditionalWrites: boolean,
  start: Json | null,
  batchId: number,
  prices: Prices,
  meta: { n: number; store: 'twin' | 's3rver'; run: number; kind: string },
): Promise<{ measure: DiscoveryRun; end: Json | null }> {
  const checkpoint = new S3CheckpointStore({ client, bucket: BUCKET, prefix: `checkpoints/disc-${meta.store}-${meta.n}`, conditionalWrites });
  const source = new S3LandingSource({ client, bucket: BUCKET, prefix: ROOT, schema, checkpoint, now: () => clock });
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const target = await source.latestOffset(start);
  const t1 = process.hrtime.bigint();
  let end = start;
  let newFiles = 0;
  let foundFirstKey = false;
  let foundRecentKey = false;
  if (target !== start) {
    newFiles = (target as { files: number }).files;
    end = (await source.planBatch(batchId, start, target, {})) ?? start;
  }
  const t2 = process.hrtime.bigint();
  const cpu = process.cpuUsage(cpu0);
  const d = source.discoveryStats();
  const s = source.stats();
  const c = checkpoint.stats();
  if (target !== start) {
    // the check's GET of the batch's file list, after the run's figures were taken
    const log = JSON.parse((await checkpoint.readSourceLog(0, String(batchId))) ?? '{"files":[]}') as { files: Array<{ key: string }> };
    foundFirstKey = log.files.some((f) => f.key === FIRST_KEY);
    foundRecentKey = log.files.some((f) => f.key === RECENT_KEY);
  }
  const checkpointGets = c.gets;
  const lists = s.lists + c.lists;
  return {
    end,
    measure: {
      ...meta,
      listing: d.fullListings ? 'full' : 'incremental',
      lists,
      checkpointGets,
      checkpointPuts: c.puts,
      sourceGets: s.gets,
      newFiles,
      foundFirstKey,
      foundRecentKey,
      discoverySeconds: Number(t1 - t0) / 1e9,
      runSeconds: Number(t2 - t0) / 1e9,
      runCpuSeconds: (cpu.user + cpu.system) / 1e6,
      usdPerMonth: usdPerMonth(prices, lists, checkpointGets + s.gets, c.puts + s.puts),
    },
  };
}

/** The sequence on one prefix; `add` lands one object (through the store's own PutObject). */
async function sequence(
  client: S3Client,
  conditionalWrites: boolean,
  n: number,
  store: 'twin' | 's3rver',
  prices: Prices,
  add: (key: string) => Promise<void>,
  out: (s: string) => void,
): Promise<DiscoveryRun[]> {
  clock = T0;
  const runs: DiscoveryRun[] = [];
  let start: Json | null = null;
  let batch = 0;
  const step = async (kind: string): Promise<DiscoveryRun> => {
    const { measure, end } = await oneRun(client, conditionalWrites, start, batch, prices, { n, store, run: runs.length + 1, kind });
    if (end !== start) batch++;
    start = end;
    runs.push(measure);
    out(row(measure));
    clock += RUN_EVERY_MS;
    return measure;
  };
  await step('first');
  await step('empty');
  await add(LAST_KEY);
  await step('last');
  await add(FIRST_KEY);
  let m = await step('first-key');
  for (let i = 0; !m.foundFirstKey && i < 8; i++) m = await step(m.listing === 'full' ? 'after' : 'wait');
  if (!m.foundFirstKey) out(`  !! ${n} objects (${store}): the first-key file was not found in ${runs.length} runs`);
  await add(RECENT_KEY);
  const recent = await step('recent-key');
  if (!recent.foundRecentKey) out(`  !! ${n} objects (${store}): the recent-key file was not found by the next run`);
  return runs;
}

const HEAD = 'objects    store   run kind       listing      LIST  ckpt GET  ckpt PUT  new files  found?  discovery s  run s  cpu s   $/month at 96/day';
function row(m: DiscoveryRun): string {
  return (
    `${m.n.toLocaleString('en-US').padStart(9)}  ${m.store.padEnd(7)} ${String(m.run).padStart(2)}  ${m.kind.padEnd(10)} ${m.listing.padEnd(11)} ${String(m.lists).padStart(5)}  ` +
    `${String(m.checkpointGets).padStart(8)}  ${String(m.checkpointPuts).padStart(8)}  ${String(m.newFiles).padStart(9)}  ${(m.foundFirstKey || m.foundRecentKey ? 'yes' : '-').padEnd(6)}  ` +
    `${m.discoverySeconds.toFixed(3).padStart(11)}  ${m.runSeconds.toFixed(3).padStart(6)}  ${m.runCpuSeconds.toFixed(3).padStart(6)}  ${m.usdPerMonth.toFixed(4).padStart(8)}`
  );
}

export interface DiscoveryResults {
  readonly date: string;
  readonly node: string;
  readonly cores: number;
  readonly loadAverage: { readonly start: number[]; readonly end: number[] };
  readonly prices: Prices;
  readonly runs: DiscoveryRun[];
  /** Per prefix size: an hour of runs (3 incremental and the hourly backfill, when the prefix is larger than 10^4) as a monthly price. */
  readonly steadyUsdPerMonth: Record<string, number>;
  readonly twinRequestsCheck: string;
}

export async function runDiscoverySection(sizes: readonly number[], out: (s: string) => void): Promise<DiscoveryResults> {
  const loadStart = loadavg().map((x) => Math.round(x * 10) / 10);
  const p = loadPrices().prices;
  const prices: Prices = { list: p.s3PerThousandPutCopyPostList.usd!, put: p.s3PerThousandPutCopyPostList.usd!, get: p.s3PerThousandGetAndOther.usd! };
  const runs: DiscoveryRun[] = [];
  const checks: string[] = [];
  out(`  ${HEAD}`);
  for (const n of sizes) {
    const twin = new S3ListTwin(() => clock);
    const tg = Date.now();
    twin.load(
      (function* () {
        for (const [k, ms] of prefixKeys(n)) yield [k, { body: ONE_BYTE, etag: `"g${k.length}"`, lastModified: new Date(ms) }] as [string, TwinObject];
      })(),
    );
    out(`  ${n.toLocaleString('en-US')} keys generated in the twin in ${((Date.now() - tg) / 1000).toFixed(1)} s`);
    const client = twinClient(twin);
    const seq = await sequence(
      client,
      true,
      n,
      'twin',
      prices,
      async (key) => twin.put(key, ONE_BYTE, new Date(clock), false),
      (s) => out(`  ${s}`),
    );
    runs.push(...seq);
    const counted = seq.reduce((a, m) => a + m.lists, 0);
    checks.push(`${n}: twin answered ${twin.requests.list} LISTs, the adapters counted ${counted}`);
  }
  // s3rver: the 10^4 prefix again, PUT object by object, to cross-check the twin's counts.
  const upTo = sizes.filter((n) => n <= 10_000);
  const small = upTo.length ? [Math.max(...upTo)] : [];
  if (small.length) {
    const stack = await startLocalStack({ services: ['s3'] });
    try {
      const { s3 } = createClients(stack.connection);
      await ensureBucket(s3, BUCKET);
      for (const n of small) {
        const tp = Date.now();
        const keys = [...prefixKeys(n)].map(([k]) => k);
        for (let i = 0; i < keys.length; i += 64) {
          await Promise.all(keys.slice(i, i + 64).map((Key) => s3.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: ONE_BYTE }))));
        }
        out(
          `  ${n.toLocaleString('en-US')} objects PUT into s3rver in ${((Date.now() - tp) / 1000).toFixed(1)} s (LastModified: now; s3rver ignores If-None-Match, so the checkpoint GETs before each write-once PUT)`,
        );
        const seq = await sequence(
          s3,
          false,
          n,
          's3rver',
          prices,
          async (Key) => void (await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: ONE_BYTE }))),
          (s) => out(`  ${s}`),
        );
        runs.push(...seq);
        const twinLists = runs.filter((m) => m.n === n && m.store === 'twin').map((m) => m.lists);
        const same = JSON.stringify(twinLists) === JSON.stringify(seq.map((m) => m.lists));
        checks.push(`${n}: LISTs per run on s3rver ${same ? 'equal' : 'DIFFER from'} the twin's (${seq.map((m) => m.lists).join(',')})`);
      }
    } finally {
      await stack.stop();
    }
  }
  for (const c of checks) out(`  check: ${c}`);
  const steadyUsdPerMonth: Record<string, number> = {};
  for (const n of sizes) {
    const tw = runs.filter((m) => m.n === n && m.store === 'twin');
    const empty = tw.find((m) => m.kind === 'empty')!;
    // An hour of runs: 3 empty incremental ones and the backfill (the run that found the first-key
    // file, one new file in it), or 4 full listings when the prefix is listed whole every run.
    const backfill = tw.find((m) => m.foundFirstKey && m.listing === 'full' && m.kind !== 'first-key') ?? empty;
    steadyUsdPerMonth[String(n)] = (3 * empty.usdPerMonth + backfill.usdPerMonth) / 4;
  }
  const loadEnd = loadavg().map((x) => Math.round(x * 10) / 10);
  return {
    date: new Date().toISOString().slice(0, 10),
    node: process.version,
    cores: cpus().length,
    loadAverage: { start: loadStart, end: loadEnd },
    prices,
    runs,
    steadyUsdPerMonth,
    twinRequestsCheck: checks.join('; '),
  };
}
