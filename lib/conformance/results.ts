/**
 * What a conformance case produced, step by step, read back from what a sink durably holds, and
 * its comparison with the case's expectations by FORMAT-3's output rules: integers exactly, doubles
 * to 1e-9 relative, decimals and dates as their exact text (a decimal's scale is part of it: "0.30"
 * is not "0.3"), timestamps by instant, nested values element by element, rows as multisets.
 */
import type { Json, OutputRow } from '../engine/ports';
import type { QueryPlan } from '../engine/plan/types';
import { parseTimestamp } from '../engine/timestamps';
import type { RunReport } from '../engine/run/types';
import type { ConformanceCase } from './case';

export interface StepResult {
  rows: OutputRow[];
  watermark: string;
  /** A number; in a FORMAT-2 pipeline case a list, one per stateful stage in plan order. */
  stateRows: number | number[];
  droppedByWatermark: number;
  /** FORMAT-2 pipeline cases: rows dropped as late per stateful stage, ordered like stateRows. */
  droppedByStage?: number[];
  batches: Array<{ batchId: number; rows: OutputRow[] }>;
  /** FORMAT-3: the dead letters written during the run (the runner on S3 always measures them). */
  deadLetters?: number;
  /** FORMAT-3: their reasons, in input order. */
  deadLetterReasons?: string[];
  /** FORMAT-4: the timers registered after the run (a transformWithState case). */
  timers?: number;
  /** FORMAT-4: the error the run failed with (then the step is the case's last). */
  error?: string;
}

export interface CaseResult {
  name: string;
  steps?: StepResult[];
  error?: string;
  /**
   * With a crash point: in how many steps the crash fired (a point the case never reaches, such as
   * mid-sink on a sink written in one piece, fires in none). Not part of the printed result.
   */
  crashesFired?: number;
}

/**
 * A step's result from the batches it ran (with the rows the sink holds for each): in complete
 * mode the rows of the last batch that wrote any, otherwise every batch's rows.
 */
export function stepFromBatches(
  plan: Pick<QueryPlan, 'outputMode'>,
  batches: Array<{ batchId: number; rows: OutputRow[] }>,
  run: { watermark: string; stateRows: number; droppedByWatermark: number },
): StepResult {
  let rows: OutputRow[];
  if (plan.outputMode === 'complete') {
    const written = batches.filter((b) => b.rows.length > 0);
    rows = written.length ? written[written.length - 1].rows : [];
  } else rows = batches.flatMap((b) => b.rows);
  return { rows, watermark: run.watermark, stateRows: run.stateRows, droppedByWatermark: run.droppedByWatermark, batches };
}

/**
 * A FORMAT-2 pipeline case's result carries stateRows as a list and always has droppedByStage,
 * one entry per stateful stage in plan order: the run's figures per operator (RunReport's
 * stateRowsByOperator, the step's late rows per operator).
 */
export function asPipelineStep(
  step: StepResult,
  perStage: { stateRows?: readonly number[]; droppedByStage: readonly number[] },
  order: readonly number[],
): StepResult {
  if (Array.isArray(step.stateRows)) return step;
  // per-operator figures in run order, listed in the format's order (case.ts caseStageOrder)
  const stateRows = perStage.stateRows
    ? order.map((i) => perStage.stateRows![i] ?? 0)
    : order.length
      ? [step.stateRows, ...new Array<number>(order.length - 1).fill(0)]
      : [];
  const droppedByStage = order.map((i) => perStage.droppedByStage[i] ?? 0);
  return { ...step, stateRows, droppedByStage };
}

/** The step result from a run report and the rows the sink durably holds for its batches. */
export function stepResult(plan: QueryPlan, report: RunReport, sinkRows: Map<number, OutputRow[]>): StepResult {
  const batches = report.batches.map((b) => ({ batchId: b.batchId, rows: sinkRows.get(b.batchId) ?? [] }));
  return stepFromBatches(plan, batches, report);
}

/** The late rows of a run's batches per operator, summed (BatchReport.droppedByOperator). */
export function droppedByStageInReport(report: RunReport): number[] {
  const out = new Array<number>(report.stateRowsByOperator?.length ?? 0).fill(0);
  for (const b of report.batches) (b.droppedByOperator ?? []).forEach((n, i) => (out[i] += n));
  return out;
}

type ProgressOperators = { stateOperators?: Array<{ numRowsDroppedByWatermark?: number }> } | null;

/** Rows a batch dropped as late per stateful operator, in plan order, from its progress report. */
export function droppedByStageInProgress(progress: Json | null): number[] {
  return ((progress as ProgressOperators)?.stateOperators ?? []).map((o) => o.numRowsDroppedByWatermark ?? 0);
}

/** Adds a batch's per-operator figures into a step's. */
export function addPerStage(total: number[], batch: readonly number[]): void {
  batch.forEach((n, i) => (total[i] = (total[i] ?? 0) + n));
}

function isTimestampText(v: unknown): v is string {
  return typeof v === 'string' && /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}/.test(v) && parseTimestamp(v) !== null;
}

function valuesEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return false;
  if (typeof a === 'number' && typeof b === 'number') {
    if (Number.isNaN(a) && Number.isNaN(b)) return true;
    // integers (BIGINT, INT, counts) exactly; the tolerance is for doubles' last bits
    if (Number.isSafeInteger(a) && Number.isSafeInteger(b)) return false;
    const scale = Math.max(Math.abs(a), Math.abs(b));
    return Math.abs(a - b) <= 1e-9 * scale;
  }
  if (isTimestampText(a) && isTimestampText(b)) return parseTimestamp(a) === parseTimestamp(b);
  if (typeof a === 'object' && typeof b === 'object') {
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    const ka = Object.keys(a as object);
    const kb = Object.keys(b as object);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => k in (b as object) && valuesEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return false;
}

function multisetEqual(actual: readonly unknown[], expected: readonly unknown[]): boolean {
  if (actual.length !== expected.length) return false;
  const used = new Array(actual.length).fill(false);
  for (const e of expected) {
    const i = actual.findIndex((a, idx) => !used[idx] && valuesEqual(a, e));
    if (i < 0) return false;
    used[i] = true;
  }
  return true;
}

/** Mismatches between a step's result and its expectations, as readable lines. */
function compareStep(result: StepResult, expect: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const show = (v: unknown) => JSON.stringify(v);
  if ('rows' in expect && !multisetEqual(result.rows, expect.rows as unknown[])) {
    problems.push(`rows: expected ${show(expect.rows)}, got ${show(result.rows)}`);
  }
  if ('watermark' in expect && !valuesEqual(result.watermark, expect.watermark)) {
    problems.push(`watermark: expected ${show(expect.watermark)}, got ${show(result.watermark)}`);
  }
  if ('timers' in expect && result.timers !== expect.timers) problems.push(`timers: expected ${show(expect.timers)}, got ${show(result.timers)}`);
  if ('error' in expect) {
    const want = String(expect.error);
    if (result.error === undefined) problems.push(`error: expected the run to fail with ${show(want)}, but it succeeded`);
    else if (!result.error.toLowerCase().includes(want.toLowerCase())) problems.push(`error: expected an error containing ${show(want)}, got: ${result.error}`);
  } else if (result.error !== undefined) problems.push(`error: the run failed: ${result.error}`);
  for (const k of ['stateRows', 'droppedByWatermark', 'droppedByStage'] as const) {
    if (k in expect && show(result[k]) !== show(expect[k])) problems.push(`${k}: expected ${show(expect[k])}, got ${show(result[k])}`);
  }
  if ('deadLetters' in expect || 'deadLetterErrors' in expect) {
    if (result.deadLetters === undefined)
      problems.push('deadLetters: this runner does not read the dead letters back: run the case with the S3 runner (sluice conformance check)');
    else {
      if ('deadLetters' in expect && result.deadLetters !== expect.deadLetters)
        problems.push(`deadLetters: expected ${show(expect.deadLetters)}, got ${show(result.deadLetters)} (${show(result.deadLetterReasons)})`);
      if ('deadLetterErrors' in expect) {
        const want = expect.deadLetterErrors as string[];
        const got = result.deadLetterReasons ?? [];
        const ok = want.length === got.length && want.every((w, i) => deadLetterMatches(got[i], w));
        if (!ok) problems.push(`deadLetterErrors: expected ${show(want)}, got reasons ${show(got)}`);
      }
    }
  }
  if ('batches' in expect) {
    const eb = expect.batches as Array<{ batchId: number; rows: unknown[] }>;
    const ok =
      eb.length === result.batches.length && eb.every((b, i) => b.batchId === result.batches[i].batchId && multisetEqual(result.batches[i].rows, b.rows));
    if (!ok) problems.push(`batches: expected ${show(eb)}, got ${show(result.batches)}`);
  }
  return problems;
}

/** FORMAT-3: an error class must begin the reason in brackets; another text must be in it (case-insensitive). */
function deadLetterMatches(reason: string | undefined, want: string): boolean {
  if (reason === undefined) return false;
  if (/^[A-Z_.]+$/.test(want)) return reason.startsWith(`[${want}]`);
  return reason.toLowerCase().includes(want.toLowerCase());
}

export function compareCase(c: ConformanceCase, r: CaseResult): string[] {
  if (c.expectError !== undefined) {
    if (!r.error) return [`expected the query to be refused with an error containing ${JSON.stringify(c.expectError)}, but it was accepted`];
    if (!r.error.toLowerCase().includes(c.expectError.toLowerCase())) return [`expected an error containing ${JSON.stringify(c.expectError)}, got: ${r.error}`];
    return [];
  }
  if (r.error) return [`error: ${r.error}`];
  const out: string[] = [];
  c.steps.forEach((s, i) => {
    const res = r.steps?.[i];
    if (!res) out.push(`step ${i + 1}: no result`);
    else for (const p of compareStep(res, s.expect)) out.push(`step ${i + 1}: ${p}`);
  });
  return out;
}
