/**
 * The benchmark's query: the windowed-totals example of reference/000, grouped by user as well,
 * over the generated events (bench/generate.ts).
 */
import type { QueryPlan } from '../lib/engine/plan/types';
import { count, sum, window } from '../lib/engine/query/functions';
import { readStream } from '../lib/engine/query/reader';
import { BENCH_SCHEMA } from './generate';

export const WINDOW_MS = 10 * 60_000;
export const WATERMARK_DELAY_MS = 10 * 60_000;

/** `maxFilesPerTrigger` undefined: the landing source's default limits (`maxBytesPerTrigger` sets that one limit instead). */
export function benchPlan(
  maxFilesPerTrigger: number | undefined,
  name = 'bench-user-totals',
  schema: string = BENCH_SCHEMA,
  maxBytesPerTrigger?: number,
): QueryPlan {
  let reader = readStream.format('json').schema(schema);
  if (maxFilesPerTrigger !== undefined) reader = reader.option('maxFilesPerTrigger', maxFilesPerTrigger);
  if (maxBytesPerTrigger !== undefined) reader = reader.option('maxBytesPerTrigger', maxBytesPerTrigger);
  return reader
    .load()
    .withWatermark('event_time', '10 minutes')
    .groupBy(window('event_time', '10 minutes'), 'user')
    .agg(sum('amount').as('total'), count().as('events'))
    .writeStream.outputMode('append')
    .trigger({ availableNow: true })
    .queryName(name)
    .plan();
}

export const QUERY_TEXT = "withWatermark('event_time','10 minutes').groupBy(window('event_time','10 minutes'), 'user').agg(sum('amount'), count()), append";
