/**
 * Partitioned runs (issue 19) on the in-memory ports: every conformance case (the public ones
 * when ../shared is there, and the project's) run as plan, read, partition and commit tasks, each
 * on a PartitionedRun of its own, three at a time, with four state partitions, gives the case's
 * expected result, as one executor does; and again when every step's first run crashes at a
 * crash point, in whichever task reaches it (plan: after-offsets; read: mid-read; partition:
 * mid-state; commit: mid-sink, after-sink, before-commit, after-commit).
 */
import { basename } from 'node:path';
import { compareCase } from '../../lib/conformance/results';
import { CRASH_POINTS } from '../../lib/engine/testing/crash';
import { PartitionedRun } from '../../lib/engine/schedule/partitioned';
import { RunMemo } from '../../lib/engine/schedule/run-memo';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import { partitionedTasks, runPartitioned, type TaskEvent, type TaskResult } from '../../lib/engine/schedule/driver';
import { count, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemoryLease } from '../../lib/engine/testing/memory-lease';
import { InMemoryShuffle } from '../../lib/engine/testing/memory-shuffle';
import type { ShuffleStore } from '../../lib/engine/ports';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';
import { runCaseInMemory } from '../helpers/memory-case';
import { supportedCases } from '../helpers/supported-cases';

const cases = supportedCases().map(([f, c]) => [basename(f), c] as const);

describe('when every conformance case runs partitioned (4 state partitions, 3 workers)', () => {
  it.each(cases)('%s matches its expectations', async (_f, c) => {
    expect(compareCase(c, await runCaseInMemory(c, 4, { workers: 3 }))).toEqual([]);
  });
});

describe.each(CRASH_POINTS)('when every partitioned run crashes once at %s', (point) => {
  let fired = 0;
  it.each(cases)('%s still matches its expectations after the next run', async (_f, c) => {
    const result = await runCaseInMemory(c, 4, { workers: 3, crash: { point } });
    fired += result.crashesFired ?? 0;
    expect(compareCase(c, result)).toEqual([]);
  });
  it('crashed in some task of some case', () => {
    expect(fired).toBeGreaterThan(0);
  });
});

