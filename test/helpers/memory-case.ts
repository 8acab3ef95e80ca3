/** A conformance case on the in-memory ports: each step a fresh executor over the same checkpoint, state and landing objects. */
import { caseSourceInputs, caseStageOrder, caseToPlan, isPipelineCase, stepInputFiles, ConformanceCase } from '../../lib/conformance/case';
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
  // one landing source per input: the first source is the query's `from`, then plan.inputs'
  const names = caseSourceInputs(c, plan);
  const schemas = [plan.source.schema, ...(plan.inputs ?? []).map((i) => i.source.schema)];
  const sources = names.map((_, i) => new InMemoryFileSource(schemas[i]));
  const checkpoint = new InMemoryCheckpoint();
  const state = new InMemoryStateStore();
  const sink = new InMemorySink();
  const steps = [];
  let fileNo = 0;
  for (const step of c.steps) {
    for (const f of stepInputFiles(step)) {
      const at = names.indexOf(f.input);
      if (at < 0) return { name: c.name, error: `step adds rows to input ${JSON.stringify(f.input)}, which the query does not have (${names.join(', ')})` };
      sources[at].add(`file-${String(++fileNo).padStart(6, '0')}.json`, f.rows);
    }
    const [source, ...inputSources] = sources;
    const report = await new MicroBatchExecutor({ plan, source, inputSources, checkpoint, state, sink }).run();
    const result = stepResult(plan, report, sink.batches);
    steps.push(isPipelineCase(c) ? asPipelineStep(result, { stateRows: report.stateRowsByOperator, droppedByStage: droppedByStageInReport(report) }, caseStageOrder(c, plan)) : result);
  }
  return { name: c.name, steps };
}
