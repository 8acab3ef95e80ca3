/**
 * The order-lines query of docs/writing-queries.md ("Nested data and exact decimals"): nested JSON
 * orders, each line exploded into a row, its total qty × price exact (INT × DECIMAL(10,2) is
 * DECIMAL(21,2)), revenue per SKU per 10-minute window (sum of DECIMAL(21,2) is DECIMAL(31,2)).
 * The query as printed on the page, run three times on the in-memory ports with the orders of
 * the public case cases-3/types-order-lines-explode-window.json; the rows are worked out by hand
 * below. The last test checks that the page prints this query and these rows and no others.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import type { RunReport } from '../../lib/engine/run/types';
import type { OutputRow } from '../../lib/engine/ports';
import { count, explode, expr, multiplyDecimal, readStream, sum, window } from '../../lib/api/query';
import { outputColumns } from '../../lib/engine/plan/chain';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';

// ---- the query of docs/writing-queries.md, as printed there
const orders = readStream
  .format('json')
  .schema('order_id STRING, event_time TIMESTAMP, lines ARRAY<STRUCT<sku: STRING, qty: INT, price: DECIMAL(10,2)>>')
  .load('s3://my-bucket/orders/')
  .withWatermark('event_time', '10 minutes');
const lineTotals = orders
  .select('order_id', 'event_time', explode('lines').as('line'))
  .select('event_time', 'line.sku', 'line.qty', 'line.price')
  .withColumn('line_total', 'DECIMAL(21,2)', (r) => multiplyDecimal(r.qty, r.price));
const plan = lineTotals
  .groupBy(window('event_time', '10 minutes'), 'sku')
  .agg(sum('line_total').as('revenue'), count().as('lines'))
  .writeStream.outputMode('append')
  .queryName('sku-revenue')
  .plan();

// ---- the same query with Spark SQL expressions, as docs/writing-queries.md ("Spark SQL expressions") prints it
const sqlPlan = readStream
  .format('json')
  .schema('order_id STRING, event_time TIMESTAMP, lines ARRAY<STRUCT<sku: STRING, qty: INT, price: DECIMAL(10,2)>>')
  .load('s3://my-bucket/orders/')
  .withWatermark('event_time', '10 minutes')
  .selectExpr('event_time', 'explode(lines) AS line')
  .filter('line.qty > 0')
  .withColumn('line_total', 'line.qty * line.price')
  .groupBy(expr("window(event_time, '10 minutes')"), expr('line.sku').as('sku'))
  .agg(sum('line_total').as('revenue'), count().as('lines'))
  .writeStream.outputMode('append')
  .queryName('sku-revenue-sql')
  .plan();

type Line = { sku: string; qty: number; price: number };
const order = (order_id: string, hhmmss: string, lines: Line[]) => ({ order_id, event_time: `2026-10-01 12:${hhmmss}`, lines });
const line = (sku: string, qty: number, price: number): Line => ({ sku, qty, price });

/** Each run's landing file (the case's three steps). */
const RUNS = [
  [
    order('o1', '01:00', [line('A', 2, 9.99), line('B', 1, 0.1)]),
    order('o2', '04:30', [line('A', 1, 9.99), line('B', 3, 0.2)]),
    order('o3', '07:00', []),
    order('o4', '12:00', [line('A', 1, 10.01)]),
  ],
  [order('o5', '25:00', [line('B', 10, 0.15)]), order('o6', '08:00', [line('A', 1, 0.01), line('C', 2, 5.5)])],
  [order('o7', '03:00', [line('A', 100, 1.0)]), order('o8', '41:00', [line('C', 1, 3.33)])],
];

const w = (from: string, to: string) => ({ start: `2026-10-01T12:${from}:00.000Z`, end: `2026-10-01T12:${to}:00.000Z` });

/*
 * Worked out by hand. Line totals (exact, scale 0 + 2): o1 A 2 × 9.99 = 19.98, B 1 × 0.10 = 0.10;
 * o2 A 9.99, B 3 × 0.20 = 0.60; o3 has no line (no row, but its 12:07 still reaches the watermark,
 * which comes before explode); o4 A 10.01; o5 B 10 × 0.15 = 1.50; o6 A 0.01, C 2 × 5.50 = 11.00;
 * o7 A 100 × 1.00 = 100.00; o8 C 3.33.
 *
 * Run 1, batch 0 (watermark 0): all four lines' windows are open; max event time 12:12, so the
 * watermark becomes 12:02. Batch 1 (no data, watermark 12:02) closes no window ([12:00,12:10) ends
 * after 12:02). State: A and B in [12:00,12:10), A in [12:10,12:20): 3 rows.
 * Run 2, batch 2 (watermark 12:02): o6 at 12:08 is after the watermark, so it is counted; max 12:25,
 * watermark 12:15. Batch 3 (watermark 12:15) closes [12:00,12:10): A = 19.98 + 9.99 + 0.01 = 29.98
 * (3 lines), B = 0.10 + 0.60 = 0.70 (2), C = 11.00 (1). State: A [12:10,12:20), B [12:20,12:30).
 * Run 3, batch 4 (watermark 12:15): o7's line (12:03) is at or before the watermark: dropped; max
 * 12:41, watermark 12:31. Batch 5 closes [12:10,12:20): A 10.01 (1) and [12:20,12:30): B 1.50 (1).
 * State: C in [12:40,12:50). The sum of DECIMAL(21,2) is DECIMAL(31,2): the text keeps two decimals.
 */
