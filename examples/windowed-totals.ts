/**
 * The windowed-totals example of reference/000: a 10-minute tumbling-window sum and count of
 * `amount`, with a 10-minute watermark on `event_time`.
 *
 * The source path is left to the runtime (the Lambda's configuration, the CLI or the demo), so
 * the same query runs from an S3 landing prefix or a Kinesis stream.
 */
import type { OutputMode, QueryPlan } from '../lib/engine/plan/types';
import { count, sum, window } from '../lib/engine/query/functions';
import { readStream } from '../lib/engine/query/reader';

export const WINDOWED_TOTALS_SCHEMA = 'user STRING, event_time TIMESTAMP, amount DOUBLE';

export function windowedTotals(
  opts: {
    outputMode?: OutputMode;
    source?: 'files' | 'kinesis';
    maxFilesPerTrigger?: number;
    name?: string;
    /** How an S3 source finds new files: listing the prefix (default) or S3's event notifications (docs/sources.md). */
    discovery?: 'list' | 'notifications';
  } = {},
): QueryPlan {
  let reader = readStream.format('json').schema(WINDOWED_TOTALS_SCHEMA);
  if (opts.maxFilesPerTrigger) reader = reader.option('maxFilesPerTrigger', opts.maxFilesPerTrigger);
  if (opts.discovery === 'notifications') reader = reader.option('discovery', 'notifications');
  const events = opts.source === 'kinesis' ? reader.kinesis() : reader.load();
  return events
    .withWatermark('event_time', '10 minutes')
    .groupBy(window('event_time', '10 minutes'))
    .agg(sum('amount').as('total'), count().as('events'))
    .writeStream.outputMode(opts.outputMode ?? 'append')
    .trigger({ availableNow: true })
    .queryName(opts.name ?? `windowed-totals-${opts.outputMode ?? 'append'}`)
    .plan();
}

/** The three files of the reference example, dropped one per scheduled run. */
export const SEED_FILES: ReadonlyArray<{ name: string; rows: Array<Record<string, unknown>> }> = [
  {
    name: '001.json',
    rows: [
      { user: 'a', event_time: '2026-10-01 12:01:00', amount: 10 },
      { user: 'b', event_time: '2026-10-01 12:04:00', amount: 5 },
      { user: 'a', event_time: '2026-10-01 12:12:00', amount: 7 },
    ],
  },
  {
    name: '002.json',
    rows: [
      { user: 'c', event_time: '2026-10-01 12:25:00', amount: 3 },
      { user: 'b', event_time: '2026-10-01 12:08:00', amount: 4 },
    ],
  },
  {
    name: '003.json',
    rows: [
      { user: 'd', event_time: '2026-10-01 12:03:00', amount: 100 },
      { user: 'd', event_time: '2026-10-01 12:41:00', amount: 1 },
    ],
  },
];

/**
 * A run's rows as the reference article prints them: `(12:00, 12:10, 19.0)`, by window start (a
 * batch's rows come in no defined order).
 */
export function showTotals(rows: ReadonlyArray<Record<string, unknown>>): string {
  const hhmm = (iso: string) => iso.slice(11, 16);
  return rows
    .map((r) => ({ w: r.window as { start: string; end: string }, total: Number(r.total) }))
    .sort((a, b) => (a.w.start < b.w.start ? -1 : a.w.start > b.w.start ? 1 : 0))
    .map(({ w, total }) => `(${hhmm(w.start)}, ${hhmm(w.end)}, ${total.toFixed(1)})`)
    .join(', ');
}

export default windowedTotals;
