/**
 * The two worked examples of docs/transform-with-state.md, read from the page and run as printed
 * on the in-memory ports, one scheduled run per table row (a fresh executor each, the session
 * example's runs stamped with the times shown): the batches and rows each run gives are derived by
 * hand below, and the page must print exactly those rows.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import type { QueryPlan } from '../../lib/engine/plan/types';
import type { OutputRow } from '../../lib/engine/ports';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';

const ROOT = join(__dirname, '..', '..');
const PAGE = readFileSync(join(ROOT, 'docs', 'transform-with-state.md'), 'utf8');
const OUT = join(ROOT, '.sluice', 'tws-docs');

/** The page's ```ts samples, each written as a module and loaded (Jest maps `sluice` to lib/api). */
function samples(): QueryPlan[] {
  mkdirSync(OUT, { recursive: true });
  const blocks = [...PAGE.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
  return blocks.map((code, i) => {
    const file = join(OUT, `sample-${i}.ts`);
    writeFileSync(file, code);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require(file) as { default: QueryPlan }).default;
  });
}

const ms = (hhmmss: string) => Date.parse(`2026-10-01T${hhmmss}.000Z`);
const iso = (hhmmss: string) => `2026-10-01T${hhmmss}.000Z`;

/** Runs each step as one scheduled run: its files land, then a fresh executor runs at `at` (processing time). */
async function runSteps(plan: QueryPlan, steps: ReadonlyArray<{ at: string; rows: object[] }>) {
  const source = new InMemoryFileSource(plan.source.schema);
  const checkpoint = new InMemoryCheckpoint();
  const state = new InMemoryStateStore();
  const sink = new InMemorySink();
  const out: Array<Array<{ batchId: number; rows: OutputRow[] }>> = [];
  let file = 0;
  for (const step of steps) {
    if (step.rows.length) source.add(`f-${++file}.json`, step.rows.map((r) => JSON.stringify(r)).join('\n'));
    const now = ms(step.at);
    const report = await new MicroBatchExecutor({ plan, source, checkpoint, state, sink, processingClock: { now: () => now } }).run();
    out.push(report.batches.map((b) => ({ batchId: b.batchId, rows: sink.batches.get(b.batchId) ?? [] })));
  }
  return out;
}

const [sessions, devices] = samples();

describe('docs/transform-with-state.md', () => {
  it('prints two samples, each a query plan with a transformWithState operator', () => {
    expect([sessions, devices].map((p) => p?.stateful?.kind)).toEqual(['transformWithState', 'transformWithState']);
  });

  it('the session example closes each session 30 minutes of processing time after its last click', async () => {
    // By hand: 12:00 u1 ×2, u2 ×1 → timers 12:30 (both), no row. 12:20 u1 → u1's timer moves to
    // 12:50. 12:35 no data, u2's 12:30 due → one no-data batch: u2 (start 12:00, 1 event). 13:00 no
    // data, u1's 12:50 due → u1 (start 12:00, 3 events). 13:10 nothing due → no batch.
    const runs = await runSteps(sessions, [
      {
        at: '12:00:00',
        rows: [
          { user: 'u1', page: '/' },
          { user: 'u1', page: '/a' },
          { user: 'u2', page: '/' },
        ],
      },
      { at: '12:20:00', rows: [{ user: 'u1', page: '/b' }] },
      { at: '12:35:00', rows: [] },
      { at: '13:00:00', rows: [] },
      { at: '13:10:00', rows: [] },
    ]);
    const u2 = { user: 'u2', sessionStart: iso('12:00:00'), events: 1 };
    const u1 = { user: 'u1', sessionStart: iso('12:00:00'), events: 3 };
    expect(runs).toEqual([[{ batchId: 0, rows: [] }], [{ batchId: 1, rows: [] }], [{ batchId: 2, rows: [u2] }], [{ batchId: 3, rows: [u1] }], []]);
    for (const row of [u2, u1]) expect(PAGE).toContain(`\`${JSON.stringify(row)}\``);
  });

  it('the device example reports a device once the watermark passes 60 s after its last reading', async () => {
    // By hand (watermark = latest reading − 10 s): run 1 d1@00:05, d2@00:30 → timers 01:05, 01:30;
    // the watermark moves to 00:20 → no-data batch 1, nothing due. Run 2 d1@01:40 → its timer moves
    // to 02:40; watermark 01:30 → batch 3 fires d2's 01:30: d2 last seen 00:30. Run 3 d2@00:50 is at
    // or before 01:30: late, dropped; the watermark stays. Run 4 d3@03:20 → watermark 03:10 → batch
    // 6 fires d1's 02:40: d1 last seen 01:40.
    const r = (device: string, t: string) => ({ device, ts: `2026-10-01 12:${t}` });
    const runs = await runSteps(devices, [
      { at: '13:00:00', rows: [r('d1', '00:05'), r('d2', '00:30')] },
      { at: '13:01:00', rows: [r('d1', '01:40')] },
      { at: '13:02:00', rows: [r('d2', '00:50')] },
      { at: '13:03:00', rows: [r('d3', '03:20')] },
    ]);
    const d2 = { device: 'd2', lastSeen: iso('12:00:30') };
    const d1 = { device: 'd1', lastSeen: iso('12:01:40') };
    expect(runs).toEqual([
      [
        { batchId: 0, rows: [] },
        { batchId: 1, rows: [] },
      ],
      [
        { batchId: 2, rows: [] },
        { batchId: 3, rows: [d2] },
      ],
      [{ batchId: 4, rows: [] }],
      [
        { batchId: 5, rows: [] },
        { batchId: 6, rows: [d1] },
      ],
    ]);
    for (const row of [d2, d1]) expect(PAGE).toContain(`\`${JSON.stringify(row)}\``);
  });

  it('prints no other output rows than those', () => {
    const printed = [...PAGE.matchAll(/`(\{"(?:user|device)":[^`]*\})`/g)].map((m) => m[1]);
    expect(printed).toHaveLength(4);
  });
});