const EXPECTED = [
  { batches: [[], []], watermark: '2026-10-01T12:02:00.000Z', stateRows: 3, dropped: 0 },
  {
    batches: [
      [],
      [
        { window: w('00', '10'), sku: 'A', revenue: '29.98', lines: 3 },
        { window: w('00', '10'), sku: 'B', revenue: '0.70', lines: 2 },
        { window: w('00', '10'), sku: 'C', revenue: '11.00', lines: 1 },
      ],
    ],
    watermark: '2026-10-01T12:15:00.000Z',
    stateRows: 2,
    dropped: 0,
  },
  {
    batches: [
      [],
      [
        { window: w('10', '20'), sku: 'A', revenue: '10.01', lines: 1 },
        { window: w('20', '30'), sku: 'B', revenue: '1.50', lines: 1 },
      ],
    ],
    watermark: '2026-10-01T12:31:00.000Z',
    stateRows: 1,
    dropped: 1,
  },
];

/** A batch's rows by window and SKU: within a batch, rows come in no defined order. */
const sorted = (rows: readonly OutputRow[]) =>
  [...rows].sort((a, b) => `${JSON.stringify(a.window)}${a.sku}`.localeCompare(`${JSON.stringify(b.window)}${b.sku}`));

describe('the documented order-lines query: the exploded lines and their exact totals', () => {
  it('gives one row per line (none for an order without lines), qty × price exact at scale 2', async () => {
    const q = lineTotals.writeStream.queryName('line-totals').plan();
    expect(outputColumns(q).map((c) => [c.name, c.type, c.precision, c.scale])).toEqual([
      ['event_time', 'TIMESTAMP', undefined, undefined],
      ['sku', 'STRING', undefined, undefined],
      ['qty', 'INT', undefined, undefined],
      ['price', 'DECIMAL', 10, 2],
      ['line_total', 'DECIMAL', 21, 2],
    ]);
    const source = new InMemoryFileSource(q.source.schema);
    source.add('orders-0.json', RUNS[0]);
    const report = await new MicroBatchExecutor({
      plan: q,
      source,
      checkpoint: new InMemoryCheckpoint(),
      state: new InMemoryStateStore(),
      sink: new InMemorySink(),
    }).run({
      collectRows: true,
    });
    const at = (hhmmss: string) => `2026-10-01T12:${hhmmss}.000Z`;
    expect(report.batches.flatMap((b) => b.rows)).toEqual([
      { event_time: at('01:00'), sku: 'A', qty: 2, price: '9.99', line_total: '19.98' },
      { event_time: at('01:00'), sku: 'B', qty: 1, price: '0.10', line_total: '0.10' },
      { event_time: at('04:30'), sku: 'A', qty: 1, price: '9.99', line_total: '9.99' },
      { event_time: at('04:30'), sku: 'B', qty: 3, price: '0.20', line_total: '0.60' },
      { event_time: at('12:00'), sku: 'A', qty: 1, price: '10.01', line_total: '10.01' },
    ]);
  });
});

describe('the documented order-lines query (explode, exact line totals, revenue per SKU per window)', () => {
  let reports: RunReport[];
  beforeAll(async () => {
    const source = new InMemoryFileSource(plan.source.schema);
    const checkpoint = new InMemoryCheckpoint();
    const state = new InMemoryStateStore();
    const sink = new InMemorySink();
    reports = [];
    for (const [i, run] of RUNS.entries()) {
      source.add(`orders-${i}.json`, run);
      reports.push(await new MicroBatchExecutor({ plan, source, checkpoint, state, sink }).run({ collectRows: true }));
    }
  });

  it('types the columns: line_total DECIMAL(21,2), revenue DECIMAL(31,2) (Spark: p + 10), lines BIGINT', () => {
    const cols = outputColumns(plan);
    expect(cols.map((c) => [c.name, c.type])).toEqual([
      ['window', 'TIMESTAMP'],
      ['sku', 'STRING'],
      ['revenue', 'DECIMAL'],
      ['lines', 'LONG'],
    ]);
    expect(cols[2]).toMatchObject({ precision: 31, scale: 2 });
  });

  it.each([1, 2, 3])('run %d: a window closes when the watermark passes its end, its revenue exact to the cent', (run) => {
    const report = reports[run - 1];
    const expected = EXPECTED[run - 1];
    expect(report.batches.map((b) => sorted(b.rows))).toEqual(expected.batches);
    expect(report.batches.map((b) => b.noData)).toEqual([false, true]);
    expect(report.watermark).toBe(expected.watermark);
    expect(report.stateRows).toBe(expected.stateRows);
    expect(report.droppedByWatermark).toBe(expected.dropped);
  });
});

