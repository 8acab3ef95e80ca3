/**
 * The engine alone: MicroBatchExecutor on the in-memory ports (lib/engine/memory.ts).
 */
import { MicroBatchExecutor, type RunReport } from '../lib/engine/executor';
import { compileLineParser } from '../lib/engine/json-scan';
import { InMemoryCheckpoint, InMemoryFileSource, InMemorySink, InMemoryStateStore } from '../lib/engine/memory';
import type { DeadLetter, Json, ReadResult, Row, Sink, StateStore } from '../lib/engine/ports';
import type { Schema } from '../lib/engine/schema';
import { CountingStateStore } from './counting';
import { benchPlan } from './query';

/**
 * InMemoryFileSource with its lines parsed by compileLineParser (lib/engine/json-scan.ts) instead
 * of parseJsonLine: what the engine would do if the sources used the scanner. Bench-only.
 */
export class ScannerFileSource extends InMemoryFileSource {
  private readonly scan: (line: string) => ReturnType<ReturnType<typeof compileLineParser>>;
  constructor(schema: Schema) {
    super(schema);
    this.scan = compileLineParser(schema);
  }
  async *readChunks(_id: number, start: Json | null, end: Json): AsyncIterable<ReadResult> {
    const s = start ? (start as { lastKey: string }).lastKey : '';
    const t = (end as { lastKey: string }).lastKey;
    for (const f of this.files) {
      if (f.key <= s || f.key > t) continue;
      const rows: Row[] = [];
      const deadLetters: DeadLetter[] = [];
      const body = f.body;
      const lines = body.split('\n');
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i];
        if (line.trim() === '') continue;
        const r = this.scan(line);
        if (r.ok) rows.push(r.row);
        else deadLetters.push({ source: { file: f.key, line: i + 1 }, raw: line, reason: r.reason });
      }
      yield { rows, deadLetters, bytes: body.length };
    }
  }
}

export interface EngineRun {
  readonly seconds: number;
  readonly cpuSeconds: number;
  readonly report: RunReport;
  readonly state: CountingStateStore;
  /** process.memoryUsage() after each batch. */
  readonly memoryAfterBatch: Array<{ batchId: number; rss: number; heapUsed: number }>;
}

export async function runEngine(
  files: ReadonlyArray<{ readonly key: string; readonly body: string }>,
  opts: { maxFilesPerTrigger: number; sink?: Sink; state?: StateStore; scanner?: boolean; onBatch?: () => void },
): Promise<EngineRun> {
  const plan = benchPlan(opts.maxFilesPerTrigger);
  const source = opts.scanner ? new ScannerFileSource(plan.source.schema) : new InMemoryFileSource(plan.source.schema);
  // Keys are generated in order; `add` would re-sort after every file.
  for (const f of files) source.files.push(f as { key: string; body: string });
  const state = new CountingStateStore(opts.state ?? new InMemoryStateStore());
  const memoryAfterBatch: EngineRun['memoryAfterBatch'] = [];
  const executor = new MicroBatchExecutor({
    plan,
    source,
    checkpoint: new InMemoryCheckpoint(),
    state,
    sink: opts.sink ?? new InMemorySink(),
    log: (e) => {
      if (e.event !== 'batch') return;
      const m = process.memoryUsage();
      memoryAfterBatch.push({ batchId: e.batchId as number, rss: m.rss, heapUsed: m.heapUsed });
      opts.onBatch?.();
    },
  });
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const report = await executor.run();
  const seconds = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  return { seconds, cpuSeconds: (c.user + c.system) / 1e6, report, state, memoryAfterBatch };
}
