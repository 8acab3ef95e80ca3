/**
 * transformWithState against Spark 4.0's own rules (StatefulProcessorHandleImpl, ListStateImpl,
 * MapStateImpl, the TTL state variables, TimerStateImpl, TransformWithStateExec), each expectation
 * worked by hand from Spark's source and FORMAT-4, not from sluice's output.
 */
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import { readStream } from '../../lib/engine/query/reader';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';
import {
  type ExpiredTimerInfo,
  type ListState,
  type MapState,
  type ProcessorRow,
  StatefulProcessor,
  type StatefulProcessorHandle,
  type TimeMode,
  type TimerValues,
  type ValueState,
} from '../../lib/engine/tws/api';

type In = { k: string; op: string; v: number };

/** The state variables a test processor declares, and what it does with each key's rows and timers. */
interface Script {
  init?(h: StatefulProcessorHandle): void;
  rows?(h: StatefulProcessorHandle, key: string, rows: In[], tv: TimerValues): object[];
  timer?(h: StatefulProcessorHandle, key: string, info: ExpiredTimerInfo, tv: TimerValues): object[];
}

function processorOf(s: Script) {
  return class extends StatefulProcessor<ProcessorRow, ProcessorRow, object> {
    init(h: StatefulProcessorHandle): void {
      s.init?.(h);
    }
    handleInputRows(key: ProcessorRow, rows: IterableIterator<ProcessorRow>, tv: TimerValues): object[] {
      return s.rows?.(this.getHandle(), key.k as string, [...rows] as unknown as In[], tv) ?? [];
    }
    handleExpiredTimer(key: ProcessorRow, tv: TimerValues, info: ExpiredTimerInfo): object[] {
      return s.timer?.(this.getHandle(), key.k as string, info, tv) ?? [];
    }
  };
}

function planOf(s: Script, timeMode: TimeMode = 'processingTime'): QueryPlan {
  return readStream
    .format('json')
    .schema('k STRING, op STRING, v INT')
    .load('s3://b/in/')
    .groupBy('k')
    .transformWithState(processorOf(s) as never, { timeMode, outputSchema: 'k STRING, out STRING' })
    .writeStream.outputMode('update')
    .queryName('spark-tws')
    .plan();
}

/** One run per step at processing time `at` (ms); each run's rows, batch count and state rows. */
async function runSteps(s: Script, steps: Array<{ at: number; rows: Array<Partial<In>>; before?: () => void }>, timeMode: TimeMode = 'processingTime') {
  const plan = planOf(s, timeMode);
  const source = new InMemoryFileSource(plan.source.schema);
  const ports = { source, checkpoint: new InMemoryCheckpoint(), state: new InMemoryStateStore(), sink: new InMemorySink() };
  const out: Array<{ rows: object[]; batches: number; stateRows: number }> = [];
  let file = 0;
  for (const step of steps) {
    step.before?.();
    if (step.rows.length) source.add(`f-${++file}.json`, step.rows.map((r) => JSON.stringify({ op: '', v: 0, ...r })).join('\n'));
    const report = await new MicroBatchExecutor({ ...ports, plan, processingClock: { now: () => step.at } }).run();
    out.push({
      rows: report.batches.flatMap((b) => ports.sink.batches.get(b.batchId) ?? []),
      batches: report.batches.length,
      stateRows: report.stateRows as number,
    });
  }
  return out;
}

/** Runs one batch of one row of key "a" and returns the error it fails with. */
async function failure(s: Script): Promise<string> {
  try {
    await runSteps(s, [{ at: 1000, rows: [{ k: 'a' }] }], 'none');
  } catch (e) {
    return (e as Error).message;
  }
  return 'no error';
}

