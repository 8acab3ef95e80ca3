/**
 * `sluice lateness` on generated data whose lateness is known: rows written now whose event
 * times are now − L, for L from a known set (S3: objects of JSON lines, arrival = LastModified;
 * Kinesis: records put now, arrival = ApproximateArrivalTimestamp). The command's percentiles
 * must be within 1% of the set's own nearest-rank percentiles (the write itself takes a moment,
 * so the measured lateness is L plus well under a second, against L of minutes to hours).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { PutRecordsCommand } from '@aws-sdk/client-kinesis';
import { putJsonRecords } from '../../lib/conformance/kinesis';
import { ensureBucket, ensureStream } from '../../lib/local/resources';
import { cliEnv, runCli } from '../helpers/cli';
import { testClients, testConnection, uniqueName } from '../helpers/stack';

const SEC = 1000;

/** The set's percentile by the definition (rank ⌈p·n⌉ of the sorted values, 1-based). */
function percentileOf(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(p * sorted.length) - 1];
}

/** A fixed permutation of 0..n-1 (n not a multiple of 7919), so rows are not in lateness order. */
const shuffled = (n: number) => Array.from({ length: n }, (_, k) => (k * 7919) % n);

interface LatenessJson {
  count: number;
  method: string;
  percentiles: Record<'p50' | 'p90' | 'p99' | 'p999' | 'max', number>;
  unreadable: { count: number; examples: { where: string; reason: string }[] };
  candidates: { delayMs: number; dropFraction: number; current?: boolean; recommended?: boolean }[];
  recommendedDelay: string;
}

function expectWithin1Percent(measured: LatenessJson, known: number[]): void {
  const want = {
    p50: percentileOf(known, 0.5),
    p90: percentileOf(known, 0.9),
    p99: percentileOf(known, 0.99),
    p999: percentileOf(known, 0.999),
    max: Math.max(...known),
  };
  for (const k of Object.keys(want) as (keyof typeof want)[]) {
    const relative = Math.abs(measured.percentiles[k] - want[k]) / want[k];
    expect({ percentile: k, within1Percent: relative <= 0.01 }).toEqual({ percentile: k, within1Percent: true });
  }
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const agg = require('aws-kinesis-agg') as {
  aggregate(
    records: Array<{ partitionKey: string; data: Buffer }>,
    onEncoded: (r: { partitionKey: string; data: Buffer }, done: (err?: Error) => void) => void,
    afterAll: () => void,
    onError: (e: Error) => void,
  ): void;
};

/** The KPL's encoding of `users` (awslabs' aws-kinesis-agg): one or more aggregated records. */
function aggregated(users: Array<{ partitionKey: string; data: Buffer }>): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    agg.aggregate(
      users,
      (encoded, done) => {
        out.push(Buffer.from(encoded.data));
        done();
      },
      () => resolve(out),
      reject,
    );
  });
}

