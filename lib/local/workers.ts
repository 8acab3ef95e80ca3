/**
 * Local partitioned runs on worker threads (`sluice run --workers N`, `sluice conformance
 * --workers N`): N threads, each with its own AWS clients and ports (lib/local/task-worker.ts),
 * run the plan/read/partition/commit tasks the driver (runPartitioned) hands out, as the Lambdas
 * of the deployed state machine do. A query's plan holds functions, so each thread builds it
 * again from its recipe: the module that exports it, or a conformance case.
 */
import { Worker } from 'node:worker_threads';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InjectedCrash, InvalidOptionError, SluiceError } from '../engine/errors';
import type { TaskEvent, TaskHandler, TaskResult } from '../engine/schedule/driver';
import type { QueryPlan } from '../engine/plan/types';
import type { AwsConnection } from '../aws/config';
import type { PipelineConfig } from '../aws/pipeline';
import { caseToPlan, type ConformanceCase, linesStaticTable } from '../conformance/case';
import { compileSql } from '../engine/sql';

/** How a worker builds the plan: from the module that exports it, or from a conformance case. */
export type PlanRecipe =
  | { readonly kind: 'module'; readonly path: string }
  | {
      readonly kind: 'case';
      readonly case: ConformanceCase;
      readonly name: string;
      readonly statePartitions?: number;
      readonly step?: number;
      /** Each static table's rows as the case writes them (recordText): a number JSON.parse would round stays exact in the worker. */
      readonly staticLines?: Readonly<Record<string, readonly string[]>>;
    };

export interface WorkerInit {
  readonly connection: AwsConnection;
  readonly config: PipelineConfig;
  readonly plan: PlanRecipe;
  readonly maxSplits?: number;
}

/** A task posted to a worker, with what the run it belongs to injects. */
export interface TaskMessage {
  readonly id: number;
  readonly event: TaskEvent;
  /** A crash plan (`point[@batch]`), in front of the worker's ports for this run (tests, SLUICE_CRASH_AT). */
  readonly crash?: string;
  /** The runner's clock offset (a conformance run jumps it past a crashed run's lease). */
  readonly clockOffsetMs?: number;
  /** The processing time of the run's new batches (a conformance step's `clock`, FORMAT-4). */
  readonly processingTimeMs?: number;
  /** Another pipeline for this run than the pool's (a benchmark's next run, on its own checkpoint, on the same warm threads). */
  readonly config?: PipelineConfig;
}

/** The plan a recipe gives (in a worker, and in the parent to check it once). */
export function planFromRecipe(recipe: PlanRecipe): QueryPlan {
  if (recipe.kind === 'case') {
    const lines = recipe.staticLines;
    const tables =
      lines === undefined ? undefined : (name: string, t: { schema: string; rows: Array<Record<string, unknown>> }) => linesStaticTable(t, lines[name] ?? []);
    const plan = caseToPlan(recipe.case, recipe.name, tables, recipe.step ?? 0);
    return recipe.statePartitions === undefined ? plan : { ...plan, statePartitions: recipe.statePartitions };
  }
  return loadQueryModule(recipe.path);
}

/**
 * The query a module exports (default export, or `query` / `plan`: a QueryPlan or a function
 * returning one); a .ts module goes through tsx; a .sql module is a query in SQL (docs/sql.md),
 * compiled to its plan. `sluice run` and the worker threads load it so.
 */
