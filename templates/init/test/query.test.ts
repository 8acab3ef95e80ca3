/**
 * Runs the query over sample/ on the embedded local stack (DynamoDB Local and s3rver{{KINESIS_NOTE}}:
 * Java 17+, no Docker) and checks what it emits. The expected rows are worked out by hand from
 * {{SAMPLE_FILE}}:
 *
 *   event time  amount  window
 *   12:01       10      12:00-12:10
 *   12:04        5      12:00-12:10
 *   12:12        7      12:10-12:20
 *   12:25        3      12:20-12:30
 *   12:08        4      12:00-12:10
 *   12:31        2      12:30-12:40
 *
 * The latest event time is 12:31, so the watermark after the batch is 12:31 - 10 min = 12:21.
 */
import { deepStrictEqual } from 'node:assert/strict';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { runQueryOnSample, startLocalStack, type LocalStack } from 'sluice/local';
import { windowedTotals, type TotalsRow } from '../src/query';

// The AWS SDK warns on Node.js 20 about its releases after January 2027; the pinned ones support it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const SAMPLE = path.join(__dirname, '..', 'sample');
const byStart = (a: TotalsRow, b: TotalsRow) => ({{TEST_BY_START}} ? -1 : 1);
const at = (hhmm: string) => `2026-10-01T${hhmm}:00.000Z`;
/** The window from `from` to `to` (hh:mm), as a row of the query holds it. */
const w = (from: string, to: string) => ({{TEST_WINDOW}});

let stack: LocalStack;
before(async () => {
  stack = await startLocalStack({ services: [{{TEST_SERVICES}}] });
});
after(() => stack.stop());

test('append mode writes the windows the watermark (12:21) has passed, once', async () => {
  const rows = await runQueryOnSample(windowedTotals('append'), { files: SAMPLE, sink: '{{TEST_SINK_APPEND}}', stack });
  deepStrictEqual(rows.sort(byStart), [
    { ...w('12:00', '12:10'), total: 10 + 5 + 4, events: 3 },
    { ...w('12:10', '12:20'), total: 7, events: 1 },
    // 12:20-12:30 and 12:30-12:40 end after 12:21: still open, written by a later run
  ]);
});

test('update mode writes every window the run changed', async () => {
  const rows = await runQueryOnSample(windowedTotals('update'), { files: SAMPLE, sink: '{{TEST_SINK_UPDATE}}', stack });
  deepStrictEqual(rows.sort(byStart), [
    { ...w('12:00', '12:10'), total: 19, events: 3 },
    { ...w('12:10', '12:20'), total: 7, events: 1 },
    { ...w('12:20', '12:30'), total: 3, events: 1 },
    { ...w('12:30', '12:40'), total: 2, events: 1 },
  ]);
});