describe('when a batch is split into tasks', () => {
  /** Counts by user and 10-second window over 4 state partitions (at most `maxFiles` files a batch). */
  const splitPlan = (maxFiles?: number) => {
    const reader = readStream.format('json').schema('user STRING, t TIMESTAMP');
    return (maxFiles === undefined ? reader : reader.option('maxFilesPerTrigger', maxFiles))
      .load()
      .withWatermark('t', '0 seconds')
      .groupBy('user', window('t', '10 seconds'))
      .agg(count().as('n'))
      .writeStream.option('statePartitions', 4)
      .queryName('split')
      .plan();
  };
  const plan = splitPlan();
  const at = (s: number) => `2026-10-01 12:00:${String(s).padStart(2, '0')}`;
  /** A shuffle store over `inner`, with the calls given in place of its own. */
  const shuffleOver = (inner: InMemoryShuffle, own: Partial<ShuffleStore>): ShuffleStore => ({
    description: inner.description,
    get: (k) => inner.get(k),
    getRange: (k, start, end) => inner.getRange(k, start, end),
    put: (k, body) => inner.put(k, body),
    purgeBelow: (n) => inner.purgeBelow(n),
    delete: (k) => inner.delete(k),
    ...own,
  });
  /** Runs a partitioned run to its end, noting each task's kind in `at.task` while it runs. */
  const runNoting = (handler: (e: TaskEvent) => Promise<TaskResult>, at: { task: string }, concurrency = 1) =>
    runPartitioned(
      async (e) => {
        at.task = e.action;
        return handler(e);
      },
      { runId: 'r', concurrency },
    );

  function ports() {
    return {
      plan,
      source: new InMemoryFileSource(plan.source.schema),
      checkpoint: new InMemoryCheckpoint(),
      state: new InMemoryStateStore(),
      sink: new InMemorySink(),
      lease: new InMemoryLease(),
      shuffle: new InMemoryShuffle(),
    };
  }

  it('reads each file in one read task, routes every group to one partition, and commits the batch once', async () => {
    const p = ports();
    for (let f = 0; f < 5; f++)
      p.source.add(`f${f}.json`, [
        { user: `u${f}`, t: at(1) },
        { user: `u${(f + 1) % 5}`, t: at(2) },
      ]);
    // a later event moves the watermark to 30 s: the [0 s, 10 s) windows close in the no-data batch
    p.source.add('f5.json', [{ user: 'late-comer', t: at(30) }]);
    const events: TaskEvent[] = [];
    const handler = partitionedTasks(() => new PartitionedRun(p, { maxSplits: 3 }));
    const recording = async (e: TaskEvent): Promise<TaskResult> => {
      events.push(e);
      return handler(e);
    };
    const { batches } = await runPartitioned(recording, { runId: 'r1', concurrency: 3 });
    // a data batch (6 files in 3 splits, 4 partitions), then a no-data batch (no reads) that closes the window
    expect(batches).toEqual([0, 1]);
    // the run's record is gone once the run ended: purges never list a growing set of them
    expect([...p.shuffle.blobs.keys()].filter((k) => k.startsWith('runs/'))).toEqual([]);
    const of = (action: string, batchId: number) => events.filter((e) => e.action === action && 'batchId' in e && e.batchId === batchId);
    expect(
      of('read', 0)
        .map((e) => (e as { split: number }).split)
        .sort(),
    ).toEqual([0, 1, 2]);
    expect(of('partition', 0)).toHaveLength(4);
    expect(of('read', 1)).toHaveLength(0);
    expect(of('partition', 1)).toHaveLength(4);
    // each user's window, counted once over the splits: two rows per user
    const rows = [...p.sink.batches.values()].flat();
    expect(rows.map((r) => [r.user, r.n]).sort()).toEqual([0, 1, 2, 3, 4].map((i) => [`u${i}`, 2]));
    // the read tasks' shuffle: pre-aggregated groups ([grouping values, evictAt, aggregate]), not
    // rows: 11 rows make one group per user and window in each split, each group in one partition
    // (each split's one object, its sections where its index says)
    const routed = [...p.shuffle.blobs.keys()]
      .filter((k) => /^0\/read\/\d+\/index$/.test(k))
      .flatMap((k) => {
        const split = k.split('/')[2];
        const data = Buffer.from(p.shuffle.blobs.get(`0/read/${split}/data`)!, 'utf8');
        return (JSON.parse(p.shuffle.blobs.get(k)!) as Array<[number, number, number]>).map(([part, s, e]): [string, string] => [
          `0/read/${split}/${part}`,
          data.subarray(s, e).toString('utf8'),
        ]);
      });
    const entries = routed.flatMap(([, v]) => JSON.parse(v) as Array<[unknown[], number, unknown[]]>);
    expect(entries.every((e) => e.length === 3 && Array.isArray(e[0]) && Array.isArray(e[2]))).toBe(true);
    const perSplit = new Map<string, Set<string>>();
    for (const [k, v] of routed)
      for (const e of JSON.parse(v)) perSplit.set(k.split('/')[2], (perSplit.get(k.split('/')[2]) ?? new Set()).add(JSON.stringify(e[0])));
    expect(entries.length).toBe([...perSplit.values()].reduce((a, x) => a + x.size, 0));
    expect(entries.length).toBeLessThan(11);
    // the counts carried: every event of the batch, once
    expect(entries.reduce((a, e) => a + (e[2][0] as number), 0)).toBe(11);
  });

  it("writes per read task one object with every state partition's section, its index and its meta, and each partition task reads its sections by range (docs/scale-out.md's request count)", async () => {
    const p = ports();
    // 3 files in 3 splits, 8 users: every split reaches every one of the 4 partitions
    for (let f = 0; f < 3; f++)
      p.source.add(
        `f${f}.json`,
        [0, 1, 2, 3, 4, 5, 6, 7].map((u) => ({ user: `u${u}-${f}`, t: at(1) })),
      );
    const puts: string[] = [];
    const gets: string[] = [];
    const ranges: string[] = [];
    const shuffle = shuffleOver(p.shuffle, {
      put: (k, body) => {
        puts.push(k);
        return p.shuffle.put(k, body);
      },
      get: (k) => {
        gets.push(k);
        return p.shuffle.get(k);
      },
      getRange: (k, start, end) => {
        ranges.push(k);
        return p.shuffle.getRange(k, start, end);
      },
    });
    const handler = partitionedTasks(() => new PartitionedRun({ ...p, shuffle }, { maxSplits: 3 }));
    await runPartitioned(handler, { runId: 'r', concurrency: 3 });
    const S = 3;
    const P = 4;
    const of = (list: string[], re: RegExp) => list.filter((k) => re.test(k)).length;
    // a read task's PUTs do not grow with the partitions: S × 3 + P in all
    expect(of(puts, /^0\/read\/\d+\/\d+$/)).toBe(0);
    expect(of(puts, /^0\/read\/\d+\/(data|index|meta)$/)).toBe(3 * S);
    expect(of(puts, /^0\/out\/\d+$/)).toBe(P);
    // a partition task reads every split's index and its section of the split's object; the commit task every output and every meta
    expect(of(gets, /^0\/read\/\d+\/index$/)).toBe(S * P);
    expect(of(ranges, /^0\/read\/\d+\/data$/)).toBe(S * P);
    expect(of(gets, /^0\/out\/\d+$/)).toBe(2 * P); // (each partition task first looks for its own output: a retry's)
    expect(of(gets, /^0\/read\/\d+\/meta$/)).toBe(2 * S); // (each read task first looks for its own meta)
  });

  it('fails a partition task whose split object was deleted under the running batch, in either layout, instead of reading no rows', async () => {
    const p = ports();
    p.source.add(
      'f0.json',
      [0, 1, 2, 3, 4, 5].map((u) => ({ user: `u${u}`, t: at(1) })),
    );
    const handler = partitionedTasks(() => new PartitionedRun(p));
    await handler({ action: 'plan', runId: 'r' });
    await handler({ action: 'read', runId: 'r', batchId: 0, split: 0 });
    const index = JSON.parse(p.shuffle.blobs.get('0/read/0/index')!) as Array<[number, number, number]>;
    const partition = index[0][0];
    const data = p.shuffle.blobs.get('0/read/0/data')!;
    p.shuffle.blobs.delete('0/read/0/data');
    await expect(handler({ action: 'partition', runId: 'r', batchId: 0, partition })).rejects.toThrow(
      /0\/read\/0\/data is missing though 0\/read\/0\/index says/,
    );
    // the earlier layout: the meta lists the partition, its object is gone
    p.shuffle.blobs.set('0/read/0/data', data);
    p.shuffle.blobs.delete('0/read/0/index');
    await expect(handler({ action: 'partition', runId: 'r', batchId: 0, partition })).rejects.toThrow(
      new RegExp(`0/read/0/${partition} is missing though its read task's meta lists it`),
    );
  });

  it("reads a batch an earlier sluice's read tasks wrote, one object per partition and no index", async () => {
    const p = ports();
    p.source.add(
      'f0.json',
      [0, 1, 2, 3, 4, 5].map((u) => ({ user: `u${u}`, t: at(1) })),
    );
    p.source.add('f1.json', [{ user: 'late-comer', t: at(30) }]);
    const handler = partitionedTasks(() => new PartitionedRun(p));
    const plan0 = (await handler({ action: 'plan', runId: 'r' })) as { batchId: number };
    await handler({ action: 'read', runId: 'r', batchId: plan0.batchId, split: 0 });
    // rewrite the read task's output in the earlier layout: its sections as N/read/0/<p>
    const index = JSON.parse(p.shuffle.blobs.get('0/read/0/index')!) as Array<[number, number, number]>;
    const data = Buffer.from(p.shuffle.blobs.get('0/read/0/data')!, 'utf8');
    expect(index.length).toBeGreaterThan(1);
    for (const [part, s, e] of index) p.shuffle.blobs.set(`0/read/0/${part}`, data.subarray(s, e).toString('utf8'));
    p.shuffle.blobs.delete('0/read/0/index');
    p.shuffle.blobs.delete('0/read/0/data');
    const { batches } = await runPartitioned(handler, { runId: 'r' });
    expect(batches.length).toBeGreaterThan(0);
    // every user's window closes at the watermark of 30 s: one row each, counted once
    const rows = [...p.sink.batches.values()].flat();
    expect(rows.map((r) => [r.user, r.n]).sort()).toEqual([0, 1, 2, 3, 4, 5].map((u) => [`u${u}`, 1]));
  });

  it('does nothing again for a task that already finished (a retry)', async () => {
    const p = ports();
    p.source.add('f0.json', [{ user: 'a', t: at(1) }]);
    const handler = partitionedTasks(() => new PartitionedRun(p));
    const plan0 = (await handler({ action: 'plan', runId: 'r' })) as { batchId: number };
    await handler({ action: 'read', runId: 'r', batchId: plan0.batchId, split: 0 });
    for (const partition of [0, 1, 2, 3]) await handler({ action: 'partition', runId: 'r', batchId: 0, partition });
    const commitsBefore = p.state.size();
    // the same partition task again: its output is there, so it reads and writes no state
    for (const partition of [0, 1, 2, 3]) await handler({ action: 'partition', runId: 'r', batchId: 0, partition });
    expect(p.state.size()).toBe(commitsBefore);
    await handler({ action: 'commit', runId: 'r', batchId: 0 });
    await handler({ action: 'commit', runId: 'r', batchId: 0 });
    expect((await p.checkpoint.head()).latestCommitBatch).toBe(0);
  });

  it('refuses to commit before every partition task finished', async () => {
    const p = ports();
    p.source.add('f0.json', [{ user: 'a', t: at(1) }]);
    const handler = partitionedTasks(() => new PartitionedRun(p));
    await handler({ action: 'plan', runId: 'r' });
    await handler({ action: 'read', runId: 'r', batchId: 0, split: 0 });
    await handler({ action: 'partition', runId: 'r', batchId: 0, partition: 0 });
    await expect(handler({ action: 'commit', runId: 'r', batchId: 0 })).rejects.toThrow(/partition task 1 of batch 0 has not finished/);
  });

  it('names the missing partition output first when the read tasks have not finished either (their figures are read in the same wave)', async () => {
    const p = ports();
    p.source.add('f0.json', [{ user: 'a', t: at(1) }]);
    const handler = partitionedTasks(() => new PartitionedRun(p));
    await handler({ action: 'plan', runId: 'r' });
    await expect(handler({ action: 'commit', runId: 'r', batchId: 0 })).rejects.toThrow(/partition task 0 of batch 0 has not finished/);
    await handler({ action: 'read', runId: 'r', batchId: 0, split: 0 });
    for (const partition of [0, 1, 2, 3]) await handler({ action: 'partition', runId: 'r', batchId: 0, partition });
    await handler({ action: 'commit', runId: 'r', batchId: 0 });
    expect((await p.checkpoint.head()).latestCommitBatch).toBe(0);
  });

  it('continues a run whose plan task failed after it took the lease, when the task is retried', async () => {
    const p = ports();
    p.source.add('f0.json', [{ user: 'a', t: at(1) }]);
    // the plan task's first write of the run's record fails (after the lease was taken)
    let failNext = true;
    const shuffle = shuffleOver(p.shuffle, {
      put: async (k, body) => {
        if (failNext && k.startsWith('runs/')) {
          failNext = false;
          throw new Error('S3 is unreachable');
        }
        return p.shuffle.put(k, body);
      },
    });
    const handler = partitionedTasks(() => new PartitionedRun({ ...p, shuffle }));
    await expect(handler({ action: 'plan', runId: 'r' })).rejects.toThrow(/unreachable/);
    // the retry (the state machine's) is the same run: it takes its lease again and goes on
    const { batches } = await runPartitioned(handler, { runId: 'r' });
    // (the data batch, then the no-data batch its watermark made due)
    expect(batches).toEqual([0, 1]);
    expect((await p.checkpoint.head()).latestCommitBatch).toBe(1);
  });

  it('fails a task on a shuffle object that is cut short or foreign, naming the object', async () => {
    const p = ports();
    p.source.add('f0.json', [{ user: 'a', t: at(1) }]);
    const handler = partitionedTasks(() => new PartitionedRun(p));
    await handler({ action: 'plan', runId: 'r' });
    const text = p.shuffle.blobs.get('0/plan')!;
    p.shuffle.blobs.set('0/plan', text.slice(0, text.length - 5));
    await expect(handler({ action: 'read', runId: 'r', batchId: 0, split: 0 })).rejects.toThrow(
      /shuffle object 0\/plan is not valid JSON .*delete the run's shuffle objects of this batch/,
    );
    p.shuffle.blobs.set('0/plan', JSON.stringify({ something: 'else' }));
    await expect(handler({ action: 'read', runId: 'r', batchId: 0, split: 0 })).rejects.toThrow(/shuffle object 0\/plan is not a batch's task plan/);
  });

  it('measures the backlog when it plans a batch, so that its commit task asks the source nothing, and reports what one executor does', async () => {
    const limited = splitPlan(2);
    const files = (src: InMemoryFileSource) => {
      for (let f = 0; f < 5; f++) src.add(`f${f}.json`, [{ user: `u${f}`, t: at(f) }]);
    };
    const backlogs = async (checkpoint: InMemoryCheckpoint, batches: readonly number[]) =>
      Promise.all(batches.map(async (b) => ((await checkpoint.readProgress(b)) as { sources: Array<{ metrics: unknown }> }).sources[0].metrics));
    // one executor
    const single = { ...ports(), plan: limited };
    files(single.source);
    const report = await new MicroBatchExecutor(single).run();
    const expected = await backlogs(
      single.checkpoint,
      report.batches.map((b) => b.batchId),
    );
    // partitioned, with every source call noted by the task that made it
    const p = { ...ports(), plan: limited };
    files(p.source);
    const now = { task: '' };
    const calls: string[] = [];
    const source = new Proxy(p.source, {
      get(target, name, receiver) {
        const v = Reflect.get(target, name, receiver);
        if (typeof v !== 'function' || !['backlog', 'latestOffset', 'planBatch'].includes(String(name))) return v;
        return (...args: unknown[]) => {
          calls.push(`${now.task}:${String(name)}`);
          return v.apply(target, args);
        };
      },
    });
    const { batches } = await runNoting(
      partitionedTasks(() => new PartitionedRun({ ...p, source })),
      now,
    );
    expect(batches).toEqual(report.batches.map((b) => b.batchId));
    expect(calls.filter((c) => c.startsWith('commit:'))).toEqual([]);
    expect(calls.filter((c) => c === 'plan:backlog').length).toBe(batches.length);
    const got = await backlogs(p.checkpoint, batches);
    expect(got).toEqual(expected);
    // (files 2 a batch: 3 and 1 left after the first two, none after the third)
    expect(got.map((m) => (m as { files: number }).files)).toEqual([3, 1, 0, 0]);
  });

  it('plans a batch without looking for a task plan a new batch cannot have, and renews the lease only once half of it has gone by', async () => {
    const p = ports();
    for (let f = 0; f < 3; f++) p.source.add(`f${f}.json`, [{ user: `u${f}`, t: at(f) }]);
    const now = { task: '' };
    const planGets: string[] = [];
    const shuffle = shuffleOver(p.shuffle, {
      get: (k) => {
        if (now.task === 'plan') planGets.push(k);
        return p.shuffle.get(k);
      },
    });
    let renewals = 0;
    const lease = Object.assign(Object.create(p.lease), {
      renew: (...args: Parameters<InMemoryLease['renew']>) => {
        renewals++;
        return p.lease.renew(...args);
      },
    }) as InMemoryLease;
    const { batches } = await runNoting(
      partitionedTasks(() => new PartitionedRun({ ...p, shuffle, lease })),
      now,
    );
    expect(batches).toEqual([0, 1]);
    // the run's record, each plan task: never a batch's task plan
    expect(planGets.length).toBeGreaterThan(0);
    expect(planGets.filter((k) => /^\d+\/plan$/.test(k))).toEqual([]);
    // a 15-minute lease, a run of milliseconds
    expect(renewals).toBe(0);
  });

  it("runs a batch's tasks on one container without reading again what its plan task wrote (RunMemo), to the same result", async () => {
    const run = async (memo?: RunMemo) => {
      const p = ports();
      for (let f = 0; f < 4; f++) p.source.add(`f${f}.json`, [{ user: `u${f % 3}`, t: at(f) }]);
      const now = { task: '' };
      const reads: string[] = [];
      const shuffle = shuffleOver(p.shuffle, {
        get: (k) => {
          reads.push(`${now.task} ${k}`);
          return p.shuffle.get(k);
        },
      });
      const checkpoint = Object.assign(Object.create(p.checkpoint), {
        readOffsets: (id: number) => {
          reads.push(`${now.task} offsets/${id}`);
          return p.checkpoint.readOffsets(id);
        },
      }) as InMemoryCheckpoint;
      const { batches } = await runNoting(
        partitionedTasks(() => new PartitionedRun({ ...p, shuffle, checkpoint }, { maxSplits: 2, ...(memo ? { memo } : {}) })),
        now,
      );
      return { batches, reads, rows: [...p.sink.batches.entries()] };
    };
    const apart = await run();
    const together = await run(new RunMemo());
    expect(together.batches).toEqual(apart.batches);
    expect(together.rows).toEqual(apart.rows);
    const what = (reads: string[], re: RegExp) => reads.filter((r) => re.test(r));
    // apart, each task reads them; on one container, only a plan task reads the run's record (its own first read)
    expect(what(apart.reads, /^(read|partition|commit) (runs\/|offsets\/|\d+\/plan)/).length).toBeGreaterThan(0);
    expect(what(together.reads, /^(read|partition|commit) (runs\/|offsets\/|\d+\/plan)/)).toEqual([]);
    expect(what(together.reads, /^plan runs\//)).toHaveLength(together.batches.length + 1);
  });

  it("commits reading the partition tasks' outputs while it reads the checkpoint, and a retry of a committed batch still only returns", async () => {
    const p = ports();
    p.source.add('f0.json', [{ user: 'a', t: at(1) }]);
    const events: string[] = [];
    const shuffle = shuffleOver(p.shuffle, {
      get: (k) => {
        events.push(`get ${k}`);
        return p.shuffle.get(k);
      },
    });
    // a checkpoint whose head answers 20 ms late
    const checkpoint = Object.assign(Object.create(p.checkpoint), {
      head: async () => {
        events.push('head sent');
        await new Promise((r) => setTimeout(r, 20));
        const head = await p.checkpoint.head();
        events.push('head answered');
        return head;
      },
    }) as InMemoryCheckpoint;
    const handler = partitionedTasks(() => new PartitionedRun({ ...p, shuffle, checkpoint }));
    await handler({ action: 'plan', runId: 'r' });
    await handler({ action: 'read', runId: 'r', batchId: 0, split: 0 });
    for (const partition of [0, 1, 2, 3]) await handler({ action: 'partition', runId: 'r', batchId: 0, partition });
    events.length = 0;
    await handler({ action: 'commit', runId: 'r', batchId: 0 });
    expect((await p.checkpoint.head()).latestCommitBatch).toBe(0);
    expect(events.indexOf('get 0/out/3')).toBeGreaterThan(-1);
    expect(events.indexOf('get 0/out/3')).toBeLessThan(events.indexOf('head answered'));
    // again (a retry after its answer was lost): it finds the commit and returns, whatever it read
    await expect(handler({ action: 'commit', runId: 'r', batchId: 0 })).resolves.toMatchObject({ batchId: 0, more: true });
    expect((await p.checkpoint.head()).latestCommitBatch).toBe(0);
  });

  it('each partition task asks the state store ahead for its own partition only (readAhead)', async () => {
    const p = ports();
    p.source.add('f0.json', [{ user: 'a', t: at(1) }]);
    const asked: string[] = [];
    const state = Object.assign(Object.create(p.state), {
      readAhead: (_op: unknown, partitions?: readonly number[]) => asked.push(JSON.stringify(partitions ?? null)),
    }) as InMemoryStateStore;
    const handler = partitionedTasks(() => new PartitionedRun({ ...p, state }));
    await handler({ action: 'plan', runId: 'r' });
    await handler({ action: 'read', runId: 'r', batchId: 0, split: 0 });
    for (const partition of [0, 1, 2, 3]) await handler({ action: 'partition', runId: 'r', batchId: 0, partition });
    expect(asked).toEqual(['[0]', '[1]', '[2]', '[3]']);
  });

  it('stops a second run while the first holds the lease', async () => {
    const p = ports();
    p.source.add('f0.json', [{ user: 'a', t: at(1) }]);
    const handler = partitionedTasks(() => new PartitionedRun(p));
    expect(await handler({ action: 'plan', runId: 'first' })).toMatchObject({ done: false });
    expect(await handler({ action: 'plan', runId: 'second' })).toMatchObject({ done: true });
  });
});
