/**
 * A conformance case on the in-memory ports: each step a fresh executor over the same checkpoint,
 * state and landing objects. With `workers`, each step is a partitioned run (lib/engine/schedule/partitioned.ts:
 * plan, read, partition and commit tasks, each on a fresh PartitionedRun, `workers` at a time),
 * read back from what is durable, as the conformance runner reads the local stack.
 */
import { caseSourceInputs, caseStageOrder, caseToPlan, isPipelineCase, recordLines, stepInputFiles, type ConformanceCase } from '../../lib/conformance/case';
import { isTransformWithStateCase, processorChangesAt, stepClockMs } from '../../lib/conformance/format-4';
import { timersAfter } from '../../lib/conformance/tws-steps';
import {
  addPerStage,
  asPipelineStep,
  droppedByStageInProgress,
  droppedByStageInReport,
  stepFromBatches,
  stepResult,
  type CaseResult,
  type StepResult,
} from '../../lib/conformance/results';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import { InjectedCrash } from '../../lib/engine/errors';
import { PartitionedRun } from '../../lib/engine/schedule/partitioned';
import { partitionedRunReport, partitionedTasks, runPartitioned } from '../../lib/engine/schedule/driver';
import type { Clock } from '../../lib/engine/ports';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { CrashInjector, crashingAt, type CrashPlan } from '../../lib/engine/testing/crash';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemoryDeadLetters } from '../../lib/engine/testing/memory-dead-letters';
import { InMemoryLease } from '../../lib/engine/testing/memory-lease';
import { InMemoryShuffle } from '../../lib/engine/testing/memory-shuffle';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';

export interface MemoryCaseOptions {
  /** Run each step as a partitioned run, this many tasks of a kind at a time. */
  readonly workers?: number;
  /** Crash each step's first run as planned (a partitioned run: in whichever task reaches the point). */
  readonly crash?: CrashPlan;
}

const LEASE_MS = 15 * 60_000;

