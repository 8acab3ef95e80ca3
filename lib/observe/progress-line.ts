/**
 * `sluice run`'s live line on a terminal: one line, rewritten in place after each batch, cleared
 * when the run ends. `progressLine` renders it (pure); `LiveLine` writes it to a stream that is a
 * TTY and does nothing on any other stream (a pipe, a file, CI logs).
 */
import { clearLine, cursorTo } from 'node:readline';
import type { RunReport } from '../engine/run/types';
import type { StreamingProgress } from '../engine/progress';
import { formatCount, formatDuration, formatTime } from './format';
import { batchStatus, formatBacklog } from './status';

export interface ProgressLineContext {
  /** Wall-clock time now (epoch ms). */
  readonly nowMs: number;
  /** The run's deadline (epoch ms), when it has one (--max-duration). */
  readonly deadlineMs?: number;
  /** Batches done so far in this run (counted by the caller). */
  readonly batchesDone?: number;
  /** Cut the line to this many characters (a terminal's columns), with an ellipsis. */
  readonly width?: number;
}

/** e.g. `batch 12 (3 this run) · 4,210 rows/s · watermark 2026-10-01 12:31:00 · backlog 3 files · 8m 12s left` */
export function progressLine(p: StreamingProgress, ctx: ProgressLineContext): string {
  const b = batchStatus(p, 1);
  const rate =
    typeof p.processedRowsPerSecond === 'number' ? p.processedRowsPerSecond : b.rowsIn !== null && b.durationMs ? (b.rowsIn * 1000) / b.durationMs : null;
  const parts = [
    `batch ${b.batchId}${ctx.batchesDone !== undefined ? ` (${ctx.batchesDone} this run)` : ''}${b.noData ? ' no data' : ''}`,
    `${rate === null ? '–' : formatCount(rate)} rows/s`,
    `watermark ${b.watermark ? formatTime(b.watermark) : '–'}`,
    `backlog ${formatBacklog(b.backlog)}`,
  ];
  if (ctx.deadlineMs !== undefined) parts.push(`${formatDuration(Math.max(0, ctx.deadlineMs - ctx.nowMs))} left`);
  const line = parts.join(' · ');
  if (ctx.width === undefined || line.length <= ctx.width) return line;
  return ctx.width <= 1 ? line.slice(0, Math.max(0, ctx.width)) : `${line.slice(0, ctx.width - 1)}…`;
}

/** What LiveLine needs of a stream: process.stdout, or a test's writable that claims to be a TTY. */
export interface LineStream extends NodeJS.WritableStream {
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/**
 * The live line on `stream` when it is a TTY; on any other stream every method does nothing but
 * `above`, which writes its text as a plain line.
 */
export class LiveLine {
  private shown = false;
  private last: string | null = null;
  private ended = false;
  readonly live: boolean;

  /** `live`: draw the line (default: when the stream is a TTY). */
  constructor(
    private readonly stream: LineStream,
    live = stream.isTTY === true,
  ) {
    this.live = live;
  }

  /** Replaces the line with `text` (cut to the terminal's width, so it never wraps). */
  update(text: string): void {
    if (!this.live || this.ended) return;
    const width = this.stream.columns;
    const cut = width && text.length >= width ? `${text.slice(0, Math.max(0, width - 2))}…` : text;
    cursorTo(this.stream, 0);
    this.stream.write(cut);
    clearLine(this.stream, 1);
    this.shown = true;
    this.last = text;
  }

  /** Writes `text` (to `to`, e.g. stderr) as a line of its own above the live line, and draws the line again. */
  above(text: string, to: NodeJS.WritableStream = this.stream): void {
    const wasShown = this.shown;
    this.clear();
    to.write(`${text}\n`);
    if (wasShown && this.last !== null) this.update(this.last);
  }

  /** Removes the line, leaving the cursor at the start of the empty line. */
  clear(): void {
    if (!this.live || !this.shown) return;
    cursorTo(this.stream, 0);
    clearLine(this.stream, 0);
    this.shown = false;
  }

