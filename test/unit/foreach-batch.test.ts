/**
 * ForeachBatchSink on the in-memory ports: the effect guard makes recorded effects run once per
 * query and batch across crashes, commits guarded writes with their record, and is plainly
 * at-least-once when the record is lost after the effect.
 */
import { CRASH_POINTS, crashingAt, type CrashPlan } from '../../lib/engine/testing/crash';
import { InjectedCrash, InvalidOptionError } from '../../lib/engine/errors';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import { type EffectGuard, ForeachBatchSink, InMemoryEffectGuard } from '../../lib/engine/foreach-batch';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';
import type { SinkContext } from '../../lib/engine/ports';
import { windowedTotals } from '../../examples/windowed-totals';

function setup(guard: EffectGuard<() => void> = new InMemoryEffectGuard()) {
  const plan = windowedTotals({ outputMode: 'update', name: 'foreach-unit' });
  const ports = { source: new InMemoryFileSource(plan.source.schema), checkpoint: new InMemoryCheckpoint(), state: new InMemoryStateStore() };
  ports.source.add(
    '001.json',
    Array.from({ length: 12 }, (_, i) => ({ user: 'u', event_time: `2026-10-01 12:0${i % 10}:00`, amount: 2 })),
  );
  const effects: number[] = [];
  const ledger = { total: 0 };
  const sink = (g: EffectGuard<() => void> = guard) =>
    new ForeachBatchSink<() => void>({
      guard: g,
      fn: async (rows, batchId, context) => {
        await context.runOnce('external', async () => {
          effects.push(batchId);
        });
        const sum = rows.reduce((s, r) => s + Number(r.total), 0);
        await context.transactWithGuard('ledger', [() => (ledger.total += sum)]);
      },
    });
  const run = (crash?: CrashPlan, g?: EffectGuard<() => void>) => {
    const deps = { plan, ...ports, sink: sink(g) };
    return new MicroBatchExecutor(crash ? crashingAt(crash, deps) : deps).run();
  };
  return { run, effects, ledger };
}

const ctx: SinkContext = { queryId: 'q', queryName: 'q', outputMode: 'append', columns: [], keyColumns: [] };

describe.each(CRASH_POINTS)('when the run crashes at %s and the next run finishes', (point) => {
  it('the recorded effect ran once for batch 0 and the guarded write was applied once', async () => {
    const t = setup();
    await expect(t.run({ point, batchId: 0 })).rejects.toBeInstanceOf(InjectedCrash);
    await t.run();
    expect(t.effects.filter((b) => b === 0)).toEqual([0]);
    expect(t.ledger.total).toBe(24);
  });
});

describe('when the effect ran but its record was lost', () => {
  it("runs it again on replay: at-least-once for effects outside the guard's store", async () => {
    const real = new InMemoryEffectGuard();
    const losing: EffectGuard<() => void> = {
      description: 'loses records',
      isDone: (k) => real.isDone(k),
      markDone: async () => {
        throw new InjectedCrash('between-effect-and-record', 0);
      },
      transact: (k, items) => real.transact(k, items),
    };
    const t = setup(real);
    await expect(t.run(undefined, losing)).rejects.toBeInstanceOf(InjectedCrash);
    await t.run();
    expect(t.effects.filter((b) => b === 0)).toEqual([0, 0]);
    expect(t.ledger.total).toBe(24);
  });
});

describe('when the context is misused', () => {
  it('refuses an effect name the guard cannot store, and transactions on a guard without them', async () => {
    const noTx: EffectGuard<() => void> = { description: 'no-tx', isDone: async () => false, markDone: async () => 'recorded' };
    const bad = new ForeachBatchSink<() => void>({
      guard: new InMemoryEffectGuard(),
      fn: async (_r, _b, c) => void (await c.runOnce('has space', async () => undefined)),
    });
    await expect(bad.addBatch(0, [], ctx)).rejects.toBeInstanceOf(InvalidOptionError);
    const tx = new ForeachBatchSink<() => void>({ guard: noTx, fn: async (_r, _b, c) => void (await c.transactWithGuard('x', [])) });
    await expect(tx.addBatch(0, [], ctx)).rejects.toThrow(/cannot commit writes with its marker: use runOnce/);
    expect(() => new ForeachBatchSink({ guard: new InMemoryEffectGuard(), fn: undefined as never })).toThrow(/needs `fn`/);
  });

  it('runs an effect name once per batch, and again for the next batch', async () => {
    const calls: number[] = [];
    const s = new ForeachBatchSink<() => void>({
      guard: new InMemoryEffectGuard(),
      fn: async (_r, b, c) => {
        expect(await c.runOnce('e', async () => void calls.push(b))).toBe('ran');
        expect(await c.runOnce('e', async () => void calls.push(b))).toBe('skipped');
        expect(c.effectKey('e')).toBe(`q#${b}#e`);
      },
    });
    await s.addBatch(0, [], ctx);
    await s.addBatch(1, [], ctx);
    expect(calls).toEqual([0, 1]);
  });
});

describe("when a replay hands the batch's rows in another order", () => {
  it('the function sees them in one order, so its effects and effect keys do not depend on it', async () => {
    const seen: string[][] = [];
    const s = new ForeachBatchSink<() => void>({ guard: new InMemoryEffectGuard(), fn: async (rows) => void seen.push(rows.map((r) => String(r.user))) });
    const keyed: SinkContext = { ...ctx, outputMode: 'update', columns: ['user', 'total'], keyColumns: ['user'] };
    const rows = ['c', 'a', 'b', 'e', 'd'].map((user, i) => ({ user, total: i }));
    await s.addBatch(0, rows, keyed);
    await s.addBatch(0, [...rows].reverse(), keyed);
    await s.addBatch(0, [rows[2], rows[0], rows[4], rows[1], rows[3]], keyed);
    expect(seen).toEqual([
      ['a', 'b', 'c', 'd', 'e'],
      ['a', 'b', 'c', 'd', 'e'],
      ['a', 'b', 'c', 'd', 'e'],
    ]);
  });
});

describe('when the function commits several guarded effects (mid-sink hook)', () => {
  it('tells ctx.onPieceWritten after each one that committed, 0, 1, 2, and not for skipped ones', async () => {
    const guard = new InMemoryEffectGuard();
    const s = new ForeachBatchSink<() => void>({
      guard,
      fn: async (_rows, _b, c) => {
        await c.runOnce('first', async () => undefined);
        await c.transactWithGuard('second', []);
        await c.runOnce('first', async () => undefined); // same name: skipped
        await c.transactWithGuard('third', []);
      },
    });
    const pieces: number[] = [];
    await s.addBatch(0, [], { ...ctx, onPieceWritten: (i) => pieces.push(i) });
    expect(pieces).toEqual([0, 1, 2]);
    const replay: number[] = [];
    await s.addBatch(0, [], { ...ctx, onPieceWritten: (i) => replay.push(i) });
    expect(replay).toEqual([]);
  });
});
