/**
 * foreachBatch: a user function receives each batch's rows, its batch ID and a context that can
 * run an effect at most once for this query and batch (Spark's foreachBatch, with the batch-ID
 * guard Spark leaves to the user as a helper).
 *
 *     sink.addBatch(N) ─▶ fn(rows, N, context)
 *                           context.runOnce('notify', effect):
 *                             guard.isDone(query, N, 'notify')?  yes ─▶ skip
 *                                                                no  ─▶ effect() ─▶ guard.markDone(...)
 *                           context.transactWithGuard('upsert', items):
 *                             one transaction: done-marker (only if absent) + items
 *
 * AT-LEAST-ONCE, PLAINLY: `runOnce` records completion AFTER the effect, because the record
 * cannot be committed atomically with an effect outside the guard's store. A crash (or a lost
 * response) between the effect and the record makes the replay of batch N run the effect again:
 *
 *     run 1:  isDone? no ─▶ POST /invoice (done at the callee) ─▶ ✗ crash before markDone
 *     run 2:  isDone? no ─▶ POST /invoice again                 ─▶ markDone
 *
 * So an external side effect (an HTTP call, an email, a message to a queue) is at-least-once
 * unless the callee is idempotent: pass it a key derived from the query and the batch (e.g.
 * `effectKey(context, 'notify')` as an Idempotency-Key header) so that it drops the repeat.
 * runOnce only narrows the window to "crashed between the effect and the record".
 * Exactly once holds for effects the guard's store can commit together with the marker:
 * `transactWithGuard` (DynamoDB writes in one TransactWriteItems with the marker).
 *
 * ORDER: the function gets the batch's rows sorted (by the key columns' values, then by content),
 * never in the order the operators emitted them: a replay emits the same rows in another order
 * (windows evicted from memory vs read back from the store), and a function that numbers, chunks
 * or names its effects by position would otherwise do something else on the replay.
 *
 * WHOLE: the function gets the whole batch, as Spark's foreachBatch does, so this sink has no
 * addBatchChunks and a stateless batch is collected for it (lib/engine/ports/sink.ts Sink).
 *
 * PIECES: each guarded effect that commits (runOnce recorded, transactWithGuard ran) is one
 * durable piece of the batch's write: `ctx.onPieceWritten(i)` is told after it, i = 0, 1, ...
 *
 * The ports: an `EffectGuard` (DynamoDB: lib/aws/dynamodb/effect-guard.ts; memory:
 * InMemoryEffectGuard below). `TxItem` is the guard store's own write type, e.g. DynamoDB's
 * TransactWriteItem; the engine never looks inside it.
 */
import { InvalidOptionError, SluiceError } from './errors';
import type { LeaseHandle, OutputRow, Sink, SinkContext } from './ports';

/** What identifies one effect: the query (its checkpoint's id), the batch and the effect's name. */
export interface EffectKey {
  readonly queryId: string;
  readonly batchId: number;
  readonly effect: string;
}

/** `ran`: the effect ran now. `skipped`: it was recorded as done by an earlier attempt. */
export type EffectOutcome = 'ran' | 'skipped';

export interface EffectGuard<TxItem = never> {
  readonly description: string;
  /** Whether `key` was recorded as done. Strongly consistent. */
  isDone(key: EffectKey): Promise<boolean>;
  /**
   * Record `key` as done. Recording a key that is already recorded is not an error
   * ('already-recorded'). Fenced on `lease` when given: throws LeaseLostError if the lease moved.
   */
  markDone(key: EffectKey, lease?: LeaseHandle): Promise<'recorded' | 'already-recorded'>;
  /**
   * Write `items` and the done-record of `key` atomically, only if `key` is not recorded yet.
   * Optional: guards whose store has no transactions leave it out.
   */
  transact?(key: EffectKey, items: TxItem[], lease?: LeaseHandle): Promise<EffectOutcome>;
  /** How long (ms) a done-record lives, when not forever (the sink's Sink.retentionMs). */
  readonly retentionMs?: number;
}

interface ForeachBatchContext<TxItem = never> {
  readonly batchId: number;
  readonly queryId: string;
  readonly queryName: string;
  readonly outputMode: SinkContext['outputMode'];
  readonly columns: string[];
  readonly keyColumns: string[];
  readonly lease?: LeaseHandle;
  /**
   * Run `effect` unless this query's batch already recorded `effectName` as done; record it after.
   * At-least-once for effects outside the guard's store (see the file comment). Effect names are
   * per batch: two calls with one name in one batch run the effect once.
   */
  runOnce(effectName: string, effect: () => Promise<void>): Promise<EffectOutcome>;
  /** Commit `items` together with the done-record of `effectName`, at most once: exactly once. */
  transactWithGuard(effectName: string, items: TxItem[]): Promise<EffectOutcome>;
  /** A stable key for the effect, to hand to an idempotent callee (an Idempotency-Key header). */
  effectKey(effectName: string): string;
}

export type ForeachBatchFunction<TxItem = never> = (rows: OutputRow[], batchId: number, context: ForeachBatchContext<TxItem>) => Promise<void>;

