/**
 * What each batch should touch in the state, computed from the input alone (JSON.parse and
 * arithmetic, none of the engine's code): the distinct (window, user) pairs of its rows, and the
 * pairs its watermark evicts, with Spark's rules as DESIGN.md states them (late rows filtered with
 * the previous batch's watermark, `<=` is late; eviction with the batch's own watermark; one
 * no-data batch at the end when the watermark moved).
 */
export interface ExpectedBatch {
  readonly batchId: number;
  readonly noData: boolean;
  readonly rows: number;
  /** Rows whose window ends at or before the previous batch's watermark. */
  readonly late: number;
  /** Distinct (window, user) pairs of the batch's non-late rows. */
  readonly pairs: number;
  /** Pairs in state whose window ends at or before the batch's watermark (append: emitted). */
  readonly evicted: number;
  /** pairs ∪ evicted: every state key the batch has a reason to write. */
  readonly touched: number;
  readonly batchWatermarkMs: number;
}

/** Event time of a generated line's "YYYY-MM-DD HH:MM:SS.mmm" (UTC), ms. */
export function eventTimeMs(text: string): number {
  return Date.parse(`${text.slice(0, 10)}T${text.slice(11)}Z`);
}

export function expectedBatches(files: ReadonlyArray<{ readonly body: string }>, filesPerBatch: number, windowMs: number, delayMs: number): ExpectedBatch[] {
  const out: ExpectedBatch[] = [];
  const live = new Map<string, number>(); // pair -> window end
  let wm = 0; // the next batch's own (evicting) watermark
  let lastWm = 0; // the previous batch's watermark: filters late rows
  const evict = (batchWm: number, touched: Set<string>) => {
    let evicted = 0;
    let extra = 0;
    for (const [k, end] of live) {
      if (end > batchWm) continue;
      evicted++;
      if (!touched.has(k)) extra++;
      live.delete(k);
    }
    return { evicted, extra };
  };
  for (let b = 0; b * filesPerBatch < files.length; b++) {
    const lateWm = lastWm;
    const batchWm = wm;
    const pairs = new Set<string>();
    let rows = 0;
    let late = 0;
    let maxT = -Infinity;
    for (const f of files.slice(b * filesPerBatch, (b + 1) * filesPerBatch)) {
      for (const line of f.body.split('\n')) {
        if (line === '') continue;
        const o = JSON.parse(line) as { user: string; event_time: string };
        rows++;
        const t = eventTimeMs(o.event_time);
        if (t > maxT) maxT = t;
        const start = t - (((t % windowMs) + windowMs) % windowMs);
        const end = start + windowMs;
        if (end <= lateWm) {
          late++;
          continue;
        }
        const k = `${start}|${o.user}`;
        pairs.add(k);
        live.set(k, end);
      }
    }
    const { evicted, extra } = evict(batchWm, pairs);
    out.push({ batchId: b, noData: false, rows, late, pairs: pairs.size, evicted, touched: pairs.size + extra, batchWatermarkMs: batchWm });
    lastWm = batchWm;
    if (maxT !== -Infinity) wm = Math.max(batchWm, maxT - delayMs);
  }
  if (out.length && wm > lastWm) {
    const { evicted } = evict(wm, new Set());
    out.push({ batchId: out.length, noData: true, rows: 0, late: 0, pairs: 0, evicted, touched: evicted, batchWatermarkMs: wm });
  }
  return out;
}
