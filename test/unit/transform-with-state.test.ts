/**
 * transformWithState's handle and operator on the in-memory ports (FORMAT-4): what each call may
 * do where, the errors with Spark's classes, TTL, map keys, the processor's values and output
 * rows, and that a failing batch commits nothing.
 */
import { randomBytes } from 'node:crypto';
import { readStream } from '../../lib/engine/query/reader';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import { partitionedTasks, runPartitioned } from '../../lib/engine/schedule/driver';
import { PartitionedRun } from '../../lib/engine/schedule/partitioned';
import { InMemoryLease } from '../../lib/engine/testing/memory-lease';
import { InMemoryShuffle } from '../../lib/engine/testing/memory-shuffle';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';
import { VARS_ID } from '../../lib/engine/operators/transform-with-state';
import {
  StatefulProcessor,
  type ListState,
  type MapState,
  type ProcessorRow,
  type StatefulProcessorHandle,
  type TimeMode,
  type TimerValues,
  type ValueState,
} from '../../lib/engine/tws/api';

type Row = { k: string; v: number; t: string };
type Proc = StatefulProcessor<ProcessorRow, ProcessorRow, object>;

/** A processor whose methods the test gives. */
function processor(p: {
  init?: (h: StatefulProcessorHandle, self: Proc) => void;
  rows?: (key: ProcessorRow, rows: ProcessorRow[], tv: TimerValues, self: Proc) => Iterable<object>;
  timer?: (key: ProcessorRow, expiry: number, self: Proc) => Iterable<object>;
  construct?: (self: Proc) => void;
}) {
  return class extends StatefulProcessor<ProcessorRow, ProcessorRow, object> {
    constructor() {
      super();
      p.construct?.(this);
    }
    init(h: StatefulProcessorHandle): void {
      p.init?.(h, this);
    }
    handleInputRows(key: ProcessorRow, rows: IterableIterator<ProcessorRow>, tv: TimerValues): Iterable<object> {
      return p.rows ? p.rows(key, [...rows], tv, this) : [];
    }
    handleExpiredTimer(key: ProcessorRow, _tv: TimerValues, info: { getExpiryTimeInMs(): number }): Iterable<object> {
      return p.timer ? p.timer(key, info.getExpiryTimeInMs(), this) : [];
    }
  };
}

function planOf(cls: new () => Proc, timeMode: TimeMode = 'processingTime', outputSchema = 'k STRING, n INT'): QueryPlan {
  return readStream
    .format('json')
    .schema('k STRING, v INT, t TIMESTAMP')
    .load('s3://b/in/')
    .groupBy('k')
    .transformWithState(cls as never, { timeMode, outputSchema })
    .writeStream.outputMode('update')
    .queryName('tws')
    .plan();
}

/** Runs the plan once per step (a fresh executor, processing time `at` ms); the sink's rows per run. */
async function run(plan: QueryPlan, steps: Array<{ at: number; rows: Row[] }>) {
  const source = new InMemoryFileSource(plan.source.schema);
  const checkpoint = new InMemoryCheckpoint();
  const state = new InMemoryStateStore();
  const sink = new InMemorySink();
  const out: object[][] = [];
  let file = 0;
  for (const s of steps) {
    if (s.rows.length) source.add(`f-${++file}.json`, s.rows.map((r) => JSON.stringify(r)).join('\n'));
    const report = await new MicroBatchExecutor({ plan, source, checkpoint, state, sink, processingClock: { now: () => s.at } }).run();
    out.push(report.batches.flatMap((b) => sink.batches.get(b.batchId) ?? []));
  }
  return { out, checkpoint, sink };
}

const row = (k: string, v = 1, t = '2026-10-01 12:00:00'): Row => ({ k, v, t });

/** A processor counting rows per key in variable `name` of `kind`, deleting `deletes` first in init. */
const counter = (name: string, kind: 'value' | 'list', deletes: string[] = []) =>
  processor({
    init: (h, self) => {
      for (const d of deletes) h.deleteIfExists(d);
      Object.assign(self, { s: kind === 'value' ? h.getValueState<number>(name) : h.getListState<number>(name) });
    },
    rows: (key, _r, _tv, self) => {
      const s = (self as unknown as { s: ValueState<number> | ListState<number> }).s;
      if ('update' in s) s.update((s.get() ?? 0) + 1);
      else s.appendValue(1);
      return [{ k: key.k, n: 1 }];
    },
  });

