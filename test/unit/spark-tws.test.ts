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
async function runSteps(s: Script, steps: Array<{ at: number; rows: Array<Partial<In>> }>, timeMode: TimeMode = 'processingTime') {
  const plan = planOf(s, timeMode);
  const source = new InMemoryFileSource(plan.source.schema);
  const ports = { source, checkpoint: new InMemoryCheckpoint(), state: new InMemoryStateStore(), sink: new InMemorySink() };
  const out: Array<{ rows: object[]; batches: number; stateRows: number }> = [];
  let file = 0;
  for (const step of steps) {
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
});
