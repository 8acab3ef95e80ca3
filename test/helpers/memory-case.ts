/** A conformance case on the in-memory ports: each step a fresh executor over the same checkpoint, state and landing objects. */
import { caseToPlan, isPipelineCase, stepFiles, ConformanceCase } from '../../lib/conformance/case';
import { asPipelineStep, droppedByStageInReport, stepResult, CaseResult } from '../../lib/conformance/results';
import { MicroBatchExecutor } from '../../lib/engine/executor';
import type { QueryPlan } from '../../lib/engine/query';
import { InMemoryCheckpoint, InMemoryFileSource, InMemorySink, InMemoryStateStore } from '../../lib/engine/testing/memory';

export async function runCaseInMemory(c: ConformanceCase, statePartitions = 1): Promise<CaseResult> {
  let plan: QueryPlan;
  try {
    plan = { ...caseToPlan(c), statePartitions };
  } catch (e) {
    return { name: c.name, error: (e as Error).message };
  }
  if (c.expectError !== undefined) return { name: c.name, steps: [] };
  const source = new InMemoryFileSource(plan.source.schema);
  const checkpoint = new InMemoryCheckpoint();
  const state = new InMemoryStateStore();
  const sink = new InMemorySink();
  const steps = [];
  let fileNo = 0;
  for (const step of c.steps) {
    for (const rows of stepFiles(step)) source.add(`file-${String(++fileNo).padStart(6, '0')}.json`, rows);
    const report = await new MicroBatchExecutor({ plan, source, checkpoint, state, sink }).run();
    const result = stepResult(plan, report, sink.batches);
    steps.push(isPipelineCase(c) ? asPipelineStep(plan, result, { stateRows: report.stateRowsByOperator, droppedByStage: droppedByStageInReport(plan, report) }) : result);
  }
  return { name: c.name, steps };
}

