/**
 * The CLI closing the loop on the embedded stack: a two-input query fed by name
 * (`--input input1=... --input clicks=...`), and what a run wrote, read back with `sluice show`.
 * The CLI runs in this process (main(argv), output captured), as test/integration/status-cli.test.ts
 * runs it; every expectation is worked out from the input written here.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { cliClients, cliEnv, cliResources, runArgs, runCli, tempFolder, writeQuery } from '../helpers/cli';
import { ensureStateTable, ensureStream } from '../../lib/local/resources';
import { S3CheckpointStore } from '../../lib/aws/s3/checkpoint';
import type { StreamingProgress } from '../../lib/engine/progress';
import { testConnection, uniqueName } from '../helpers/stack';

const sluice = (...args: string[]) => runCli(args, cliEnv(testConnection(), 's3'));
const { path, folder } = tempFolder('sluice-cli-loop-');

async function keys(bucket: string, prefix: string): Promise<string[]> {
  const clients = cliClients();
  try {
    const page = await clients.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
    return (page.Contents ?? []).map((o) => o.Key!).sort();
  } finally {
    clients.destroy();
  }
}

describe('sluice run feeds a stream-stream join by input name', () => {
  it('puts each folder into its named input and the join emits the matches', async () => {
    const { bucket, table } = await cliResources('sluice-loop');
    const query = writeQuery(
      path('ad-clicks.js'),
      `const impressions = readStream.format('json').schema('adId STRING, impressionTime TIMESTAMP').load().withWatermark('impressionTime', '10 seconds');
const clicks = readStream.format('json').schema('clickAdId STRING, clickTime TIMESTAMP').load().withWatermark('clickTime', '20 seconds');
exports.default = impressions.join(clicks, { left: 'adId', right: 'clickAdId' }, 'inner', { name: 'clicks' }).writeStream.outputMode('append').queryName('ad-clicks').plan();`,
    );
    const imps = folder('imps', {
      '001.json': [
        { adId: 'a1', impressionTime: '2026-10-01 12:00:00' },
        { adId: 'a2', impressionTime: '2026-10-01 12:00:10' },
      ],
    });
    const clicks = folder('clicks', {
      '001.json': [
        { clickAdId: 'a2', clickTime: '2026-10-01 12:00:30' },
        { clickAdId: 'zz', clickTime: '2026-10-01 12:00:31' },
      ],
    });
    const r = await sluice(
      ...runArgs(query, {
        source: [`input1=s3://${bucket}/impressions`, `clicks=s3://${bucket}/clicks`],
        input: [`clicks=${clicks}`, `input1=${imps}`],
        checkpoint: `s3://${bucket}/ckpt`,
        sink: `s3://${bucket}/out`,
        stateTable: table,
        json: true,
      }),
    );
    expect(r.stderr).not.toMatch(/"level":"error"/);
    expect(r.code).toBe(0);
    // each folder went to its own input's prefix, not the first input's
    expect(await keys(bucket, 'impressions/')).toEqual(['impressions/001.json']);
    expect(await keys(bucket, 'clicks/')).toEqual(['clicks/001.json']);
    const report = JSON.parse(r.stdout);
    expect(report.rowsIn).toBe(4);
    expect(report.deadLetters).toBe(0);
    // a2 was clicked; a1 was not and zz had no impression: one joined row
    expect(report.batches.flatMap((b: { rows: unknown[] }) => b.rows)).toEqual([
      { adId: 'a2', impressionTime: '2026-10-01T12:00:10.000Z', clickAdId: 'a2', clickTime: '2026-10-01T12:00:30.000Z' },
    ]);
  });
});

describe('sluice run feeds a union by input name', () => {
  it("puts each folder into its input (the union's other stream is input2) and emits both streams' rows", async () => {
    const { bucket, table } = await cliResources('sluice-union');
    const query = writeQuery(
      path('ledger.js'),
      `const refunds = readStream.format('json').schema('ref STRING, value BIGINT').load();
exports.default = readStream.format('json').schema('id STRING, amount INT').load().union(refunds).writeStream.queryName('ledger').plan();`,
    );
    const orders = folder('orders', { '001.json': [{ id: 'o1', amount: 5 }] });
    const refunds = folder('refunds', { '001.json': [{ ref: 'r1', value: 7 }] });
    const r = await sluice(
      ...runArgs(query, {
        source: [`input1=s3://${bucket}/orders`, `input2=s3://${bucket}/refunds`],
        input: [`input2=${refunds}`, `input1=${orders}`],
        checkpoint: `s3://${bucket}/ckpt`,
        sink: `s3://${bucket}/out`,
        stateTable: table,
        json: true,
      }),
    );
    expect(r.code).toBe(0);
    expect(await keys(bucket, 'refunds/')).toEqual(['refunds/001.json']);
    const report = JSON.parse(r.stdout);
    expect(report.rowsIn).toBe(2);
    expect(report.batches.flatMap((b: { rows: unknown[] }) => b.rows)).toEqual([
      { id: 'o1', amount: 5 },
      { id: 'r1', amount: 7 },
    ]);
  });
});

describe('sluice show reads back what a run wrote', () => {
  const sinkTable = uniqueName('sluice-show-sink');
  let bucket: string;
  let table: string;
  let query: string;
  const source = () => `s3://${bucket}/landing`;
  const at = (q: string, ...more: string[]) => [q, query, '--source', source(), ...more];

  beforeAll(async () => {
    ({ bucket, table } = await cliResources('sluice-show', (clients) => ensureStateTable(clients.dynamodb, sinkTable)));
    query = writeQuery(
      path('user-totals.js'),
      `exports.default = readStream.format('json').schema('user STRING, event_time TIMESTAMP, amount DOUBLE').load()
  .withWatermark('event_time', '10 minutes').groupBy(window('event_time', '10 minutes'), 'user').agg(sum('amount').as('total'))
  .writeStream.outputMode('update').queryName('user-totals').plan();`,
    );
  });

  it('the summary says where the output and the dead letters went; show lists them, the checkpoint and the state of a key', async () => {
    const input = folder('users', {
      '001.json': [
        { user: 'alice', event_time: '2026-10-01 12:00:00', amount: 5 },
        { user: 'bob', event_time: '2026-10-01 12:01:00', amount: 2 },
        { user: 'alice', event_time: '2026-10-01 12:02:00', amount: 3 },
      ],
    });
    writeFileSync(join(input, '002.json'), '{"user":"carol","event_time":"2026-10-01 12:03:00","amount":1}\nnot json\n');
    const home = `s3://${bucket}/_sluice/user-totals`;
    const run = await sluice(...runArgs(query, { source: source(), input, stateTable: table }));
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`  dead letters  1 (in ${home}/checkpoint-dead-letter/malformed/)\n`);
    expect(run.stdout).toContain(`  output        ${home}/output\n`);
    expect(run.stdout).toContain(`  read back     npm run sluice -- show outputs|dead-letters|checkpoint ${query} --source ${source()}\n`);

    // outputs: the one data batch's object holds the three groups' rows (update mode emits them at once)
    const outputs = JSON.parse((await sluice('show', ...at('outputs', '--json'))).stdout);
    expect(outputs.sink).toBe(`${home}/output`);
    const rows = outputs.rows.map((r: { row: { user: string; total: number } }) => [r.row.user, r.row.total]).sort();
    expect(rows).toEqual([
      ['alice', 8],
      ['bob', 2],
      ['carol', 1],
    ]);
    expect(outputs.rows.every((r: { batchId: number }) => r.batchId === 0)).toBe(true);
    const outText = await sluice('show', ...at('outputs'));
    expect(outText.code).toBe(0);
    expect(outText.stdout).toContain(`${home}/output: `);
    expect(outText.stdout).toMatch(/batch-0000000000\.jsonl {2}\{"window":.*"user":"alice".*"total":8\}/);

    // dead letters: the line that is not JSON, with its file, line and reason
    const dl = await sluice('show', ...at('dead-letters'));
    expect(dl.code).toBe(0);
    expect(dl.stdout).toContain(`${home}/checkpoint-dead-letter/: 1 object, 1 record`);
    expect(dl.stdout).toMatch(/^malformed batch 0 {2}landing\/002\.json line 2: malformed JSON .*\n {2}not json$/m);
    const dlJson = JSON.parse((await sluice('show', ...at('dead-letters', '--json'))).stdout);
    expect(dlJson.records).toEqual([expect.objectContaining({ kind: 'malformed', batchId: 0, source: 'landing/002.json line 2' })]);

    // checkpoint: its entries, and one printed
    const ck = JSON.parse((await sluice('show', ...at('checkpoint', '--json'))).stdout);
    expect(ck.checkpoint).toBe(`${home}/checkpoint`);
    expect(ck.latestCommitBatch).toBeGreaterThanOrEqual(0);
    expect(ck.entries.map((e: { entry: string }) => e.entry)).toEqual(expect.arrayContaining(['metadata', 'offsets/0', 'commits/0', 'progress/0']));
    const commit = JSON.parse((await sluice('show', ...at('checkpoint', '--entry', 'commits/0', '--json'))).stdout);
    expect(commit.body).toMatchObject({ batchId: 0, queryId: ck.queryId });
    const noEntry = await sluice('show', ...at('checkpoint', '--entry', 'commits/99'));
    expect(noEntry.code).toBe(2);
    expect(noEntry.stderr).toContain(`--entry commits/99: ${home}/checkpoint has no entry commits/99`);

    // state: alice's one group, read through the state store
    const state = JSON.parse((await sluice('show', ...at('state', '--key', 'alice', '--state-table', table, '--json'))).stdout);
    expect(state.rows).toHaveLength(1);
    expect(state.rows[0]).toMatchObject({ operatorId: 'op0', kind: 'aggregate', group: '[2026-10-01T12:00:00.000Z, 2026-10-01T12:10:00.000Z), "alice"' });
    const byWindow = JSON.parse((await sluice('show', ...at('state', '--key', '2026-10-01T12:00:00Z', '--state-table', table, '--json'))).stdout);
    expect(byWindow.rows.map((r: { group: string }) => r.group.split(', ').pop()).sort()).toEqual(['"alice"', '"bob"', '"carol"']);
    const none = await sluice('show', ...at('state', '--key', 'dave', '--state-table', table));
    expect(none.stdout).toMatch(/state of key "dave" after batch \d+ \(table .*\): 0 rows/);
  });

  it('with a DynamoDB sink the summary names the table and query key, and show outputs reads its items', async () => {
    const input = folder('users-ddb', { '001.json': [{ user: 'erin', event_time: '2026-10-01 12:00:00', amount: 4 }] });
    const checkpoint = `s3://${bucket}/ddb/checkpoint`;
    const args = { source: `s3://${bucket}/landing-ddb`, checkpoint, sink: `dynamodb://${sinkTable}`, stateTable: table };
    const run = await sluice(...runArgs(query, { ...args, input, json: true }));
    expect(run.code).toBe(0);
    const queryId = JSON.parse(run.stdout).queryId as string;
    const text = await sluice(...runArgs(query, args));
    expect(text.stdout).toContain(`  output        dynamodb://${sinkTable}/${queryId}\n`);
    expect(text.stdout).toContain(`  dead letters  0 (would go to s3://${bucket}/ddb/checkpoint-dead-letter/malformed/)\n`);
    const shown = JSON.parse((await sluice('show', 'outputs', query, '--checkpoint', checkpoint, '--sink', `dynamodb://${sinkTable}`, '--json')).stdout);
    expect(shown.sink).toBe(`dynamodb://${sinkTable}/${queryId}`);
    expect(shown.rows.map((r: { row: { user: string; total: number } }) => [r.row.user, r.row.total])).toEqual([['erin', 4]]);
  });

  it("show outputs reads a DynamoDB sink's DECIMAL back with its scale, from the query module's types", async () => {
    const prices = writeQuery(
      path('prices.js'),
      `exports.default = readStream.format('json').schema('sku STRING, price DECIMAL(10,2)').load()
  .writeStream.outputMode('append').queryName('prices').plan();`,
    );
    const input = folder('prices', { '001.json': [{ sku: 'a', price: 12.3 }] });
    const checkpoint = `s3://${bucket}/prices/checkpoint`;
    const sink = `dynamodb://${sinkTable}/prices-v1`;
    const run = await sluice(...runArgs(prices, { source: `s3://${bucket}/landing-prices`, input, checkpoint, sink, stateTable: table }));
    expect(run.code).toBe(0);
    // DynamoDB stores 12.30 as the number 12.3; the query's type DECIMAL(10,2) gives the scale back
    const shown = JSON.parse((await sluice('show', 'outputs', prices, '--checkpoint', checkpoint, '--sink', sink, '--json')).stdout);
    expect(shown.rows.map((r: { row: unknown }) => r.row)).toEqual([{ sku: 'a', price: '12.30' }]);
  });
});

describe('sluice show outputs reads a CSV sink back', () => {
  it("names each value by the header, else by the query module's columns, keeping quotes, separators, line breaks and nulls", async () => {
    const { bucket, table } = await cliResources('sluice-show-csv');
    const notes = writeQuery(
      path('notes.js'),
      `exports.default = readStream.format('json').schema('sku STRING, note STRING, qty INT').load()
  .writeStream.outputMode('append').queryName('notes').plan();`,
    );
    const input = folder('notes', {
      '001.json': [
        { sku: 'a', note: 'x; "y"\nz', qty: 1 },
        { sku: 'b', note: null, qty: 2 },
        { sku: 'c', note: '', qty: 3 },
      ],
    });
    // each value as text (CSV has no types); the writer's null (unquoted nothing) reads as null, its empty string ("") as ''
    const expected = [
      { sku: 'a', note: 'x; "y"\nz', qty: '1' },
      { sku: 'b', note: null, qty: '2' },
      { sku: 'c', note: '', qty: '3' },
    ];
    const bySku = (rows: Array<{ row: { sku: string } }>) => rows.map((r) => r.row).sort((x, y) => x.sku.localeCompare(y.sku));
    for (const [name, sink, module] of [
      ['header', `s3://${bucket}/csv-header?format=csv&header=true&sep=%3B`, []],
      ['no header, the module', `s3://${bucket}/csv-plain?format=csv`, [notes]],
    ] as const) {
      const checkpoint = `s3://${bucket}/${name.replace(/\W+/g, '-')}/checkpoint`;
      const run = await sluice(
        ...runArgs(notes, { source: `s3://${bucket}/landing-${name.replace(/\W+/g, '-')}`, input, checkpoint, sink, stateTable: table }),
      );
      expect([name, run.code]).toEqual([name, 0]);
      const shown = JSON.parse((await sluice('show', 'outputs', ...module, '--sink', sink, '--json')).stdout);
      expect([name, bySku(shown.rows)]).toEqual([name, expected]);
      const text = await sluice('show', 'outputs', ...module, '--sink', sink);
      expect(text.stdout).toContain('3 rows in CSV (each value its text)');
    }
    // without the header or the module, the columns are named as Spark names a CSV file's
    const bare = JSON.parse((await sluice('show', 'outputs', '--sink', `s3://${bucket}/csv-plain?format=csv`, '--json')).stdout);
    expect(bare.rows.map((r: { row: object }) => Object.keys(r.row))[0]).toEqual(['_c0', '_c1', '_c2']);
  });
});

describe('sluice show outputs reads a Parquet sink back with the query module', () => {
  it('gives exact DECIMALs and BIGINTs, ISO timestamps and the window struct; without the module it lists the objects', async () => {
    const { bucket, table } = await cliResources('sluice-show-parquet');
    const totals = writeQuery(
      path('sku-totals.js'),
      `exports.default = readStream.format('json').schema('sku STRING, at TIMESTAMP, price DECIMAL(10,2), n BIGINT').load()
  .withWatermark('at', '10 minutes').groupBy(window('at', '10 minutes'), 'sku').agg(sum('price').as('total'), max('n').as('top'))
  .writeStream.outputMode('update').queryName('sku-totals').plan();`,
    );
    const input = folder('skus', {});
    // written as text: 9007199254740993 is no double, and 0.10 + 0.20 is exactly 0.30 only as decimals
    writeFileSync(
      join(input, '001.json'),
      '{"sku":"a","at":"2026-10-01 12:00:00.000001","price":0.10,"n":9007199254740993}\n{"sku":"a","at":"2026-10-01 12:03:00","price":0.20,"n":5}\n',
    );
    const sink = `s3://${bucket}/parquet-out?format=parquet`;
    const run = await sluice(
      ...runArgs(totals, { source: `s3://${bucket}/landing-parquet`, input, checkpoint: `s3://${bucket}/parquet/checkpoint`, sink, stateTable: table }),
    );
    expect(run.code).toBe(0);
    const shown = JSON.parse((await sluice('show', 'outputs', totals, '--sink', sink, '--json')).stdout);
    expect(shown.rows.map((r: { row: unknown }) => r.row)).toEqual([
      { window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, sku: 'a', total: '0.30', top: '9007199254740993' },
    ]);
    const text = await sluice('show', 'outputs', totals, '--sink', sink);
    expect(text.stdout).toContain('1 row in Parquet');
    const bare = await sluice('show', 'outputs', '--sink', sink);
    expect(bare.stdout).toContain('0 rows in Parquet (give the query module to read them)');
  });
});

describe("the progress record's sources[].metrics count what a run read", () => {
  it.each([
    ['the single executor', [] as string[]],
    ['a partitioned run on worker threads', ['--workers', '2']],
  ])('through %s: 6 files, their bytes and their lines', async (_name, extra) => {
    const { bucket, table } = await cliResources('sluice-metrics');
    const query = writeQuery(
      path('metrics-count.js'),
      `exports.default = readStream.format('json').schema('user STRING, event_time TIMESTAMP').option('maxFilesPerTrigger', 4).load()
  .withWatermark('event_time', '10 minutes').groupBy(window('event_time', '10 minutes'), 'user').agg(count().as('n'))
  .writeStream.outputMode('update').queryName('metrics-count').plan();`,
    );
    // 6 files of 1 to 6 lines, one of them not JSON (a dead letter, still a record read)
    const files: Record<string, object[]> = {};
    for (let f = 1; f <= 6; f++) files[`00${f}.json`] = Array.from({ length: f }, (_, k) => ({ user: `u${k}`, event_time: `2026-10-01 12:0${f}:00` }));
    const input = folder(`metrics-${extra.length}`, files);
    writeFileSync(join(input, '006.json'), `${files['006.json'].map((r) => JSON.stringify(r)).join('\n')}\nnot json\n`);
    const sizes = Object.keys(files).map((n) => readFileSync(join(input, n)).length);
    const checkpoint = `s3://${bucket}/checkpoint`;
    const r = await sluice(...runArgs(query, { source: `s3://${bucket}/landing`, input, checkpoint, stateTable: table, json: true, more: extra }));
    expect(r.code).toBe(0);
    // the records as the checkpoint keeps them (progress/N), whichever scheduler wrote them
    const clients = cliClients();
    const store = new S3CheckpointStore({ client: clients.s3, bucket, prefix: 'checkpoint', conditionalWrites: false });
    const head = await store.head();
    const records: StreamingProgress[] = [];
    for (let b = 0; b <= head.latestCommitBatch; b++) records.push((await store.readProgress(b)) as unknown as StreamingProgress);
    clients.destroy();
    const metrics = records.map((p) => p.sources[0].metrics);
    // maxFilesPerTrigger 4: batch 0 reads 4 files, batch 1 the other 2, then a no-data batch reads none
    expect(metrics.map((m) => m.filesRead)).toEqual([4, 2, ...metrics.slice(2).map(() => 0)]);
    expect(metrics.reduce((a, m) => a + (m.filesRead ?? 0), 0)).toBe(6);
    expect(metrics.map((m) => m.bytesRead)).toEqual([sizes.slice(0, 4).reduce((a, n) => a + n, 0), sizes[4] + sizes[5], ...metrics.slice(2).map(() => 0)]);
    // 1 + 2 + 3 + 4 lines, then 5 + 6 and the line that is not JSON
    expect(metrics.map((m) => m.recordsRead)).toEqual([10, 12, ...metrics.slice(2).map(() => 0)]);
    expect(records.map((p) => p.numInputRows)).toEqual([10, 11, ...metrics.slice(2).map(() => 0)]);
    // and the backlog beside them: what was waiting after each batch
    expect(metrics.map((m) => m.files)).toEqual([2, 0, ...metrics.slice(2).map(() => 0)]);
  });
});

describe("a Kinesis source's sources[].metrics", () => {
  it('count the records and bytes read, and no files', async () => {
    const stream = uniqueName('sluice-kmetrics');
    const { bucket, table } = await cliResources('sluice-kmetrics', (clients) => ensureStream(clients.kinesis, stream, 1));
    const query = writeQuery(
      path('kinesis-count.js'),
      `exports.default = readStream.format('json').schema('user STRING, event_time TIMESTAMP').kinesis()
  .withWatermark('event_time', '10 minutes').groupBy(window('event_time', '10 minutes'), 'user').agg(count().as('n'))
  .writeStream.outputMode('update').queryName('kinesis-count').plan();`,
    );
    // 3 + 4 records, each line one record
    const input = folder('kinesis-in', {
      '001.json': [0, 1, 2].map((k) => ({ user: `u${k}`, event_time: '2026-10-01 12:01:00' })),
      '002.json': [0, 1, 2, 3].map((k) => ({ user: `v${k}`, event_time: '2026-10-01 12:02:00' })),
    });
    const r = await sluice(
      ...runArgs(query, {
        source: `kinesis://${stream}`,
        input,
        checkpoint: `s3://${bucket}/checkpoint`,
        sink: `s3://${bucket}/out`,
        stateTable: table,
        json: true,
      }),
    );
    expect(r.code).toBe(0);
    const metrics = (JSON.parse(r.stdout).progress as StreamingProgress[]).map((p) => p.sources[0].metrics);
    expect(metrics.reduce((a, m) => a + (m.recordsRead ?? 0), 0)).toBe(7);
    expect(metrics[0].bytesRead).toBeGreaterThan(0);
    expect(metrics.every((m) => m.filesRead === undefined)).toBe(true);
  });
});
