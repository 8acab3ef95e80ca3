/**
 * The windowed-totals query: per 10-minute window of event time, the sum of `amount` and the
 * number of events, with a 10-minute watermark. In append mode a window is written once, when
 * the watermark passes its end; in update mode every run writes the windows it changed.
 *
 * What it reads: {{SOURCE_TEXT}}
 * (the columns of SCHEMA).
 * Where it reads: {{READ_NOTE}} Deployed, the construct
 * gives the Lambda its source (SLUICE_SOURCE_URI), which takes precedence, so the same query
 * runs locally and deployed.
 */
import { count, readStream, sum, window, type OutputMode, type RowOf } from 'sluice';

export const SCHEMA = '{{SCHEMA}}';

export function windowedTotals(outputMode: OutputMode = 'append') {
  return readStream
    .format('{{FORMAT}}')
    .schema(SCHEMA){{FORMAT_OPTIONS}}
    .option('{{LIMIT_OPTION}}', 1000)
    .{{READ}}
    .withWatermark('event_time', '10 minutes')
    .groupBy(window('event_time', '10 minutes'))
    .agg(sum('amount').as('total'), count().as('events')){{WINDOW_SELECT}}
    .writeStream.outputMode(outputMode)
    .trigger({ availableNow: true })
    .queryName('{{NAME}}')
    .plan();
}

/** A row the query emits: {{ROW_SHAPE}}, typed from the query. */
export type TotalsRow = RowOf<ReturnType<typeof windowedTotals>>;

export default windowedTotals;
