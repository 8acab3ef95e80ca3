/**
 * `sluice run`'s output (lib/observe/progress-line.ts): the live line's text, the line rewritten in
 * place on a stream that is a TTY (an in-process writable that says so, read back through a small
 * screen model), nothing but plain lines on one that is not, the summary and the --json report.
 */
import { Writable } from 'node:stream';
import type { RunReport } from '../../lib/engine/run/types';
import { createRunDisplay, LiveLine, progressLine, runSummary } from '../../lib/observe/progress-line';
import { MINUTE, progressRecord } from '../helpers/progress-records';

/** A writable that keeps what it is given; `isTTY` as asked. */
class Capture extends Writable {
  text = '';
  constructor(
    readonly isTTY: boolean,
    readonly columns = 200,
  ) {
    super({ decodeStrings: false });
  }
  override _write(chunk: string | Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += String(chunk);
    done();
  }
}

/**
 * What a terminal shows after `text`: the lines so far and the cursor's line. Knows the three
 * controls node:readline sends here (cursor to column 1, erase to the end of the line, erase the
 * line) and newlines.
 */
function screen(text: string): { lines: string[]; current: string } {
  const lines: string[] = [];
  let current = '';
  let col = 0;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the tokens are the terminal's escape sequences (ESC), what the progress line writes
  for (const token of text.match(/\x1b\[\d*[GK]|\n|[^\x1b\n]+/g) ?? []) {
    if (token === '\n') {
      lines.push(current);
      current = '';
      col = 0;
    } else if (token === '\x1b[1G') col = 0;
    else if (token === '\x1b[0K') current = current.slice(0, col);
    else if (token === '\x1b[2K') current = '';
    else if (token.startsWith('\x1b')) throw new Error(`unexpected control ${JSON.stringify(token)}`);
    else {
      current = current.slice(0, col) + token + current.slice(col + token.length);
      col += token.length;
    }
  }
  return { lines, current };
}

const NOW = Date.parse('2026-12-01T10:00:00Z');
const record = (batchId: number, rowsIn: number, durationMs: number) =>
  progressRecord({
    batchId,
    startMs: NOW - durationMs,
    durationMs,
    rowsIn,
    watermarkMs: Date.parse('2026-10-01T12:31:00Z'),
    backlogFiles: 3,
    backlogBytes: 2048,
  });

function report(overrides: Partial<RunReport> = {}): RunReport {
  const batch = (batchId: number, rowsIn: number, rows: Record<string, unknown>[]) => ({
    batchId,
    replay: false,
    noData: rowsIn === 0,
    numInputRows: rowsIn,
    numOutputRows: rows.length,
    rows: rows as never,
    batchWatermarkMs: 0,
    nextWatermarkMs: 0,
    droppedByWatermark: 0,
    deadLetters: 0,
    stateRows: 2,
    durationMs: 10,
  });
  return {
    queryId: 'q',
    queryName: 'totals',
    stoppedBy: 'done',
    watermarkMs: Date.parse('2026-10-01T12:02:00Z'),
    watermark: '2026-10-01T12:02:00.000Z',
    batches: [batch(0, 3, []), batch(1, 0, [{ key: 'a', total: 19 }])],
    rowsIn: 3,
    rowsOut: 1,
    droppedByWatermark: 1,
    deadLetters: 2,
    stateRows: 2,
    backlogLeft: 0,
    progress: [],
    ...overrides,
  };
}

const WHERE = { output: 's3://out/totals', checkpoint: 's3://cp/totals', elapsedMs: 1400 };

describe('the live line', () => {
  it('shows the batch, rows/s, the watermark, the backlog and the time left', () => {
    // 5,000 rows in 2 s: 2,500 rows/s; the deadline 8 minutes 12 seconds away
    const line = progressLine(record(12, 5000, 2000), { nowMs: NOW, deadlineMs: NOW + 8 * MINUTE + 12_000, batchesDone: 3 });
    expect(line).toBe('batch 12 (3 this run) · 2,500 rows/s · watermark 2026-10-01 12:31:00 · backlog 3 files (2.0 KB) · 8m 12s left');
  });

  it('leaves out the time left without a deadline, and is cut to the width given', () => {
    const line = progressLine(record(1, 10, 1000), { nowMs: NOW });
    expect(line).toBe('batch 1 · 10 rows/s · watermark 2026-10-01 12:31:00 · backlog 3 files (2.0 KB)');
    const cut = progressLine(record(1, 10, 1000), { nowMs: NOW, width: 20 });
    expect(cut).toHaveLength(20);
    expect(cut).toBe(`${line.slice(0, 19)}…`);
  });

  it('is rewritten in place on a TTY and gone when cleared', () => {
    const tty = new Capture(true, 80);
    const live = new LiveLine(tty);
    live.update('batch 0 · first');
    live.update('batch 1');
    // the second text replaced the first, the longer one, entirely, on the same line
    expect(screen(tty.text)).toEqual({ lines: [], current: 'batch 1' });
    live.above('a warning');
    expect(screen(tty.text)).toEqual({ lines: ['a warning'], current: 'batch 1' });
    live.end();
    live.update('batch 2');
    expect(screen(tty.text)).toEqual({ lines: ['a warning'], current: '' });
  });

  it('never wraps: a text wider than the terminal is cut', () => {
    const tty = new Capture(true, 10);
    new LiveLine(tty).update('x'.repeat(30));
    expect(screen(tty.text).current).toBe(`${'x'.repeat(8)}…`);
  });

  it('writes nothing on a stream that is not a TTY', () => {
    const pipe = new Capture(false);
    const live = new LiveLine(pipe);
    live.update('batch 0');
    live.end();
    expect(pipe.text).toBe('');
  });
});

describe("sluice run's output", () => {
  it('on a TTY: the line after each batch, log events above it (not the ones it shows), then the summary alone', () => {
    const out = new Capture(true);
    const err = new Capture(true);
    const display = createRunDisplay({ out, err, json: false, now: () => NOW });
    display.onProgress(record(0, 3, 1000));
    expect(screen(out.text).current).toBe(progressLine(record(0, 3, 1000), { nowMs: NOW, batchesDone: 1 }));
    display.log({ event: 'batch', batchId: 0 });
    display.log({ event: 'replay', batchId: 0 });
    display.onProgress(record(1, 0, 10));
    expect(screen(out.text).current).toBe(progressLine(record(1, 0, 10), { nowMs: NOW, batchesDone: 2 }));
    display.finish(report(), WHERE);
    expect(err.text).toBe('{"event":"replay","batchId":0}\n');
    const shown = screen(out.text);
    expect(shown.current).toBe('');
    expect(shown.lines).toEqual(runSummary(report(), WHERE));
  });

  it('not on a TTY: no line, the log events as they come, and the summary', () => {
    const out = new Capture(false);
    const err = new Capture(false);
    const display = createRunDisplay({ out, err, json: false, now: () => NOW });
    display.onProgress(record(0, 3, 1000));
    display.log({ event: 'batch', batchId: 0 });
    display.finish(report(), WHERE);
    expect(out.text).toBe(`${runSummary(report(), WHERE).join('\n')}\n`);
    expect(err.text).toBe('{"event":"batch","batchId":0}\n');
  });

  it('with --json: the run report with its progress records, and no line even on a TTY', () => {
    const out = new Capture(true);
    const display = createRunDisplay({ out, err: new Capture(true), json: true, now: () => NOW });
    const records = [record(0, 3, 1000), record(1, 0, 10)];
    for (const r of records) display.onProgress(r);
    display.finish(report(), WHERE);
    expect(out.text).not.toContain('\x1b');
    const printed = JSON.parse(out.text);
    expect(printed).toMatchObject({ queryName: 'totals', stoppedBy: 'done', rowsIn: 3, rowsOut: 1, backlogLeft: 0 });
    expect(printed.batches).toEqual([
      { batchId: 0, noData: false, rowsIn: 3, rows: [] },
      { batchId: 1, noData: true, rowsIn: 0, rows: [{ key: 'a', total: 19 }] },
    ]);
    expect(printed.progress).toEqual(JSON.parse(JSON.stringify(records)));
  });

  it("the summary repeats the run report's warnings, one line each", () => {
    expect(runSummary(report(), WHERE)).not.toContainEqual(expect.stringMatching(/^ {2}warning/));
    const lines = runSummary(report({ warnings: ['the stream-stream join op0 with clicks keeps every row of its left side in state'] }), WHERE);
    expect(lines).toContain('  warning       the stream-stream join op0 with clicks keeps every row of its left side in state');
  });

  it('the summary says what the run did, how it stopped and where the output went', () => {
    const lines = runSummary(report({ stoppedBy: 'deadline', backlogLeft: 4 }), WHERE);
    expect(lines[0]).toBe('sluice: totals ran 2 batches (1 without data) in 1.4s');
    expect(lines).toContain('  rows          3 in, 1 out');
    expect(lines).toContain('  watermark     2026-10-01 12:02:00');
    expect(lines).toContain('  late          1 dropped by the watermark');
    expect(lines).toContain('  dead letters  2');
    expect(lines).toContain('  backlog left  4');
    expect(lines).toContain('  stopped by    the deadline: the next run continues where this one stopped');
    expect(lines).toContain('  output        s3://out/totals');
    // where the dead letters went, when the run says
    expect(runSummary(report(), { ...WHERE, deadLetters: 's3://cp/totals-dead-letter' })).toContain(
      '  dead letters  2 (in s3://cp/totals-dead-letter/malformed/)',
    );
    expect(lines).not.toContainEqual(expect.stringMatching(/^ {2}consumed/));
    const metered = runSummary(
      report({ consumed: { writeUnits: 1234, readUnits: 56, dynamodbRequests: 9, dynamodbRefusedWrites: 0, s3Requests: { put: 7, get: 8, free: 1 } } }),
      WHERE,
    );
    expect(metered).toContain('  consumed      1,234 DynamoDB write units, 56 read units; S3 7 PUT/LIST, 8 GET requests');
    expect(lines.slice(-2)).toEqual(['  emitted       1 row:', '    {"key":"a","total":19}']);
  });

  it('the summary shows the first 5 rows emitted of more', () => {
    const rows = Array.from({ length: 7 }, (_, i) => ({ n: i }));
    const r = report({ batches: [{ ...report().batches[0], rows: rows as never, numOutputRows: 7 }], rowsOut: 7 });
    const lines = runSummary(r, WHERE);
    expect(lines.slice(-6)).toEqual(['  emitted       the first 5 of 7 rows:', ...[0, 1, 2, 3, 4].map((n) => `    {"n":${n}}`)]);
  });
});