/** The twin store, counting its reads of every key; with `dropVarsRecord`, commits leave out the variables record. */
class CountedStore extends InMemoryStateStore {
  alls = 0;
  dropVarsRecord = false;
  override all(...a: Parameters<InMemoryStateStore['all']>) {
    this.alls++;
    return super.all(...a);
  }
  override commit(...a: Parameters<InMemoryStateStore['commit']>) {
    const [op, version, changes, ...rest] = a;
    return super.commit(op, version, this.dropVarsRecord ? changes.filter((c) => c.key.id !== VARS_ID) : changes, ...rest);
  }
}

/** Runs on `state`, one file of one key's row a run: the run's state rows and how often it read every key. */
function keyRunner(state: CountedStore) {
  const source = new InMemoryFileSource(planOf(counter('x', 'value')).source.schema);
  const ports = { source, checkpoint: new InMemoryCheckpoint(), state, sink: new InMemorySink() };
  let file = 0;
  return async (cls: new () => Proc, key: string) => {
    source.add(`f-${++file}.json`, JSON.stringify(row(key)));
    const before = state.alls;
    const r = await new MicroBatchExecutor({ ...ports, plan: planOf(cls), processingClock: { now: () => 1000 * file } }).run();
    return { stateRows: r.stateRows, alls: state.alls - before };
  };
}