export function loadQueryModule(modulePath: string): QueryPlan {
  const file = resolve(modulePath);
  if (!existsSync(file))
    throw new InvalidOptionError(
      `query module ${modulePath} does not exist (looked for ${file}): give the path of the .ts, .js or .sql file of the query, e.g. src/query.ts`,
    );
  if (/\.sql$/i.test(file)) {
    try {
      return compileSql(readFileSync(file, 'utf8'));
    } catch (e) {
      // the file's name in front of the line and column the error gives
      if (e instanceof SluiceError) e.message = `${modulePath}: ${e.message}`;
      throw e;
    }
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  if (/\.[cm]?tsx?$/.test(file) && !require.extensions['.ts']) require('tsx/cjs');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const mod = require(file);
  const exported = mod.default ?? mod.query ?? mod.plan;
  const plan = typeof exported === 'function' ? exported() : exported;
  if (!plan || typeof plan !== 'object' || !('stateful' in plan) || !('source' in plan)) {
    throw new InvalidOptionError(
      `${modulePath} does not export a query: export default a QueryPlan (readStream...writeStream...plan()) or a function returning one`,
    );
  }
  return plan as QueryPlan;
}

/** The worker's entry: the .ts file through tsx in this repository, the compiled .js in the package. */
function workerEntry(): { file: string; execArgv: string[] } {
  const js = join(__dirname, 'task-worker.js');
  if (existsSync(js)) return { file: js, execArgv: [] };
  return { file: join(__dirname, 'task-worker.ts'), execArgv: ['--require', 'tsx/cjs'] };
}

/** N worker threads and a TaskHandler that gives each task to the next idle one. */
export class WorkerPool {
  private readonly workers: Worker[] = [];
  private readonly idle: Worker[] = [];
  private readonly waiting: Array<(w: Worker) => void> = [];
  private readonly pending = new Map<number, { resolve: (r: TaskResult) => void; reject: (e: Error) => void }>();
  private nextId = 0;

  constructor(
    readonly size: number,
    init: WorkerInit,
  ) {
    if (!Number.isInteger(size) || size < 1 || size > 64)
      throw new InvalidOptionError(`--workers ${size} must be a whole number from 1 to 64: one per core is a good start`);
    const { file, execArgv } = workerEntry();
    for (let i = 0; i < size; i++) {
      const w = new Worker(file, { workerData: init, execArgv });
      w.on(
        'message',
        (m: { id: number; result?: TaskResult; error?: { name: string; message: string; retriable?: boolean; point?: string; batchId?: number } }) => {
          const p = this.pending.get(m.id);
          this.pending.delete(m.id);
          this.release(w);
          if (!p) return;
          // (an injected crash stays one across the thread boundary: the runner tells it from a failure)
          if (m.error)
            p.reject(
              m.error.name === 'InjectedCrash'
                ? new InjectedCrash(m.error.point ?? '?', m.error.batchId ?? -1)
                : new SluiceError(m.error.message, { retriable: m.error.retriable ?? false }),
            );
          else p.resolve(m.result!);
        },
      );
      w.on('error', (e) => {
        for (const [id, p] of this.pending) {
          this.pending.delete(id);
          p.reject(e);
        }
      });
      this.workers.push(w);
      this.idle.push(w);
    }
  }

  private release(w: Worker): void {
    const next = this.waiting.shift();
    if (next) next(w);
    else this.idle.push(w);
  }

  /**
   * An idle worker: `preferred` if it is idle, else the first idle one, else the first to finish.
   * (A partition task goes to the thread that ran that partition last time, when it can: that
   * thread's state cache holds the pages the partition's last commit wrote.)
   */
  private take(preferred?: number): Promise<Worker> {
    const at = preferred === undefined ? -1 : this.idle.indexOf(this.workers[preferred % this.workers.length]);
    const w = at >= 0 ? this.idle.splice(at, 1)[0] : this.idle.shift();
    if (w) return Promise.resolve(w);
    return new Promise((res) => this.waiting.push(res));
  }

  /** The pool as a TaskHandler for runPartitioned; `run` says what the run injects (a crash, a clock offset). */
  handler(run: { crash?: string; clockOffsetMs?: number; processingTimeMs?: number; config?: PipelineConfig } = {}): TaskHandler {
    return async (event: TaskEvent) => {
      const w = await this.take(event.action === 'partition' ? event.partition : undefined);
      const id = this.nextId++;
      return new Promise<TaskResult>((resolve, reject) => {
        this.pending.set(id, { resolve, reject });
        const msg: TaskMessage = { id, event, ...run };
        w.postMessage(msg);
      });
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
