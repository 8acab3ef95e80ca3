/**
 * [12] expr (issue 30): the bench's windowed aggregation on the same events, side by side in one
 * process, rounds interleaved: plain, and preceded by a `selectExpr` (a few columns, an arithmetic
 * and a string function) and a `filter` that keeps every row. The ratio is what Spark SQL
 * expressions cost a row; the target is at least 0.7× the plain query's events/s.
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

/** The bench's query with the expression stages before its watermark and aggregation. */
export function exprPlan(maxFilesPerTrigger: number, name = 'bench-expr'): QueryPlan {
  return readStream
    .format('json')
    .schema(BENCH_SCHEMA)
    .option('maxFilesPerTrigger', maxFilesPerTrigger)
    .load()
    .selectExpr(...EXPR_SELECT)
    .filter(EXPR_FILTER)
    .withWatermark('event_time', '10 minutes')
    .groupBy(window('event_time', '10 minutes'), 'user')
    .agg(sum('amount').as('total'), count().as('events'))
    .writeStream.outputMode('append')
    .trigger({ availableNow: true })
    .queryName(name)
    .plan();
}

export interface ExprFigures {
  readonly events: number;
  readonly plainEventsPerSecond: number;
  readonly exprEventsPerSecond: number;
  readonly exprOverPlain: number;
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
  const runs: Record<'plain' | 'expr', number[]> = { plain: [], expr: [] };
  const rows: Record<'plain' | 'expr', number> = { plain: 0, expr: 0 };
  opts.out(`  expr: selectExpr(${EXPR_SELECT.map((s) => JSON.stringify(s)).join(', ')}).filter(${JSON.stringify(EXPR_FILTER)}), then the plain query`);
  for (let r = 0; r < opts.rounds; r++) {
    // alternate which goes first, so neither always runs on the other's garbage
    const order = r % 2 === 0 ? (['plain', 'expr'] as const) : (['expr', 'plain'] as const);
    for (const kind of order) {
      const plan = kind === 'plain' ? benchPlan(maxFiles, 'bench-expr-plain') : exprPlan(maxFiles);
      const sink = new CountingSink();
      const run = await runEngine(input.files, { maxFilesPerTrigger: maxFiles, plan, sink });
      runs[kind].push(run.seconds);
      rows[kind] = sink.rows;
    }
  }
  // the filter keeps every row and lower() of a generated user is the user: the same output rows
  if (rows.plain !== rows.expr) throw new Error(`expr bench: the plain query output ${rows.plain} rows, the expression query ${rows.expr}`);
  const best = (xs: number[]) => Math.min(...xs);
  const plainRate = opts.events / best(runs.plain);
  const exprRate = opts.events / best(runs.expr);
  const figures: ExprFigures = {
    events: opts.events,
    plainEventsPerSecond: Math.round(plainRate),
    exprEventsPerSecond: Math.round(exprRate),
    exprOverPlain: Number((exprRate / plainRate).toFixed(2)),
    rounds: opts.rounds,
  };
  const met = figures.exprOverPlain >= 0.7 ? 'met' : 'missed';
  opts.out(`  plain aggregation:                 ${figures.plainEventsPerSecond.toLocaleString('en-US')} events/s`);
  opts.out(`  selectExpr + filter, aggregation: ${figures.exprEventsPerSecond.toLocaleString('en-US')} events/s`);
  opts.out(`  expr over plain: ${figures.exprOverPlain}× (best of ${opts.rounds} interleaved rounds each; target ≥ 0.7×: ${met})`);
  return figures;
}