  /** Clears the line for good: later updates draw nothing. */
  end(): void {
    this.clear();
    this.ended = true;
  }
}

/** What the run's output needs besides the report: where things are, and how long the run took. */
export interface RunWhere {
  readonly output: string;
  readonly checkpoint: string;
  /** Where malformed records (`malformed/`) and kept late rows (`late/`) go, when the run writes them. */
  readonly deadLetters?: string;
  /** The command that reads them back (`sluice show ... <query-module>`), printed last. */
  readonly readBack?: string;
  readonly elapsedMs: number;
}

const STOPPED_BY: Record<RunReport['stoppedBy'], string> = {
  done: 'done: everything available when the run started was processed',
  deadline: 'the deadline: the next run continues where this one stopped',
  'lease-held': "another run holding the query's lease: nothing was done",
};

/** The few lines `sluice run` ends with on a terminal or in a log (not with --json). */
export function runSummary(report: RunReport, where: RunWhere, shownRows = 5): string[] {
  const noData = report.batches.filter((b) => b.noData).length;
  const batches = `${formatCount(report.batches.length)} ${report.batches.length === 1 ? 'batch' : 'batches'}${noData ? ` (${noData} without data)` : ''}`;
  const rows = report.batches.flatMap((b) => b.rows);
  const lines = [
    `sluice: ${report.queryName} ran ${batches} in ${formatDuration(where.elapsedMs)}`,
    `  rows          ${formatCount(report.rowsIn)} in, ${formatCount(report.rowsOut)} out`,
    `  watermark     ${report.watermarkMs > 0 ? formatTime(report.watermark) : '– (none yet)'}`,
    `  late          ${formatCount(report.droppedByWatermark)} dropped by the watermark`,
    `  dead letters  ${formatCount(report.deadLetters)}${where.deadLetters ? ` (${report.deadLetters > 0 ? 'in' : 'would go to'} ${where.deadLetters.replace(/\/?$/, '/')}malformed/)` : ''}`,
    `  backlog left  ${formatCount(report.backlogLeft)}`,
    `  stopped by    ${STOPPED_BY[report.stoppedBy]}`,
    `  output        ${where.output}`,
    `  checkpoint    ${where.checkpoint}`,
    ...(where.readBack ? [`  read back     ${where.readBack}`] : []),
  ];
  const c = report.consumed;
  if (c) {
    lines.push(
      `  consumed      ${formatCount(c.writeUnits)} DynamoDB write units, ${formatCount(c.readUnits)} read units; S3 ${formatCount(c.s3Requests.put)} PUT/LIST, ${formatCount(c.s3Requests.get)} GET requests`,
    );
  }
  if (report.message) lines.push(`  note          ${report.message}`);
  for (const w of report.warnings ?? []) lines.push(`  warning       ${w}`);
  if (rows.length) {
    lines.push(
      `  emitted       ${rows.length > shownRows ? `the first ${shownRows} of ${formatCount(rows.length)} rows` : `${rows.length === 1 ? '1 row' : `${rows.length} rows`}`}:`,
    );
    for (const r of rows.slice(0, shownRows)) lines.push(`    ${JSON.stringify(r)}`);
  }
  return lines;
}

/** The machine-readable run report of `sluice run --json`: the report, each batch's rows, and the batches' progress records. */
function runReportJson(report: RunReport, progress: readonly StreamingProgress[]): string {
  const { batches, ...summary } = report;
  return JSON.stringify(
    { ...summary, batches: batches.map((b) => ({ batchId: b.batchId, noData: b.noData, rowsIn: b.numInputRows, rows: b.rows })), progress },
    null,
    2,
  );
}

export interface RunDisplayOptions {
  /** Where the line, the summary and the JSON go (process.stdout). The live line only when it is a TTY. */
  readonly out: LineStream;
  /** Where log events go (process.stderr). */
  readonly err: NodeJS.WritableStream;
  /** Print the machine-readable report instead of the summary, and no live line. */
  readonly json: boolean;
  readonly deadlineMs?: number;
  readonly now?: () => number;
}

/** Log events the live line and the summary already show; on a terminal they are not printed again. */
const SHOWN_LIVE = new Set(['batch', 'run-finished']);

/**
 * The output of one `sluice run`: `onProgress` and `log` go to the executor, `finish` prints the
 * summary (or the JSON). On a TTY without --json, a live line is drawn after each batch, log events
 * other than the ones it shows are written above it, and it is cleared before the summary.
 */
export function createRunDisplay(opts: RunDisplayOptions) {
  const now = opts.now ?? Date.now;
  const line = new LiveLine(opts.out, !opts.json && opts.out.isTTY === true);
  const progress: StreamingProgress[] = [];
  return {
    live: line.live,
    onProgress: (p: StreamingProgress): void => {
      progress.push(p);
      line.update(progressLine(p, { nowMs: now(), deadlineMs: opts.deadlineMs, batchesDone: progress.length }));
    },
    log: (event: Record<string, unknown>): void => {
      if (line.live && SHOWN_LIVE.has(String(event.event))) return;
      line.above(JSON.stringify(event), opts.err);
    },
    /** Clears the live line (the run failed: the error follows). */
    abort: (): void => line.end(),
    finish: (report: RunReport, where: RunWhere): void => {
      line.end();
      opts.out.write(`${opts.json ? runReportJson(report, progress) : runSummary(report, where).join('\n')}\n`);
    },
  };
}
