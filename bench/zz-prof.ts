import { generateJoinInput, joinPlan } from './join';
import { MicroBatchExecutor } from '../lib/engine/schedule/single';
import { InMemoryFileSource } from '../lib/engine/testing/memory-source';
import { PlainCheckpoint, PlainStateStore } from './plain-ports';
const input = generateJoinInput({ impressions: 160000, clickRate: 0.25, files: 20, spanMinutes: 60 });
const plan = joinPlan(2);
function src(schema: any, files: any[]) { const s = new InMemoryFileSource(schema); for (const f of files) s.files.push(f); return s; }
(async () => {
  for (let r = 0; r < 4; r++) {
    const ex = new MicroBatchExecutor({ plan, source: src(plan.source.schema, input.impressions), inputSources: [src(plan.inputs![0].source.schema, input.clicks)], checkpoint: new PlainCheckpoint(), state: new PlainStateStore(), sink: { description: 'x', addBatch: async () => undefined } });
    const t0 = performance.now(); const rep = await ex.run(); console.log(((performance.now() - t0) / 1000).toFixed(2), 's', rep.rowsOut);
  }
})();