describe('transformWithState as Spark 4.0 has it', () => {
  describe('ListState refuses what ListStateImpl.validateNewState refuses, before it writes anything', () => {
    let l!: ListState<number>;
    const list = (f: () => void): Script => ({
      init: (h) => {
        l = h.getListState<number>('l');
      },
      rows: () => {
        f();
        return [];
      },
    });
    // Spark: requireNonNullStateValue(newState) first (NULL_VALUE), then requireNonEmptyListStateValue, then each element
    it.each([
      ['put(null)', () => l.put(null as never), 'ILLEGAL_STATE_STORE_VALUE.NULL_VALUE'],
      ['put(undefined)', () => l.put(undefined as never), 'ILLEGAL_STATE_STORE_VALUE.NULL_VALUE'],
      ['appendList(null)', () => l.appendList(null as never), 'ILLEGAL_STATE_STORE_VALUE.NULL_VALUE'],
      ['appendList([])', () => l.appendList([]), 'ILLEGAL_STATE_STORE_VALUE.EMPTY_LIST_VALUE'],
      ['put([1, null])', () => l.put([1, null as never]), 'ILLEGAL_STATE_STORE_VALUE.NULL_VALUE'],
      ['appendValue(undefined)', () => l.appendValue(undefined as never), 'ILLEGAL_STATE_STORE_VALUE.NULL_VALUE'],
    ])('%s', async (_what, f, errorClass) => {
      expect(await failure(list(f))).toContain(`[${errorClass}]`);
    });
  });

  it('expires each list element and map entry by its own write (ListStateImplWithTTL, MapStateImplWithTTL)', async () => {
    let l!: ListState<number>;
    let m!: MapState<string, number>;
    const s: Script = {
      init: (h) => {
        l = h.getListState<number>('l', { ttlDurationMs: 5000 });
        m = h.getMapState<string, number>('m', { ttlDurationMs: 5000 });
      },
      rows: (_h, key, rows) => {
        for (const r of rows) {
          if (r.op === 'add') {
            l.appendValue(r.v);
            m.updateValue(`e${r.v}`, r.v);
          }
        }
        return [{ k: key, out: `${[...l.get()].join(',')}|${[...m.keys()].sort().join(',')}|${l.exists()}${m.exists()}` }];
      },
    };
    const out = await runSteps(s, [
      { at: 1000, rows: [{ k: 'a', op: 'add', v: 1 }] }, // 1 and e1 expire at 6000
      { at: 3000, rows: [{ k: 'a', op: 'add', v: 2 }] }, // 2 and e2 at 8000
      { at: 6000, rows: [{ k: 'a', op: 'get' }] }, // 1 and e1 expired (6000 >= 6000)
      { at: 8000, rows: [] }, // nothing read: one no-data batch, as 2 and e2 are due
      { at: 9000, rows: [] }, // nothing due: no batch
    ]);
    expect(out).toEqual([
      { rows: [{ k: 'a', out: '1|e1|truetrue' }], batches: 1, stateRows: 2 },
      { rows: [{ k: 'a', out: '1,2|e1,e2|truetrue' }], batches: 1, stateRows: 4 },
      { rows: [{ k: 'a', out: '2|e2|truetrue' }], batches: 1, stateRows: 2 },
      { rows: [], batches: 1, stateRows: 0 },
      { rows: [], batches: 0, stateRows: 0 },
    ]);
  });

  it("fires other keys' due timers and removes their expired TTL values in a batch that reads only another key", async () => {
    let v!: ValueState<number>;
    const s: Script = {
      init: (h) => {
        v = h.getValueState<number>('v', { ttlDurationMs: 2000 });
      },
      rows: (h, key, rows, tv) => {
        if (rows.some((r) => r.op === 'timer')) h.registerTimer(tv.getCurrentProcessingTimeInMs() + 1500);
        v.update(1);
        return [{ k: key, out: 'in' }];
      },
      timer: (h, key, info) => [{ k: key, out: `timer ${info.getExpiryTimeInMs()} ${[...h.listTimers()].join(',')} ${v.exists()}` }],
    };
    const out = await runSteps(s, [
      { at: 1000, rows: [{ k: 'b', op: 'timer' }] }, // b: value until 3000, timer at 2500
      { at: 3000, rows: [{ k: 'a' }] },
    ]);
    // at 3000: a first, then b's timer (it still lists itself; its value expired at 3000), then b's value is removed
    expect(out[1]).toEqual({
      rows: [
        { k: 'a', out: 'in' },
        { k: 'b', out: 'timer 2500 2500 false' },
      ],
      batches: 1,
      stateRows: 1,
    });
  });

  // FORMAT-4 step 4 (Spark cleans the TTL variables the processor declares, over every key through
  // the variable's TTL index): a variable declared again cleans what expired while it was not
  it('removes the expired values of a TTL variable declared again, of keys the batch does not read', async () => {
    let declare = true;
    let v: ValueState<number> | null = null;
    const s: Script = {
      init: (h) => {
        v = declare ? h.getValueState<number>('v', { ttlDurationMs: 2000 }) : null;
      },
      rows: (_h, key) => {
        v?.update(1);
        return [{ k: key, out: 'in' }];
      },
    };
    const out = await runSteps(s, [
      { at: 1000, rows: [{ k: 'a' }, { k: 'b' }] }, // a's and b's values expire at 3000
      { at: 5000, rows: [{ k: 'a' }], before: () => (declare = false) }, // not declared: its values stay
      { at: 6000, rows: [{ k: 'c' }], before: () => (declare = true) }, // declared again: a's and b's go; c's is new
    ]);
    const stateRows = out.map((o) => o.stateRows);
    expect(stateRows).toEqual([2, 2, 1]);
  });

  it('fires a timer handleInputRows registers in the past in the same batch, after every key has had its rows', async () => {
    const calls: string[] = [];
    const s: Script = {
      rows: (h, key, _rows, tv) => {
        h.registerTimer(tv.getCurrentProcessingTimeInMs() - 100);
        h.registerTimer(tv.getCurrentProcessingTimeInMs() - 100); // one timer still
        calls.push(`in ${key}`);
        return [{ k: key, out: 'in' }];
      },
      timer: (_h, key, info) => {
        calls.push(`timer ${key} ${info.getExpiryTimeInMs()}`);
        return [{ k: key, out: 'timer' }];
      },
    };
    const out = await runSteps(s, [{ at: 1000, rows: [{ k: 'a' }, { k: 'b' }] }]);
    expect(calls.slice(0, 2).sort()).toEqual(['in a', 'in b']);
    expect(calls.slice(2).sort()).toEqual(['timer a 900', 'timer b 900']);
    expect(out[0]).toMatchObject({ batches: 1, stateRows: 0 });
  });

  // RocksDBStateStoreProvider.verifyColFamilyCreationOrDeletion: an empty name, one with leading or
  // trailing blanks, and "default" are invalid column family names
  it.each(['', ' x', 'x ', 'default'])('refuses the state variable name %j as Spark refuses the column family', async (name) => {
    expect(await failure({ init: (h) => h.getValueState(name) })).toContain('[STATE_STORE_CANNOT_USE_COLUMN_FAMILY_WITH_INVALID_NAME]');
  });

  it('runs time mode eventTime without a watermark: the watermark stays 0, only timers at or before it fire, no row is late', async () => {
    const calls: string[] = [];
    const s: Script = {
      rows: (h, key, rows, tv) => {
        h.registerTimer(0);
        h.registerTimer(1);
        calls.push(`in ${key} ${rows.length} wm ${tv.getCurrentWatermarkInMs()}`);
        return [];
      },
      timer: (_h, key, info) => {
        calls.push(`timer ${key} ${info.getExpiryTimeInMs()}`);
        return [];
      },
    };
    const out = await runSteps(
      s,
      [
        { at: 1000, rows: [{ k: 'a' }, { k: 'a' }] },
        { at: 2000, rows: [{ k: 'a' }] },
      ],
      'eventTime',
    );
    expect(calls).toEqual(['in a 2 wm 0', 'timer a 0', 'in a 1 wm 0', 'timer a 0']);
    expect(out.map((o) => o.batches)).toEqual([1, 1]);
  });

  // Spark runs init twice a batch: on the driver while planning (DriverStatefulProcessorHandleImpl:
  // duplicate names; then the state schema check against the checkpoint's), then on the executor
  // (StatefulProcessorHandleImpl: the TTL checks, the column family name). A driver error wins
  // whatever the order of the calls in init.
  describe("raises the driver's errors of init before the executor's", () => {
    it('a name declared twice after a bad TTL: STATEFUL_PROCESSOR_DUPLICATE_STATE_VARIABLE_DEFINED', async () => {
      const s: Script = {
        init: (h) => {
          h.getValueState('a', { ttlDurationMs: 1000 }); // time mode none: a TTL error on the executor
          h.getListState('b');
          h.getListState('b');
        },
      };
      expect(await failure(s)).toContain('[STATEFUL_PROCESSOR_DUPLICATE_STATE_VARIABLE_DEFINED]');
    });

    it('a bad name then a duplicate: the duplicate', async () => {
      expect(
        await failure({
          init: (h) => {
            h.getValueState('default');
            h.getMapState('m');
            h.getValueState('m');
          },
        }),
      ).toContain('[STATEFUL_PROCESSOR_DUPLICATE_STATE_VARIABLE_DEFINED]');
    });

    it('a negative TTL on a variable stored without one: the schema check (the driver counts any TTL but 0 as one)', async () => {
      let v!: ValueState<number>;
      const first: Script = {
        init: (h) => {
          v = h.getValueState<number>('v');
        },
        rows: () => {
          v.update(1);
          return [];
        },
      };
      const plan1 = planOf(first);
      const source = new InMemoryFileSource(plan1.source.schema);
      const ports = { source, checkpoint: new InMemoryCheckpoint(), state: new InMemoryStateStore(), sink: new InMemorySink() };
      source.add('f1.json', JSON.stringify({ k: 'a', op: '', v: 0 }));
      await new MicroBatchExecutor({ ...ports, plan: plan1, processingClock: { now: () => 1000 } }).run();
      source.add('f2.json', JSON.stringify({ k: 'a', op: '', v: 0 }));
      const plan2 = planOf({ init: (h) => h.getValueState<number>('v', { ttlDurationMs: -5 }) });
      await expect(new MicroBatchExecutor({ ...ports, plan: plan2, processingClock: { now: () => 2000 } }).run()).rejects.toThrow(
        '[STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE]',
      );
    });

    it('a bad TTL alone is still its own error', async () => {
      expect(await failure({ init: (h) => h.getValueState('a', { ttlDurationMs: 1000 }) })).toContain('[STATEFUL_PROCESSOR_INCORRECT_TIME_MODE_TO_ASSIGN_TTL]');
    });
  });

  /**
   * One batch of `lines` (JSON) through a transformWithState over `schema` grouped by k, whose
   * processor outputs what `handle` returns for a key's rows; the run's report and its sink.
   */
  async function echo(schema: string, lines: string, handle: (key: ProcessorRow, rows: ProcessorRow[]) => object[]) {
    class Echo extends StatefulProcessor<ProcessorRow, ProcessorRow, object> {
      init(): void {}
      handleInputRows(key: ProcessorRow, rows: IterableIterator<ProcessorRow>): object[] {
        return handle(key, [...rows]);
      }
    }
    const plan = readStream
      .format('json')
      .schema(schema)
      .load('s3://b/in/')
      .groupBy('k')
      .transformWithState(Echo as never, { timeMode: 'none', outputSchema: schema })
      .writeStream.outputMode('update')
      .queryName('echo')
      .plan();
    const source = new InMemoryFileSource(plan.source.schema);
    const sink = new InMemorySink();
    source.add('f.json', lines);
    const report = await new MicroBatchExecutor({ plan, source, checkpoint: new InMemoryCheckpoint(), state: new InMemoryStateStore(), sink }).run();
    return { report, sink };
  }

  it('takes back, in an output row, the JSON form a processor is given: DECIMAL as text, exact, nested too', async () => {
    const seen: unknown[] = [];
    const { report, sink } = await echo(
      'k STRING, d DECIMAL(20,2), ds ARRAY<DECIMAL(20,2)>, dt DATE',
      '{"k":"a","d":123456789012345678.91,"ds":[0.10,-2],"dt":"2024-02-29"}',
      (_key, all) => {
        seen.push(...all);
        return all;
      },
    );
    // FORMAT-4 "Values": DECIMAL reaches the processor as its output JSON form, a string
    expect(seen).toEqual([{ k: 'a', d: '123456789012345678.91', ds: ['0.10', '-2.00'], dt: '2024-02-29' }]);
    expect(report.batches[0].numOutputRows).toBe(1);
    // emitted back unchanged, the row is the row read (exact: 20 digits do not fit a double)
    expect(sink.batches.get(0)).toEqual([{ k: 'a', d: '123456789012345678.91', ds: ['0.10', '-2.00'], dt: '2024-02-29' }]);
  });

  it('gives a processor a LONG beyond 2^53 - 1 as the string of its digits (no number holds it) and takes it back exact', async () => {
    const seen: unknown[] = [];
    const { sink } = await echo('k STRING, id LONG', '{"k":"a","id":9007199254740993}\n{"k":"a","id":-9223372036854775808}\n{"k":"a","id":7}', (key, all) => {
      seen.push(...all.map((r) => r.id));
      return [...all, { k: key.k, id: '9223372036854775807' }];
    });
    // within 2^53 - 1 a number, as FORMAT-4 says of a LONG; beyond, its digits (Number() would make 9007199254740992)
    expect(seen).toEqual(['9007199254740993', '-9223372036854775808', 7]);
    expect(
      sink.batches
        .get(0)
        ?.map((r) => String(r.id))
        .sort(),
    ).toEqual(['-9223372036854775808', '7', '9007199254740993', '9223372036854775807']);
  });

  it('refuses, in a LONG output column, a string that is not an integer, and digits past BIGINT', async () => {
    for (const bad of ['12.5', 'ten', '9223372036854775808'])
      await expect(echo('k STRING, id LONG', '{"k":"a","id":1}', (key) => [{ k: key.k, id: bad }])).rejects.toThrow(/TRANSFORM_WITH_STATE_INVALID_OUTPUT_ROW/);
  });

  it('gives a processor a DOUBLE NaN or infinity as a number (FORMAT-4 Values: DOUBLE a number) and takes it back either way', async () => {
    const seen: unknown[] = [];
    const { sink } = await echo('k STRING, f DOUBLE', '{"k":"a","f":"NaN"}\n{"k":"a","f":"Infinity"}\n{"k":"a","f":1.5}', (key, all) => {
      seen.push(...all.map((r) => r.f));
      return [...all, { k: key.k, f: 'NaN' }, { k: key.k, f: '-Infinity' }];
    });
    expect(seen).toEqual([Number.NaN, Number.POSITIVE_INFINITY, 1.5]);
    // the sink holds the output JSON form: NaN and the infinities as text
    expect(
      sink.batches
        .get(0)
        ?.map((r) => String(r.f))
        .sort(),
    ).toEqual(['-Infinity', '1.5', 'Infinity', 'NaN', 'NaN']);
  });
});
