/**
 * [12] expr (issue 30): the bench's windowed aggregation on the same events, side by side in one
 * process, rounds interleaved: plain, and preceded by a `selectExpr` (a few columns, an arithmetic
 * and a string function) and a `filter` that keeps every row, and preceded by a `withColumn` of an
 * expression and a `filter` on it. The ratios are what Spark SQL expressions cost a row; the
 * target (issue 30) is at least 0.7× the plain query's events/s for the selectExpr + filter.
 */
import type { QueryPlan } from '../lib/engine/plan/types';
import { count, sum, window } from '../lib/engine/query/functions';
import { readStream } from '../lib/engine/query/reader';
import { CountingSink } from './plain-ports';
import { runEngine } from './engine-run';
import { BENCH_SCHEMA, generateEvents } from './generate';
import { benchPlan } from './query';

export const EXPR_SELECT = ['lower(user) AS user', 'event_time', 'amount * 2 AS amount', 'country'] as const;
export const EXPR_FILTER = 'amount >= 0 AND user IS NOT NULL';
export const WITH_COLUMN = ['amount_cents', 'CAST(amount * 100 AS BIGINT)'] as const;
export const WITH_COLUMN_FILTER = 'amount_cents >= 0';

/** The bench's query with expression stages before its watermark and aggregation: selectExpr + filter, or withColumn + filter. */
export function exprPlan(maxFilesPerTrigger: number, kind: 'expr' | 'withColumn' = 'expr'): QueryPlan {
  const frame = readStream.format('json').schema(BENCH_SCHEMA).option('maxFilesPerTrigger', maxFilesPerTrigger).load();
  return (kind === 'expr' ? frame.selectExpr(...EXPR_SELECT).filter(EXPR_FILTER) : frame.withColumn(...WITH_COLUMN).filter(WITH_COLUMN_FILTER))
    .withWatermark('event_time', '10 minutes')
    .groupBy(window('event_time', '10 minutes'), 'user')
    .agg(sum('amount').as('total'), count().as('events'))
    .writeStream.outputMode('append')
    .trigger({ availableNow: true })
    .queryName(`bench-${kind}`)
    .plan();
}

export interface ExprFigures {
  readonly events: number;
  readonly plainEventsPerSecond: number;
  readonly exprEventsPerSecond: number;
  readonly exprOverPlain: number;
  readonly withColumnEventsPerSecond: number;
  readonly withColumnOverPlain: number;
  /** The same by CPU time (events / CPU s of the process, best round): less moved by other load on the machine than wall time. */
  readonly cpu: { readonly plainEventsPerCpuSecond: number; readonly exprOverPlain: number; readonly withColumnOverPlain: number };
  readonly rounds: number;
}

export async function runExprSection(opts: {
  events: number;
  files: number;
  keys: number;
  rounds: number;
  out: (line?: string) => void;
}): Promise<ExprFigures> {
  const input = generateEvents({ events: opts.events, keys: opts.keys, files: opts.files, spanMinutes: 180 });
  const maxFiles = Math.max(1, Math.floor(opts.files / 4));
  const kinds = ['plain', 'expr', 'withColumn'] as const;
  const runs: Record<(typeof kinds)[number], number[]> = { plain: [], expr: [], withColumn: [] };
  const cpu: Record<(typeof kinds)[number], number[]> = { plain: [], expr: [], withColumn: [] };
  const rows: Record<(typeof kinds)[number], number> = { plain: 0, expr: 0, withColumn: 0 };
  opts.out(`  expr:       selectExpr(${EXPR_SELECT.map((s) => JSON.stringify(s)).join(', ')}).filter(${JSON.stringify(EXPR_FILTER)}), then the plain query`);
  opts.out(
    `  withColumn: withColumn(${WITH_COLUMN.map((s) => JSON.stringify(s)).join(', ')}).filter(${JSON.stringify(WITH_COLUMN_FILTER)}), then the plain query`,
  );
  for (let r = 0; r < opts.rounds; r++) {
    // rotate which goes first, so none always runs on another's garbage
    const order = kinds.map((_, i) => kinds[(i + r) % kinds.length]);
    for (const kind of order) {
      const plan = kind === 'plain' ? benchPlan(maxFiles, 'bench-expr-plain') : exprPlan(maxFiles, kind);
      const sink = new CountingSink();
      const run = await runEngine(input.files, { maxFilesPerTrigger: maxFiles, plan, sink });
      runs[kind].push(run.seconds);
      cpu[kind].push(run.cpuSeconds);
      rows[kind] = sink.rows;
    }
  }
  // the filter keeps every row and lower() of a generated user is the user: the same output rows
  if (rows.plain !== rows.expr || rows.plain !== rows.withColumn) {
    throw new Error(`expr bench: the plain query output ${rows.plain} rows, the selectExpr one ${rows.expr}, the withColumn one ${rows.withColumn}`);
  }
  const best = (xs: number[]) => Math.min(...xs);
  const plainRate = opts.events / best(runs.plain);
  const exprRate = opts.events / best(runs.expr);
  const withColumnRate = opts.events / best(runs.withColumn);
  const cpuRate = (k: (typeof kinds)[number]) => opts.events / best(cpu[k]);
  const figures: ExprFigures = {
    events: opts.events,
    plainEventsPerSecond: Math.round(plainRate),
    exprEventsPerSecond: Math.round(exprRate),
    exprOverPlain: Number((exprRate / plainRate).toFixed(2)),
    withColumnEventsPerSecond: Math.round(withColumnRate),
    withColumnOverPlain: Number((withColumnRate / plainRate).toFixed(2)),
    cpu: {
      plainEventsPerCpuSecond: Math.round(cpuRate('plain')),
      exprOverPlain: Number((cpuRate('expr') / cpuRate('plain')).toFixed(2)),
      withColumnOverPlain: Number((cpuRate('withColumn') / cpuRate('plain')).toFixed(2)),
    },
    rounds: opts.rounds,
  };
  const met = figures.exprOverPlain >= 0.7 ? 'met' : 'missed';
  const rate = (n: number) => `${n.toLocaleString('en-US')} events/s`.padStart(18);
  const perCpu = (k: (typeof kinds)[number]) => `${Math.round(cpuRate(k)).toLocaleString('en-US')} events/CPU s`.padStart(22);
  opts.out(`  plain aggregation:                 ${rate(figures.plainEventsPerSecond)}            ${perCpu('plain')}`);
  opts.out(
    `  selectExpr + filter, aggregation:  ${rate(figures.exprEventsPerSecond)}  ${figures.exprOverPlain.toFixed(2)}× plain  ${perCpu('expr')}  ${figures.cpu.exprOverPlain.toFixed(2)}× plain`,
  );
  opts.out(
    `  withColumn + filter, aggregation:  ${rate(figures.withColumnEventsPerSecond)}  ${figures.withColumnOverPlain.toFixed(2)}× plain  ${perCpu('withColumn')}  ${figures.cpu.withColumnOverPlain.toFixed(2)}× plain`,
  );
  opts.out(`  selectExpr + filter over plain: ${figures.exprOverPlain}× (target ≥ 0.7×: ${met}); best of ${opts.rounds} interleaved rounds each`);
  return figures;
}