describe('the order-lines query written with Spark SQL expressions', () => {
  it('types line_total as Spark types INT * DECIMAL(10,2) and emits the same rows, run by run', async () => {
    expect(outputColumns(sqlPlan).map((c) => [c.name, c.type, c.precision, c.scale])).toEqual([
      ['window', 'TIMESTAMP', undefined, undefined],
      ['sku', 'STRING', undefined, undefined],
      ['revenue', 'DECIMAL', 31, 2],
      ['lines', 'LONG', undefined, undefined],
    ]);
    const source = new InMemoryFileSource(sqlPlan.source.schema);
    const checkpoint = new InMemoryCheckpoint();
    const state = new InMemoryStateStore();
    const sink = new InMemorySink();
    for (const [i, run] of RUNS.entries()) {
      source.add(`orders-${i}.json`, run);
      const report = await new MicroBatchExecutor({ plan: sqlPlan, source, checkpoint, state, sink }).run({ collectRows: true });
      expect(report.batches.map((b) => sorted(b.rows))).toEqual(EXPECTED[i].batches);
      expect(report.watermark).toBe(EXPECTED[i].watermark);
      expect(report.droppedByWatermark).toBe(EXPECTED[i].dropped);
    }
  });

  it('refuses a misspelt field when the query is built, with the error the page prints', () => {
    const lines = readStream
      .format('json')
      .schema('event_time TIMESTAMP, lines ARRAY<STRUCT<sku: STRING, qty: INT, price: DECIMAL(10,2)>>')
      .load()
      .selectExpr('event_time', 'explode(lines) AS line');
    expect(() => lines.filter('line.qtty > 0')).toThrow('[FIELD_NOT_FOUND] No such struct field `qtty` in `sku`, `qty`, `price`');
    const page = readFileSync(join(__dirname, '../../docs/writing-queries.md'), 'utf8');
    expect(page).toContain('`filter(\'line.qtty > 0\')` is\n*"[FIELD_NOT_FOUND] No such struct field \\`qtty\\` in \\`sku\\`, \\`qty\\`, \\`price\\` ..."*');
  });

  it('is the query the page prints', () => {
    const page = readFileSync(join(__dirname, '../../docs/writing-queries.md'), 'utf8');
    const start = page.indexOf('## Spark SQL expressions');
    const section = page.slice(start, page.indexOf('\n## ', start + 1));
    const query = /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    for (const text of [
      ".selectExpr('event_time', 'explode(lines) AS line')",
      ".filter('line.qty > 0')",
      ".withColumn('line_total', 'line.qty * line.price')",
      ".groupBy(expr(\"window(event_time, '10 minutes')\"), expr('line.sku').as('sku'))",
      ".agg(sum('line_total').as('revenue'), count().as('lines'))",
    ])
      expect(query).toContain(text);
  });
});

describe("docs/writing-queries.md's Nested data and exact decimals section", () => {
  it('prints this query and exactly these rows', () => {
    const page = readFileSync(join(__dirname, '../../docs/writing-queries.md'), 'utf8');
    const start = page.indexOf('## Nested data and exact decimals');
    expect(start).toBeGreaterThanOrEqual(0);
    const next = page.indexOf('\n## ', start + 1);
    const section = page.slice(start, next < 0 ? undefined : next);
    const query = /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    for (const text of [
      ".schema('order_id STRING, event_time TIMESTAMP, lines ARRAY<STRUCT<sku: STRING, qty: INT, price: DECIMAL(10,2)>>')",
      ".withWatermark('event_time', '10 minutes');",
      ".select('order_id', 'event_time', explode('lines').as('line'))",
      ".select('event_time', 'line.sku', 'line.qty', 'line.price')",
      ".withColumn('line_total', 'DECIMAL(21,2)', (r) => multiplyDecimal(r.qty, r.price))",
      ".groupBy(window('event_time', '10 minutes'), 'sku')",
      ".agg(sum('line_total').as('revenue'), count().as('lines'))",
    ])
      expect(query).toContain(text);
    const input = /```json\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    const records = input
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(records).toEqual(RUNS.flat());
    const block = /```text\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    const rows = EXPECTED.flatMap((r) => r.batches.flat());
    for (const row of rows) expect(block).toContain(JSON.stringify(row));
    expect(block.match(/\{"window"/g)?.length).toBe(rows.length);
  });
});
