/** The stateful shape of a plan, the input of the checkpoint's fingerprint. */
import type { Json } from '../ports';
import { operatorChain } from './chain';
import type { OutputMode, QueryPlan, StatefulSpec } from './types';

/**
 * The stateful shape of a plan, fingerprinted into the checkpoint: a restart with a different
 * shape is refused, as Spark refuses an incompatible state schema.
 */
export function statefulShape(plan: QueryPlan): Json {
  const wms = plan.stages.filter((s) => s.kind === 'watermark').map((s) => (s as { column: string }).column);
  if (plan.operators.length === 0) return { kind: 'stateless', outputMode: plan.outputMode };
  // One operator: the shape (and so the fingerprint) of checkpoints written before chains existed.
  const inputs = plan.inputs ?? [];
  const policy: Record<string, Json> = plan.watermarkPolicy === 'max' ? { watermarkPolicy: 'max' } : {};
  if (plan.operators.length === 1 && inputs.length === 0)
    return { ...(operatorShape(plan.operators[0].spec, wms, plan.outputMode) as Record<string, Json>), ...policy };
  if (inputs.length === 0)
    return {
      kind: 'chain',
      operators: plan.operators.map((o) => operatorShape(o.spec, wms, plan.outputMode)),
      watermarks: wms,
      outputMode: plan.outputMode,
      ...policy,
    };
  // with joined inputs: every operator in run order (their state ids follow it), and each input's watermark columns
  return {
    kind: 'chain',
    operators: operatorChain(plan).operators.map((o) => ({ ...(operatorShape(o.spec, wms, plan.outputMode) as Record<string, Json>), id: o.operatorId })),
    watermarks: wms,
    inputs: inputs.map((i) => ({
      name: i.name,
      kind: i.source.kind,
      watermarks: i.stages.filter((st) => st.kind === 'watermark').map((st) => (st as { column: string }).column),
    })),
    outputMode: plan.outputMode,
    ...policy,
  };
}

function operatorShape(st: StatefulSpec, wms: string[], outputMode: OutputMode): Json {
  if (st.kind === 'streamJoin') {
    return {
      kind: 'streamJoin',
      input: st.input,
      type: st.type,
      on: st.on.map((k) => ({ left: k.left, right: k.right, using: k.using })),
      timeRange: st.timeRange ? { ...st.timeRange } : null,
      condition: [...st.condition, ...st.pushed] as unknown as Json,
    };
  }
  if (st.kind === 'dedup') {
    return { kind: 'dedup', columns: st.columns ? [...st.columns] : null, withinWatermark: st.withinWatermark, watermarks: wms, outputMode };
  }
  return {
    kind: 'aggregate',
    keys: st.keys.map(
      (k): Json =>
        k.kind === 'column'
          ? { column: k.name }
          : k.kind === 'window'
            ? { window: k.column, durationMs: k.durationMs, slideMs: k.slideMs, startMs: k.startMs }
            : { session: k.column, gapMs: k.gapMs },
    ),
    aggs: st.aggs.map((a) => ({ fn: a.fn, column: a.column ?? null, as: a.as })),
    watermarks: wms,
    outputMode,
  };
}