describe('transformWithState', () => {
  it('gives the processor keys and rows in input order, TIMESTAMP as epoch ms, and writes its rows in the output schema', async () => {
    const seen: unknown[] = [];
    const P = processor({
      rows: (key, rows) => {
        seen.push([key, rows]);
        return [{ k: key.k, n: rows.length }];
      },
    });
    const { out } = await run(planOf(P), [{ at: 1000, rows: [row('a', 1), row('b', 2), row('a', 3, '2026-10-01 12:00:00.5')] }]);
    const ms = Date.UTC(2026, 9, 1, 12);
    expect(seen).toEqual([
      [
        { k: 'a' },
        [
          { k: 'a', v: 1, t: ms },
          { k: 'a', v: 3, t: ms + 500 },
        ],
      ],
      [{ k: 'b' }, [{ k: 'b', v: 2, t: ms }]],
    ]);
    expect(out).toEqual([
      [
        { k: 'a', n: 2 },
        { k: 'b', n: 1 },
      ],
    ]);
  });

  it('expires a TTL value at write time + TTL: not read from then on, and removed by the batch at that time', async () => {
    let v!: ValueState<number>;
    const P = processor({
      init: (h) => {
        v = h.getValueState<number>('v', { ttlDurationMs: 1000 });
      },
      rows: (key, rows) => {
        const before = v.get();
        if (rows[0].v !== 0) v.update(rows[0].v as number);
        return [{ k: key.k, n: before ?? -1 }];
      },
    });
    // written at 1000 (expires 2000); read at 1999: still there; at 2000: gone
    const { out } = await run(planOf(P), [
      { at: 1000, rows: [row('a', 7)] },
      { at: 1999, rows: [row('a', 0)] },
      { at: 2000, rows: [row('a', 0)] },
    ]);
    expect(out).toEqual([[{ k: 'a', n: -1 }], [{ k: 'a', n: 7 }], [{ k: 'a', n: -1 }]]);
  });

  it('runs one no-data batch when a timer is due at the run time, and none when nothing is due', async () => {
    const P = processor({
      rows: (_key, _rows, tv, self) => {
        self.getHandle().registerTimer(tv.getCurrentProcessingTimeInMs() + 500);
        return [];
      },
      timer: (key, expiry) => [{ k: key.k, n: expiry }],
    });
    const { out, checkpoint } = await run(planOf(P), [
      { at: 1000, rows: [row('a')] },
      { at: 1400, rows: [] },
      { at: 1500, rows: [] },
      { at: 9000, rows: [] },
    ]);
    expect(out).toEqual([[], [], [{ k: 'a', n: 1500 }], []]);
    expect((await checkpoint.head()).latestCommitBatch).toBe(1);
  });

  /** V1 keeps a value `v` with a 1 s TTL; V2 declares only `other`; both over one source, checkpoint and store. */
  function ttlProcessors() {
    const V1 = processor({
      init: (h, self) => Object.assign(self, { s: h.getValueState<number>('v', { ttlDurationMs: 1000 }) }),
      rows: (_k, _r, _tv, self) => {
        (self as unknown as { s: ValueState<number> }).s.update(1);
        return [];
      },
    });
    const V2 = processor({ init: (h) => h.getValueState<number>('other') });
    const source = new InMemoryFileSource(planOf(V1).source.schema);
    const ports = { source, checkpoint: new InMemoryCheckpoint(), state: new InMemoryStateStore(), sink: new InMemorySink() };
    return { V1, V2, source, ports };
  }

  it('stops finding a key due once a new processor no longer declares its TTL variable (its due time is written again)', async () => {
    const { V1, V2, source, ports } = ttlProcessors();
    const runAt = async (plan: QueryPlan, at: number) =>
      (await new MicroBatchExecutor({ ...ports, plan, processingClock: { now: () => at } }).run()).batches.length;
    source.add('f.json', JSON.stringify(row('a')));
    expect(await runAt(planOf(V1), 1000)).toBe(1); // v expires at 2000
    // V2 keeps v (it does not declare it) and its TTL no longer makes the key due: the first idle
    // run still finds the stored due time (2000) and runs one batch, which writes the key's due time again
    expect(await runAt(planOf(V2), 5000)).toBe(1);
    expect(await runAt(planOf(V2), 6000)).toBe(0);
  });

  it('finds a TTL value due in a run without data once a processor declares its variable again (its due time had left it out)', async () => {
    const { V1, V2, source, ports } = ttlProcessors();
    const runAt = async (plan: QueryPlan, at: number) => {
      const r = await new MicroBatchExecutor({ ...ports, plan, processingClock: { now: () => at } }).run();
      return { batches: r.batches.length, stateRows: r.stateRows };
    };
    source.add('a.json', JSON.stringify(row('a')));
    expect(await runAt(planOf(V1), 1000)).toEqual({ batches: 1, stateRows: 1 }); // v expires at 2000
    // V2 reads b's row; its batch finds a due (2000) and writes a's due time again without v's TTL
    source.add('b.json', JSON.stringify(row('b')));
    expect(await runAt(planOf(V2), 5000)).toEqual({ batches: 1, stateRows: 1 });
    // V1 declares v again: a's expired value is due, and the batch's cleanup removes it
    expect(await runAt(planOf(V1), 6000)).toEqual({ batches: 1, stateRows: 0 });
    expect(await runAt(planOf(V1), 7000)).toEqual({ batches: 0, stateRows: 0 });
  });

  it('checks a new processor against every variable declared before, and reads all keys to delete one only while it is recorded', async () => {
    const state = new CountedStore();
    const runWith = keyRunner(state);
    expect(await runWith(counter('old', 'value'), 'a')).toEqual({ stateRows: 1, alls: 0 });
    // b holds no "old": the record of the variables still refuses "old" as a list
    await expect(runWith(counter('old', 'list'), 'b')).rejects.toThrow('[STATE_STORE_INVALID_VARIABLE_TYPE_CHANGE]');
    // deleting the recorded "old" reads every key (a's value goes), once; "new" then counts b
    expect(await runWith(counter('new', 'value', ['old']), 'b')).toEqual({ stateRows: 1, alls: 1 });
    expect(await runWith(counter('new', 'value', ['old']), 'c')).toEqual({ stateRows: 2, alls: 0 });
    // and "old" is free again, for another kind
    expect(await runWith(counter('old', 'list'), 'd')).toEqual({ stateRows: 3, alls: 0 });
  });

  it('reads every key to delete a variable, in every batch, on a checkpoint begun before its variables were recorded', async () => {
    // the state an engine from before the record leaves behind: its keys, no record
    const state = new CountedStore();
    state.dropVarsRecord = true;
    const runWith = keyRunner(state);
    expect(await runWith(counter('old', 'value'), 'a')).toEqual({ stateRows: 1, alls: 0 });
    state.dropVarsRecord = false;
    // no record yet: "old" may be held by a key the batch does not touch (a's is), so every key is read and a's goes
    expect(await runWith(counter('new', 'value', ['old']), 'b')).toEqual({ stateRows: 1, alls: 1 });
    // the record begun now cannot say that no key holds "old": still read every key
    expect(await runWith(counter('new', 'value', ['old']), 'c')).toEqual({ stateRows: 2, alls: 1 });
  });

  it('refuses a variable deleted and declared again as another kind in the same init (Spark checks declarations before any delete)', async () => {
    const state = new CountedStore();
    const runWith = keyRunner(state);
    expect(await runWith(counter('old', 'value'), 'a')).toEqual({ stateRows: 1, alls: 0 });
    await expect(runWith(counter('old', 'list', ['old']), 'b')).rejects.toThrow('[STATE_STORE_INVALID_VARIABLE_TYPE_CHANGE]');
    // the same kind is allowed: the run replays b's failed batch, then runs c's, each deleting "old"
    // for every key (reading them all) before counting its key anew
    expect(await runWith(counter('old', 'value', ['old']), 'c')).toEqual({ stateRows: 1, alls: 2 });
    // on a checkpoint without the record, a loaded key's own variable is checked before the delete too
    const legacy = new CountedStore();
    legacy.dropVarsRecord = true;
    const runLegacy = keyRunner(legacy);
    expect(await runLegacy(counter('old', 'value'), 'a')).toEqual({ stateRows: 1, alls: 0 });
    await expect(runLegacy(counter('old', 'list', ['old']), 'a')).rejects.toThrow('[STATE_STORE_INVALID_VARIABLE_TYPE_CHANGE]');
  });

  it("fails the batch, naming the key and the limit, when a key's state grows past a DynamoDB item (the twin's 400 KB)", async () => {
    const Grow = processor({
      init: (h, self) => Object.assign(self, { l: h.getListState<string>('seen') }),
      rows: (_k, rows, _tv, self) => {
        // random text, so that deflating cannot bring it under 400 KB
        for (const _ of rows) (self as unknown as { l: ListState<string> }).l.appendValue(randomBytes(150 * 1024).toString('base64'));
        return [];
      },
    });
    const plan = planOf(Grow);
    const source = new InMemoryFileSource(plan.source.schema);
    const ports = { source, checkpoint: new InMemoryCheckpoint(), state: new InMemoryStateStore(), sink: new InMemorySink() };
    source.add('f1.json', JSON.stringify(row('a')));
    expect((await new MicroBatchExecutor({ ...ports, plan, processingClock: { now: () => 1000 } }).run()).stateRows).toBe(1);
    source.add('f2.json', [row('a'), row('a')].map((r) => JSON.stringify(r)).join('\n'));
    await expect(new MicroBatchExecutor({ ...ports, plan, processingClock: { now: () => 2000 } }).run()).rejects.toThrow(
      /for key `\["a"\]` needs a state item .* above the limit of 409600 bytes/,
    );
    expect((await ports.checkpoint.head()).latestCommitBatch).toBe(0);
  });

  it('keeps map keys by their canonical JSON and lists elements in insertion order', async () => {
    let m!: MapState<{ a: number; b: number }, string>;
    let l!: ListState<string>;
    const P = processor({
      init: (h) => {
        m = h.getMapState('m');
        l = h.getListState('l');
      },
      rows: () => {
        m.updateValue({ a: 1, b: 2 }, 'x');
        m.updateValue({ b: 2, a: 1 }, 'y');
        l.put(['p', 'q']);
        l.appendList(['r']);
        return [{ k: `${[...m.values()].join('')}${[...l.get()].join('')}`, n: [...m.keys()].length }];
      },
    });
    const { out } = await run(planOf(P), [{ at: 1, rows: [row('a')] }]);
    expect(out).toEqual([[{ k: 'ypqr', n: 1 }]]);
  });

  describe('fails the batch, which commits nothing, with Spark error classes', () => {
    const failing: Array<[string, ReturnType<typeof processor>, TimeMode, RegExp]> = [
      [
        'a timer in time mode none',
        processor({
          rows: (_k, _r, _tv, self) => {
            self.getHandle().registerTimer(5);
            return [];
          },
        }),
        'none',
        /^\[STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_TIME_MODE\] .*register_timer/,
      ],
      [
        'getValueState outside init',
        processor({
          rows: (_k, _r, _tv, self) => {
            self.getHandle().getValueState('x');
            return [];
          },
        }),
        'none',
        /^\[STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_HANDLE_STATE\] .*operation=get_value_state .*state=INITIALIZED/,
      ],
      [
        'a state read in init',
        processor({ init: (h) => h.getValueState('x').exists() }),
        'none',
        /^\[STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_HANDLE_STATE\] .*valueState\.exists .*PRE_INIT/,
      ],
      [
        'a name declared twice',
        processor({
          init: (h) => {
            h.getValueState('x');
            h.getMapState('x');
          },
        }),
        'none',
        /^\[STATEFUL_PROCESSOR_DUPLICATE_STATE_VARIABLE_DEFINED\]/,
      ],
      [
        'a TTL outside processingTime',
        processor({ init: (h) => h.getValueState('x', { ttlDurationMs: -5 }) }),
        'eventTime',
        /^\[STATEFUL_PROCESSOR_INCORRECT_TIME_MODE_TO_ASSIGN_TTL\]/,
      ],
      [
        'a negative TTL',
        processor({ init: (h) => h.getValueState('x', { ttlDurationMs: -5 }) }),
        'processingTime',
        /^\[STATEFUL_PROCESSOR_TTL_DURATION_MUST_BE_POSITIVE\]/,
      ],
      [
        'a null value',
        processor({
          init: (h, self) => Object.assign(self, { s: h.getValueState('x') }),
          rows: (_k, _r, _tv, self) => {
            (self as unknown as { s: ValueState<number> }).s.update(null as never);
            return [];
          },
        }),
        'none',
        /^\[ILLEGAL_STATE_STORE_VALUE\.NULL_VALUE\]/,
      ],
      [
        'an empty list put',
        processor({
          init: (h, self) => Object.assign(self, { s: h.getListState('x') }),
          rows: (_k, _r, _tv, self) => {
            (self as unknown as { s: ListState<number> }).s.put([]);
            return [];
          },
        }),
        'none',
        /^\[ILLEGAL_STATE_STORE_VALUE\.EMPTY_LIST_VALUE\]/,
      ],
      [
        'a value JSON cannot keep',
        processor({
          init: (h, self) => Object.assign(self, { s: h.getValueState('x') }),
          rows: (_k, _r, _tv, self) => {
            (self as unknown as { s: ValueState<number> }).s.update(Number.NaN);
            return [];
          },
        }),
        'none',
        /state variable x: the value holds NaN/,
      ],
      [
        'a throw in handleInputRows',
        processor({
          rows: () => {
            throw new RangeError('boom');
          },
        }),
        'none',
        /^\[TRANSFORM_WITH_STATE_USER_FUNCTION_ERROR\] .*handleInputRows threw RangeError: boom/,
      ],
      ['getHandle in the constructor', processor({ construct: (self) => self.getHandle() }), 'none', /^\[STATE_STORE_HANDLE_NOT_INITIALIZED\]/],
      [
        'an output property the schema lacks',
        processor({ rows: (key) => [{ k: key.k, n: 1, extra: true }] }),
        'none',
        /property extra, which the output schema .* does not have/,
      ],
      ['an output value of the wrong type', processor({ rows: (key) => [{ k: key.k, n: 'one' }] }), 'none', /"one" for the INT column n/],
    ];
    it.each(failing)('%s', async (_what, P, mode, error) => {
      const plan = planOf(P, mode);
      const source = new InMemoryFileSource(plan.source.schema);
      const checkpoint = new InMemoryCheckpoint();
      const sink = new InMemorySink();
      source.add('f.json', JSON.stringify(row('a')));
      await expect(new MicroBatchExecutor({ plan, source, checkpoint, state: new InMemoryStateStore(), sink }).run()).rejects.toThrow(error);
      expect((await checkpoint.head()).latestCommitBatch).toBe(-1);
      expect(sink.batches.size).toBe(0);
    });
  });

  it("gives getQueryInfo the checkpoint's query id, one run id per run, and the batch id", async () => {
    const P = processor({
      rows: (key, _rows, _tv, self) => {
        const q = self.getHandle().getQueryInfo();
        return [{ k: key.k, query: q.getQueryId(), run: q.getRunId(), batch: q.getBatchId() }];
      },
    });
    const plan = readStream
      .format('json')
      .schema('k STRING, v INT, t TIMESTAMP')
      .option('maxFilesPerTrigger', 1)
      .load('s3://b/in/')
      .groupBy('k')
      .transformWithState(P as never, { timeMode: 'none', outputSchema: 'k STRING, query STRING, run STRING, batch INT' })
      .writeStream.outputMode('update')
      .queryName('tws-info')
      .plan();
    const source = new InMemoryFileSource(plan.source.schema);
    const checkpoint = new InMemoryCheckpoint();
    const state = new InMemoryStateStore();
    const sink = new InMemorySink();
    const runOnce = async () => {
      const report = await new MicroBatchExecutor({ plan, source, checkpoint, state, sink }).run();
      return { queryId: report.queryId, rows: report.batches.flatMap((b) => sink.batches.get(b.batchId) ?? []) as Array<Record<string, unknown>> };
    };
    source.add('f-1.json', JSON.stringify(row('a')));
    source.add('f-2.json', JSON.stringify(row('b')));
    const first = await runOnce();
    source.add('f-3.json', JSON.stringify(row('c')));
    const second = await runOnce();
    expect(first.rows.map((r) => r.batch)).toEqual([0, 1]);
    expect(second.rows.map((r) => r.batch)).toEqual([2]);
    // one query id for the checkpoint, the one the run reports
    for (const r of [...first.rows, ...second.rows]) expect(r.query).toBe(first.queryId);
    expect(second.queryId).toBe(first.queryId);
    // one run id for both batches of the first run, another for the second run
    expect(first.rows[0].run).toBe(first.rows[1].run);
    expect(second.rows[0].run).not.toBe(first.rows[0].run);
    expect(String(first.rows[0].run)).not.toMatch(/^batch-/);
  });

  it("gives getQueryInfo the checkpoint's query id and the run's id in a partitioned run's tasks", async () => {
    const P = processor({
      rows: (key, _rows, _tv, self) => {
        const q = self.getHandle().getQueryInfo();
        return [{ k: key.k, query: q.getQueryId(), run: q.getRunId() }];
      },
    });
    const plan = readStream
      .format('json')
      .schema('k STRING, v INT, t TIMESTAMP')
      .load('s3://b/in/')
      .groupBy('k')
      .transformWithState(P as never, { timeMode: 'none', outputSchema: 'k STRING, query STRING, run STRING' })
      .writeStream.outputMode('update')
      .option('statePartitions', 2)
      .queryName('tws-info-partitioned')
      .plan();
    const p = {
      plan,
      source: new InMemoryFileSource(plan.source.schema),
      checkpoint: new InMemoryCheckpoint(),
      state: new InMemoryStateStore(),
      sink: new InMemorySink(),
      lease: new InMemoryLease(),
      shuffle: new InMemoryShuffle(),
    };
    const rowsOf = () => [...p.sink.batches.values()].flat() as Array<Record<string, unknown>>;
    p.source.add('f-1.json', [row('a'), row('b')].map((r) => JSON.stringify(r)).join('\n'));
    await runPartitioned(
      partitionedTasks(() => new PartitionedRun(p, { maxSplits: 2 })),
      { runId: 'run-one', concurrency: 2 },
    );
    p.source.add('f-2.json', JSON.stringify(row('c')));
    await runPartitioned(
      partitionedTasks(() => new PartitionedRun(p, { maxSplits: 2 })),
      { runId: 'run-two', concurrency: 2 },
    );
    const queryId = (await p.checkpoint.head()).metadata?.id;
    expect(queryId).toEqual(expect.any(String));
    const rows = rowsOf().sort((x, y) => String(x.k).localeCompare(String(y.k)));
    expect(rows.map((r) => [r.k, r.query, r.run])).toEqual([
      ['a', queryId, 'run-one'],
      ['b', queryId, 'run-one'],
      ['c', queryId, 'run-two'],
    ]);
  });

  it('refuses complete output mode and an unknown time mode when the query is built', () => {
    const P = processor({});
    const frame = readStream.format('json').schema('k STRING').load('s3://b/in/').groupBy('k');
    expect(() => frame.transformWithState(P, { timeMode: 'none', outputSchema: 'k STRING' }).writeStream.outputMode('complete').plan()).toThrow(
      /^\[STREAMING_OUTPUT_MODE\.UNSUPPORTED_OPERATION\] Invalid streaming output mode: complete/,
    );
    expect(() => frame.transformWithState(P, { timeMode: 'later' as TimeMode, outputSchema: 'k STRING' })).toThrow(/^\[STATEFUL_PROCESSOR_UNKNOWN_TIME_MODE\]/);
    expect(() => frame.transformWithState(P, { eventTimeColumn: 'k', outputSchema: 'k STRING' }).writeStream.plan()).toThrow(
      /^\[CANNOT_ASSIGN_EVENT_TIME_COLUMN_WITHOUT_WATERMARK\]/,
    );
  });
});