describe('sluice lateness', () => {
  describe('on an S3 landing prefix', () => {
    // 1000 rows in 10 objects; row k is 610 s + 20 s · k late (10m 10s to 5h 43m 10s)
    const known = Array.from({ length: 1000 }, (_, k) => (610 + 20 * k) * SEC);
    let bucket: string;

    beforeAll(async () => {
      const { s3 } = testClients();
      bucket = uniqueName('sluice-lateness');
      await ensureBucket(s3, bucket);
      const order = shuffled(known.length);
      for (let o = 0; o < 10; o++) {
        const now = Date.now();
        const lines = order
          .slice(o * 100, o * 100 + 100)
          .map((k) => JSON.stringify({ user: `u${k}`, event_time: new Date(now - known[k]).toISOString(), amount: 1 }));
        if (o === 3) lines.push('{"user":"x","event_time":"not a time"}', '{"user":"y"}', 'not json');
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `landing/2026/12/01/${o}.json`, Body: lines.join('\n') }));
      }
      // the CLI's own objects under the source bucket's _sluice/ are not data
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'landing/_sluice/q/checkpoint/metadata', Body: '{"id":"q"}' }));
    });

    it('reports the percentiles of the known lateness within 1%, and what could not be read', async () => {
      const r = await runCli(
        ['lateness', '--source', `s3://${bucket}/landing`, '--column', 'event_time', '--since', '1h', '--delay', '1h', '--json'],
        cliEnv(testConnection(), 's3'),
      );
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const out = JSON.parse(r.stdout) as LatenessJson;
      expect(out.count).toBe(known.length);
      expect(out.method).toBe('nearest-rank');
      expectWithin1Percent(out, known);
      expect(out.unreadable.count).toBe(3);
      expect(out.unreadable.examples.map((e) => e.where)).toEqual([4, 5, 6].map((line) => `s3://${bucket}/landing/2026/12/01/3.json line ${100 + line - 3}`));
      // 1h drops rows k > (3600 − 610) / 20 = 149.5: 850 of 1000; it is the query's delay here
      expect(out.candidates.find((c) => c.delayMs === 3_600_000)).toMatchObject({ dropFraction: 0.85, current: true });
      // p99 is row 989, 610 + 19780 s = 5h 39m 50s: rounded up, 6 hours, which drops none
      expect(out.recommendedDelay).toBe('6 hours');
      expect(out.candidates.find((c) => c.recommended)).toMatchObject({ delayMs: 6 * 3_600_000, dropFraction: 0 });
    });

    it('prints the figures and the recommendation for people', async () => {
      const r = await runCli(['lateness', '--source', `s3://${bucket}/landing`, '--column', 'event_time'], cliEnv(testConnection(), 's3'));
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/1000 rows from the 10 newest of 10 objects/);
      expect(r.stdout).toContain('p99 5h 40m'); // row 989: 610 + 19780 s = 5h 39m 50s
      expect(r.stdout).toMatch(/1h\s+85\.0%\s+\(850 rows\)/);
      expect(r.stdout).toContain(".withWatermark('event_time', '6 hours')");
      expect(r.stdout).toContain('3 rows had no readable event_time');
    });

    it('takes the source, the column and the current delay from a query module', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sluice-lateness-'));
      try {
        const api = JSON.stringify(join(__dirname, '..', '..', 'lib', 'api', 'query'));
        const module = join(dir, 'query.js');
        writeFileSync(
          module,
          `const { readStream, window, count } = require(${api});
module.exports.default = () => readStream.format('json').schema('user STRING, event_time TIMESTAMP').load('s3://${bucket}/landing')
  .withWatermark('event_time', '2 hours').groupBy(window('event_time', '10 minutes')).agg(count().as('n'))
  .writeStream.outputMode('append').trigger({ availableNow: true }).queryName('late-q').plan();
`,
        );
        const r = await runCli(['lateness', module, '--json'], cliEnv(testConnection(), 's3'));
        expect(r.stderr).toBe('');
        const out = JSON.parse(r.stdout) as LatenessJson;
        expect(out.count).toBe(known.length);
        // 2h drops rows k > (7200 − 610) / 20 = 329.5: 670 of 1000
        expect(out.candidates.find((c) => c.current)).toEqual({ delayMs: 7_200_000, dropFraction: 0.67, droppedRows: 670, current: true });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('a bad --since is a usage error before anything starts', async () => {
      const r = await runCli(
        ['lateness', '--source', `s3://${bucket}/landing`, '--column', 'event_time', '--since', 'a while'],
        cliEnv(testConnection(), 's3'),
      );
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('--since "a while" is not a duration: write e.g. 15m');
    });
  });

  describe('on a Kinesis stream', () => {
    // 600 records over 2 shards, the last 100 KPL-aggregated; record k is 315 s + 30 s · k late (5m 15s to 5h 4m 45s)
    const known = Array.from({ length: 600 }, (_, k) => (315 + 30 * k) * SEC);
    let stream: string;

    beforeAll(async () => {
      const { kinesis } = testClients();
      stream = uniqueName('sluice-lateness');
      await ensureStream(kinesis, stream, 2);
      const order = shuffled(known.length);
      for (let b = 0; b < 6; b++) {
        const now = Date.now();
        const records = order
          .slice(b * 100, b * 100 + 100)
          .map((k) => ({ data: { user: `u${k}`, event_time: new Date(now - known[k]).toISOString() } as unknown, partitionKey: `u${k}` }));
        if (b === 2) records.push({ data: 'not an object', partitionKey: 'bad' });
        if (b === 5) {
          // the last 100 as the KPL sends them: user records packed into aggregated records
          const packed = await aggregated(records.map((r) => ({ partitionKey: r.partitionKey, data: Buffer.from(JSON.stringify(r.data)) })));
          await kinesis.send(new PutRecordsCommand({ StreamName: stream, Records: packed.map((Data) => ({ Data, PartitionKey: 'agg' })) }));
        } else await putJsonRecords(kinesis, stream, records);
      }
    }, 60_000);

    it('reports the percentiles of the known lateness within 1%', async () => {
      const r = await runCli(
        ['lateness', '--source', `kinesis://${stream}`, '--column', 'event_time', '--since', '1h', '--json'],
        cliEnv(testConnection(), 'kinesis'),
      );
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const out = JSON.parse(r.stdout) as LatenessJson;
      expect(out.count).toBe(known.length);
      expectWithin1Percent(out, known);
      expect(out.unreadable.count).toBe(1);
      expect(out.unreadable.examples[0].reason).toMatch(/not an object/);
      // p99 is record 593: 315 + 17790 s = 5h 1m 45s, so 6 hours
      expect(out.recommendedDelay).toBe('6 hours');
    }, 60_000);
  });
});