export interface ForeachBatchSinkOptions<TxItem = never> {
  readonly fn: ForeachBatchFunction<TxItem>;
  readonly guard: EffectGuard<TxItem>;
  /** @default 'foreachBatch' */
  readonly description?: string;
}

const EFFECT_NAME = /^[A-Za-z0-9_.:-]{1,100}$/;

export class ForeachBatchSink<TxItem = never> implements Sink {
  readonly description: string;
  private readonly fn: ForeachBatchFunction<TxItem>;
  private readonly guard: EffectGuard<TxItem>;

  constructor(opts: ForeachBatchSinkOptions<TxItem>) {
    if (typeof opts?.fn !== 'function') {
      throw new InvalidOptionError('ForeachBatchSink needs `fn`, an async function (rows, batchId, context) => { ... }');
    }
    if (!opts.guard || typeof opts.guard.isDone !== 'function' || typeof opts.guard.markDone !== 'function') {
      throw new InvalidOptionError('ForeachBatchSink needs `guard`, an EffectGuard (DynamoDbEffectGuard on AWS, InMemoryEffectGuard in tests)');
    }
    this.fn = opts.fn;
    this.guard = opts.guard;
    this.description = `${opts.description ?? 'foreachBatch'} (guard: ${opts.guard.description})`;
  }

  /** The guard's: a replay after its records expired would run the effects again. */
  get retentionMs(): number | undefined {
    return this.guard.retentionMs;
  }

  async addBatch(batchId: number, rows: OutputRow[], ctx: SinkContext): Promise<void> {
    const guard = this.guard;
    let pieces = 0;
    const pieceWritten = () => ctx.onPieceWritten?.(pieces++);
    const keyOf = (effectName: string): EffectKey => {
      if (typeof effectName !== 'string' || !EFFECT_NAME.test(effectName)) {
        throw new InvalidOptionError(
          `effect name ${JSON.stringify(effectName)} must be 1 to 100 of A-Z a-z 0-9 _ . : -, e.g. "notify-billing": it names the effect in the guard's records`,
        );
      }
      return { queryId: ctx.queryId, batchId, effect: effectName };
    };
    const context: ForeachBatchContext<TxItem> = {
      batchId,
      queryId: ctx.queryId,
      queryName: ctx.queryName,
      outputMode: ctx.outputMode,
      columns: ctx.columns,
      keyColumns: ctx.keyColumns,
      lease: ctx.lease,
      async runOnce(effectName, effect) {
        const key = keyOf(effectName);
        if (await guard.isDone(key)) return 'skipped';
        await effect();
        // A crash here repeats the effect on replay: at-least-once (see the file comment).
        if ((await guard.markDone(key, ctx.lease)) === 'recorded') pieceWritten();
        return 'ran';
      },
      async transactWithGuard(effectName, items) {
        const key = keyOf(effectName);
        if (!guard.transact) {
          throw new SluiceError(
            `the effect guard ${guard.description} cannot commit writes with its marker: use runOnce (at-least-once), or a guard with transactions such as DynamoDbEffectGuard`,
          );
        }
        const outcome = await guard.transact(key, items, ctx.lease);
        if (outcome === 'ran') pieceWritten();
        return outcome;
      },
      effectKey(effectName) {
        const k = keyOf(effectName);
        return effectKeyString(k);
      },
    };
    await this.fn(canonicalOrder(rows, ctx.keyColumns), batchId, context);
  }
}

/** The rows sorted by their key columns' values, then by their content: an order that depends only on the set of rows. */
function canonicalOrder(rows: readonly OutputRow[], keyColumns: readonly string[]): OutputRow[] {
  const sortable = rows.map((row) => ({ row, key: canonicalJson(keyColumns.map((c) => row[c] ?? null)), content: canonicalJson(row) }));
  sortable.sort((a, b) => compare(a.key, b.key) || compare(a.content, b.content));
  return sortable.map((s) => s.row);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** JSON with object keys sorted, at every depth. */
function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(',')}}`;
}

/** `<queryId>#<batchId>#<effect>`: how the guards name an effect's record. */
function effectKeyString(k: EffectKey): string {
  return `${k.queryId}#${k.batchId}#${k.effect}`;
}

/**
 * The in-memory twin, for unit tests: a set of done keys, and a transaction that applies items
 * (functions on a caller's state) only when the key is new.
 */
export class InMemoryEffectGuard implements EffectGuard<() => void> {
  readonly description = 'memory://effects';
  readonly done = new Set<string>();
  async isDone(key: EffectKey): Promise<boolean> {
    return this.done.has(effectKeyString(key));
  }
  async markDone(key: EffectKey): Promise<'recorded' | 'already-recorded'> {
    const k = effectKeyString(key);
    if (this.done.has(k)) return 'already-recorded';
    this.done.add(k);
    return 'recorded';
  }
  async transact(key: EffectKey, items: Array<() => void>): Promise<EffectOutcome> {
    const k = effectKeyString(key);
    if (this.done.has(k)) return 'skipped';
    for (const apply of items) apply();
    this.done.add(k);
    return 'ran';
  }
}
