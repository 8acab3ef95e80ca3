/** The stateful shape of a plan, the input of the checkpoint's fingerprint. */
import type { Json } from '../ports';
import { operatorChain } from './chain';
import type { OutputMode, QueryPlan, StatefulSpec } from './types';

/**
 * The stateful shape of a plan, fingerprinted into the checkpoint: a restart with a different
 * shape is refused, as Spark refuses an incompatible state schema.
 *
 * Since TIMESTAMP values became epoch microseconds (they were milliseconds), the shape of a plan whose state can
 * hold a time (an operator with a TIMESTAMP or window among its input columns) carries
 * `timestamps: 'us'`, and window, session and join bounds are given in µs: state written in
 * milliseconds by an earlier version has another fingerprint, so it is refused instead of being
 * misread. `legacy` gives the shape such a plan had before (ms, no mark), for the refusal to say why.
 *
 * Since a stream-stream join keeps its buffered rows in blocks (operators/stream-join.ts; it kept them per key before),
 * its operator's shape carries `joinState: 'blocks'`: state of the per-key layout before has
 * another fingerprint, so it is refused. `perKeyJoin` gives the shape such a plan had before.
 */
export function statefulShape(plan: QueryPlan, legacy = false, perKeyJoin = false): Json {
  const wms = plan.stages.filter((s) => s.kind === 'watermark').map((s) => (s as { column: string }).column);
  if (plan.operators.length === 0) return { kind: 'stateless', outputMode: plan.outputMode };
  // One operator: the shape (and so the fingerprint) of checkpoints written before chains existed.
  const inputs = plan.inputs ?? [];
  const policy: Record<string, Json> = plan.watermarkPolicy === 'max' ? { watermarkPolicy: 'max' } : {};
  const chain = operatorChain(plan).operators;
  const timed = !legacy && chain.some((o) => o.inputColumns.some((c) => c.type === 'TIMESTAMP' || c.window));
  const mark: Record<string, Json> = timed ? { timestamps: 'us' } : {};
  const unit: TimeUnit = legacy ? 'ms' : 'us';
  if (plan.operators.length === 1 && inputs.length === 0)
    return { ...(operatorShape(plan.operators[0].spec, wms, plan.outputMode, unit, perKeyJoin) as Record<string, Json>), ...policy, ...mark };
  if (inputs.length === 0)
    return {
      kind: 'chain',
      operators: plan.operators.map((o) => operatorShape(o.spec, wms, plan.outputMode, unit, perKeyJoin)),
      watermarks: wms,
      outputMode: plan.outputMode,
      ...policy,
      ...mark,
    };
  // with joined inputs: every operator in run order (their state ids follow it), and each input's watermark columns
  return {
    kind: 'chain',
    operators: chain.map((o) => ({ ...(operatorShape(o.spec, wms, plan.outputMode, unit, perKeyJoin) as Record<string, Json>), id: o.operatorId })),
    watermarks: wms,
    inputs: inputs.map((i) => ({
      name: i.name,
      kind: i.source.kind,
      watermarks: i.stages.filter((st) => st.kind === 'watermark').map((st) => (st as { column: string }).column),
    })),
    outputMode: plan.outputMode,
    ...policy,
    ...mark,
  };
}

/** The unit a shape gives durations in: µs, or ms for the shape of checkpoints written while TIMESTAMP values were milliseconds. */
type TimeUnit = 'us' | 'ms';

function operatorShape(st: StatefulSpec, wms: string[], outputMode: OutputMode, unit: TimeUnit, perKeyJoin: boolean): Json {
  const ms = (us: number | null) => (us === null ? null : us / 1000);
  if (st.kind === 'streamJoin') {
    const tr = st.timeRange;
    return {
      kind: 'streamJoin',
      input: st.input,
      type: st.type,
      on: st.on.map((k) => ({ left: k.left, right: k.right, using: k.using })),
      timeRange:
        tr === null
          ? null
          : unit === 'us'
            ? { ...tr }
            : { left: tr.left, right: tr.right, lowerMs: ms(tr.lowerUs), upperMs: ms(tr.upperUs), lowerStrict: tr.lowerStrict, upperStrict: tr.upperStrict },
      condition: [...st.condition, ...st.pushed] as unknown as Json,
      // (only when given: the shape of a checkpoint without one stays as it was)
      ...(st.conditionExpr ? { conditionExpr: st.conditionExpr.text } : {}),
      // (the layout of its state: blocks of rows; none was the earlier per-key layout)
      ...(perKeyJoin || unit === 'ms' ? {} : { joinState: 'blocks' }),
    };
  }
  if (st.kind === 'transformWithState') {
    // (the processor and its output schema may change between runs, as in Spark; the keys and time mode may not)
    return { kind: 'transformWithState', keys: [...st.keys], timeMode: st.timeMode, watermarks: wms, outputMode };
  }
  if (st.kind === 'dedup') {
    return { kind: 'dedup', columns: st.columns ? [...st.columns] : null, withinWatermark: st.withinWatermark, watermarks: wms, outputMode };
  }
  if (st.kind === 'limit') return { kind: 'limit', n: st.n, outputMode };
  return {
    kind: 'aggregate',
    keys: st.keys.map(
      (k): Json =>
        k.kind === 'column'
          ? { column: k.name }
          : k.kind === 'window'
            ? unit === 'us'
              ? { window: k.column, durationUs: k.durationUs, slideUs: k.slideUs, startUs: k.startUs }
              : { window: k.column, durationMs: ms(k.durationUs), slideMs: ms(k.slideUs), startMs: ms(k.startUs) }
            : k.gapColumn !== undefined || k.calendarGap
              ? { session: k.column, gap: k.text }
              : unit === 'us'
                ? { session: k.column, gapUs: k.gapUs }
                : { session: k.column, gapMs: ms(k.gapUs) },
    ),
    aggs: st.aggs.map(
      // (keys in this order: a checkpoint's shape is compared as JSON text)
      (a): Json => ({
        fn: a.fn,
        column: a.column ?? null,
        ...(a.by === undefined ? {} : { by: a.by }),
        ...(a.percentage === undefined ? {} : { percentage: typeof a.percentage === 'number' ? a.percentage : [...a.percentage] }),
        ...(a.accuracy === undefined ? {} : { accuracy: a.accuracy }),
        ...(a.ignoreNulls === true ? { ignoreNulls: true } : {}),
        // (listagg's buffer holds [value, keys] pairs with an order, values without one)
        ...(a.order === undefined ? {} : { order: a.order.map((o) => ({ desc: o.desc, nullsFirst: o.nullsFirst })) }),
        as: a.as,
      }),
    ),
    watermarks: wms,
    outputMode,
  };
}