export async function runCaseInMemory(c: ConformanceCase, statePartitions = 1, opts: MemoryCaseOptions = {}): Promise<CaseResult & { crashesFired?: number }> {
  let plan: QueryPlan;
  try {
    plan = { ...caseToPlan(c), statePartitions };
  } catch (e) {
    return { name: c.name, error: (e as Error).message };
  }
  if (c.expectError !== undefined) return { name: c.name, steps: [] };
  // one landing source per input: the first source is the query's `from`, then plan.inputs'
  const names = caseSourceInputs(c, plan);
  const schemas = [plan.source.schema, ...(plan.inputs ?? []).map((i) => i.source.schema)];
  const sources = names.map((_, i) => new InMemoryFileSource(schemas[i]));
  let passedMs = 0;
  const clock: Clock = { now: () => Date.now() + passedMs };
  const checkpoint = new InMemoryCheckpoint();
  const state = new InMemoryStateStore({ clock });
  const sink = new InMemorySink();
  const lease = new InMemoryLease(() => clock.now());
  const shuffle = new InMemoryShuffle();
  const deadLetters = new InMemoryDeadLetters();
  /** FORMAT-3: the reasons of the dead letters batches (from, to] wrote, in batch order and each batch's input order. */
  const reasonsOf = (from: number, to: number): string[] => {
    const out: string[] = [];
    for (let id = from + 1; id <= to; id++)
      for (const d of deadLetters.records.get(`malformed/${id}`) ?? []) out.push(String((d as { reason?: unknown }).reason ?? ''));
    return out;
  };
  /** A step's result with its dead letters (FORMAT-3 "Expect additions"). */
  const withDeadLetters = (result: StepResult, reasons: string[]): StepResult => ({ ...result, deadLetters: reasons.length, deadLetterReasons: reasons });
  const steps: StepResult[] = [];
  let fileNo = 0;
  let runNo = 0;
  let lastCommitted = -1;
  let crashesFired = 0;
  const tws = isTransformWithStateCase(c);
  /** FORMAT-4: the step's processing time and the error its run failed with. */
  let processingTimeMs: number | undefined;
  let failed: string | undefined;
  /** A step's result with FORMAT-4's timers and error. */
  const withTws = async (result: StepResult): Promise<StepResult> =>
    tws
      ? { ...result, timers: await timersAfter(plan, state, (await checkpoint.head()).latestCommitBatch), ...(failed !== undefined ? { error: failed } : {}) }
      : result;
  /** Runs a step's run: a FORMAT-4 step's failure is its result, other errors fail the case. */
  const attempt = async <T>(run: () => Promise<T>, crashing: boolean): Promise<T | null> => {
    try {
      return await run();
    } catch (e) {
      if (e instanceof InjectedCrash || !tws) throw e;
      if (!crashing) failed = (e as Error).message;
      return null;
    }
  };
  for (const [stepNo, step] of c.steps.entries()) {
    if (tws) {
      processingTimeMs = stepClockMs(c, step);
      if (processorChangesAt(c, stepNo)) plan = { ...caseToPlan(c, undefined, undefined, stepNo), statePartitions };
    }
    for (const f of stepInputFiles(step)) {
      const at = names.indexOf(f.input);
      if (at < 0) return { name: c.name, error: `step adds rows to input ${JSON.stringify(f.input)}, which the query does not have (${names.join(', ')})` };
      if (f.key !== undefined) return { name: c.name, error: 'files with keys of their own need the S3 landing source (runCase), not the in-memory twin' };
      sources[at].add(`file-${String(++fileNo).padStart(6, '0')}.json`, f.text ?? recordLines(f.rows ?? []));
    }
    const [source, ...inputSources] = sources;
    const at = processingTimeMs;
    const deps = {
      plan,
      source,
      inputSources,
      checkpoint,
      state,
      sink,
      lease,
      clock,
      deadLetters,
      ...(at !== undefined ? { processingClock: { now: () => at } } : {}),
    };
    if (!opts.workers) {
      if (opts.crash) {
        try {
          await attempt(() => new MicroBatchExecutor(crashingAt(opts.crash!, deps), { leaseDurationMs: LEASE_MS }).run(), true);
        } catch (e) {
          if (!(e instanceof InjectedCrash)) throw e;
          crashesFired++;
        }
        passedMs += LEASE_MS + 1000;
      }
      const report =
        (await attempt(() => new MicroBatchExecutor(deps, { leaseDurationMs: LEASE_MS }).run(), false)) ?? (await partitionedRunReport(plan, checkpoint, []));
      const head = (await checkpoint.head()).latestCommitBatch;
      const batches = [];
      for (let id = lastCommitted + 1; id <= head; id++) batches.push({ batchId: id, rows: sink.batches.get(id) ?? [] });
      const result = withDeadLetters(
        failed === undefined ? stepResult(plan, report, sink.batches) : stepFromBatches(plan, batches, { ...report, droppedByWatermark: 0 }),
        reasonsOf(lastCommitted, head),
      );
      lastCommitted = head;
      steps.push(
        await withTws(
          isPipelineCase(c)
            ? asPipelineStep(result, { stateRows: report.stateRowsByOperator, droppedByStage: droppedByStageInReport(report) }, caseStageOrder(c, plan))
            : result,
        ),
      );
      if (failed !== undefined) break;
      continue;
    }
    // a partitioned run: every task on fresh ports' decorators (one injector per run), as Lambdas would
    const run = async (crash?: CrashPlan) => {
      const injector = crash ? new CrashInjector(crash) : null;
      const make = () => new PartitionedRun({ ...(injector ? crashingAt(injector, deps) : deps), shuffle }, { leaseDurationMs: LEASE_MS, maxSplits: 3 });
      return runPartitioned(partitionedTasks(make), { runId: `run-${++runNo}`, concurrency: opts.workers });
    };
    if (opts.crash) {
      try {
        await attempt(() => run(opts.crash), true);
      } catch (e) {
        if (!(e instanceof InjectedCrash)) throw e;
        crashesFired++;
      }
      passedMs += LEASE_MS + 1000;
    }
    const report = await partitionedRunReport(plan, checkpoint, (await attempt(() => run(), false))?.batches ?? []);
    // what is durable: the step's batches are those committed since the previous step
    const head = await checkpoint.head();
    const batches: Array<{ batchId: number; rows: ReturnType<InMemorySink['batches']['get']> & object }> = [];
    const droppedByStage: number[] = [];
    for (let id = lastCommitted + 1; id <= head.latestCommitBatch; id++) {
      batches.push({ batchId: id, rows: sink.batches.get(id) ?? [] });
      addPerStage(droppedByStage, droppedByStageInProgress(await checkpoint.readProgress(id)));
    }
    const reasons = reasonsOf(lastCommitted, head.latestCommitBatch);
    lastCommitted = head.latestCommitBatch;
    const result = withDeadLetters(
      stepFromBatches(plan, batches, {
        watermark: report.watermark,
        stateRows: report.stateRows,
        droppedByWatermark: droppedByStage.reduce((a, b) => a + b, 0),
      }),
      reasons,
    );
    steps.push(
      await withTws(isPipelineCase(c) ? asPipelineStep(result, { stateRows: report.stateRowsByOperator, droppedByStage }, caseStageOrder(c, plan)) : result),
    );
    if (failed !== undefined) break;
  }
  return { name: c.name, steps, ...(opts.crash ? { crashesFired } : {}) };
}
