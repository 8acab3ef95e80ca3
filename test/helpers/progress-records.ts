/**
 * Progress records built by hand (lib/engine/progress.ts) for the tests of `sluice status` and the
 * live line: a few figures in, a whole StreamingProgress out.
 */
import type { StreamingProgress } from '../../lib/engine/progress';

export interface RecordFigures {
  batchId: number;
  runId?: string;
  /** Batch start, epoch ms. */
  startMs: number;
  durationMs?: number;
  rowsIn?: number;
  rowsOut?: number;
  watermarkMs?: number;
  stateRows?: number;
  late?: number;
  deadLetters?: number;
  backlogFiles?: number;
  backlogBytes?: number;
  noData?: boolean;
}

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export function progressRecord(f: RecordFigures): StreamingProgress {
  const durationMs = f.durationMs ?? 1000;
  const rowsIn = f.rowsIn ?? 0;
  return {
    id: 'query-1',
    runId: f.runId ?? `run-${f.batchId}`,
    name: 'totals',
    timestamp: new Date(f.startMs).toISOString(),
    batchId: f.batchId,
    batchDuration: durationMs,
    numInputRows: rowsIn,
    inputRowsPerSecond: 0,
    processedRowsPerSecond: (rowsIn * 1000) / durationMs,
    durationMs: { triggerExecution: durationMs },
    eventTime: { watermark: new Date(f.watermarkMs ?? 0).toISOString() },
    stateOperators:
      f.stateRows === undefined
        ? []
        : [
            {
              operatorName: 'stateStoreSave',
              numRowsTotal: f.stateRows,
              numRowsUpdated: 0,
              numRowsRemoved: 0,
              numRowsDroppedByWatermark: f.late ?? 0,
              commitTimeMs: 0,
              memoryUsedBytes: 0,
            },
          ],
    sources: [
      {
        description: 's3://landing/events',
        startOffset: null,
        endOffset: null,
        latestOffset: null,
        numInputRows: rowsIn,
        inputRowsPerSecond: 0,
        processedRowsPerSecond: 0,
        metrics: f.backlogFiles === undefined ? {} : { files: f.backlogFiles, ...(f.backlogBytes !== undefined ? { bytes: f.backlogBytes } : {}) },
      },
    ],
    sink: { description: 's3://out', numOutputRows: f.rowsOut ?? 0 },
    sluice: { replay: false, noData: f.noData ?? false, numDeadLetters: f.deadLetters ?? 0, numLateRowsKept: 0 },
  };
}
