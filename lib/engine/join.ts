/**
 * Stream-static joins (FORMAT-2 "Stream-static joins"), as Spark runs them: each chunk's stream
 * rows joined with the static table's rows as a batch join would; stateless.
 *
 *   table read whole (load, once per run) ─▶ index by the right keys ─┐
 *   table looked up (lookup of the chunk's distinct keys) ─▶ index ───┤
 *   chunk rows ─▶ key of each row (null in a key: no match) ──────────┴▶ inner / leftOuter / leftSemi / leftAnti
 */
import { InvalidOptionError } from './errors';
import type { Row, StaticTableReader, StaticTables } from './ports';
import type { JoinStage, QueryPlan, StatelessStage, StaticTableSpec } from './plan/types';
import { describeStaticTable } from './plan/columns';
import { holds, pairRow } from './predicate';

/** The key of a list of values (null when one is null: equal means equal and non-null); windows by start and end. */
function joinKey(values: readonly unknown[]): string | null {
  let out = '';
  for (const v of values) {
    if (v === null || v === undefined) return null;
    if (typeof v === 'object') {
      const w = v as { start: number; end: number };
      out += `w${w.start},${w.end}\u0000`;
    } else out += `${typeof v === 'string' ? 's' : 'v'}${String(v)}\u0000`;
  }
  return out;
}

/** The rows of `rows`, indexed by the key of `columns`. */
function indexRows(rows: readonly Row[], columns: readonly string[]): Map<string, Row[]> {
  const index = new Map<string, Row[]>();
  for (const r of rows) {
    const k = joinKey(columns.map((c) => r[c]));
    if (k === null) continue;
    const list = index.get(k);
    if (list) list.push(r);
    else index.set(k, [r]);
  }
  return index;
}

/** The static tables of one run: each opened once, a table read whole loaded once. */
export class JoinTables {
  private readonly readers = new Map<string, { reader: StaticTableReader; loaded?: Promise<Map<string, Row[]>> }>();

  constructor(private readonly tables: StaticTables | undefined) {}

  /** Refuses, before any run, a plan joining a table that no port can open. */
  static check(plan: Pick<QueryPlan, 'stages' | 'operators' | 'inputs'>, tables: StaticTables | undefined): void {
    if (tables) return;
    for (const s of planStages(plan)) if (s.kind === 'join' && s.table.kind !== 'rows') noPort(s.table);
  }

  /** The joined rows of one chunk through `stage`. */
  async join(stage: JoinStage, rows: readonly Row[]): Promise<Row[]> {
    const open = this.open(stage);
    const rightKeys = lookupOrder(stage);
    const leftKeys = rightKeys.map((r) => stage.on.find((k) => k.right === r)!.left);
    let index: Map<string, Row[]>;
    if (open.reader.lookup && stage.table.kind !== 'rows') {
      const keys = new Map<string, unknown[]>();
      for (const r of rows) {
        const values = leftKeys.map((c) => r[c]);
        const k = joinKey(values);
        if (k !== null && !keys.has(k)) keys.set(k, values);
      }
      index = keys.size ? indexRows(await open.reader.lookup([...keys.values()]), rightKeys) : new Map();
    } else {
      open.loaded ??= loadIndex(open.reader, rightKeys);
      index = await open.loaded;
    }
    return joinRows(stage, rows, index, leftKeys);
  }

  private open(stage: JoinStage) {
    let open = this.readers.get(stage.id);
    if (!open) {
      open = { reader: this.reader(stage.table) };
      this.readers.set(stage.id, open);
    }
    return open;
  }

  private reader(spec: StaticTableSpec): StaticTableReader {
    if (spec.kind === 'rows') return { description: 'staticTable.rows', load: async () => [...spec.rows] };
    if (!this.tables) noPort(spec);
    const reader = this.tables!.open(spec);
    if (!reader.load && !reader.lookup)
      throw new InvalidOptionError(`static table ${reader.description} has neither load nor lookup: a StaticTableReader needs one`);
    return reader;
  }
}

function noPort(spec: StaticTableSpec): never {
  throw new InvalidOptionError(
    `the query joins the static table ${describeStaticTable(spec)}, but the executor has no staticTables port: build it with buildExecutor (lib/aws/pipeline.ts) or pass staticTables`,
  );
}

/** The right key columns in the order a lookup table takes them (its key), else `on`'s. */
function lookupOrder(stage: JoinStage): string[] {
  return stage.table.kind === 'dynamodb' ? [...stage.table.key] : stage.on.map((k) => k.right);
}

async function loadIndex(reader: StaticTableReader, rightKeys: readonly string[]): Promise<Map<string, Row[]>> {
  if (!reader.load) {
    throw new InvalidOptionError(`static table ${reader.description} can only be looked up by key: join it on its key columns`);
  }
  return indexRows(await reader.load(), rightKeys);
}

function joinRows(stage: JoinStage, rows: readonly Row[], index: Map<string, Row[]>, leftKeys: readonly string[]): Row[] {
  const using = new Set(stage.on.filter((k) => k.using).map((k) => k.right));
  const rightCols = stage.table.schema.columns.map((c) => c.name).filter((c) => !using.has(c));
  const out: Row[] = [];
  for (const l of rows) {
    const k = joinKey(leftKeys.map((c) => l[c]));
    let matches = k === null ? undefined : index.get(k);
    if (matches && stage.condition.length) matches = matches.filter((r) => stage.condition.every((p) => holds(p, l, r)));
    const checks = stage.conditionExpr?.pair;
    if (matches && checks?.length) matches = matches.filter((r) => checks.every((c) => c.test(pairRow(l, r))));
    const matched = matches !== undefined && matches.length > 0;
    if (stage.type === 'leftSemi' || stage.type === 'leftAnti') {
      // semi: the rows with a match; anti: those without (a null key matches nothing, so it stays)
      if (matched === (stage.type === 'leftSemi')) out.push(l);
      continue;
    }
    if (matched) {
      for (const r of matches!) {
        const row: Row = { ...l };
        for (const c of rightCols) row[c] = r[c] ?? null;
        out.push(row);
      }
    } else if (stage.type === 'leftOuter') {
      const row: Row = { ...l };
      for (const c of rightCols) row[c] = null;
      out.push(row);
    }
  }
  return out;
}

/** Every stateless stage of a plan: before the first operator and after each one, on every input. */
export function planStages(plan: Pick<QueryPlan, 'stages' | 'operators' | 'inputs'>): StatelessStage[] {
  const out = [...plan.stages, ...plan.operators.flatMap((o) => o.post)];
  for (const input of plan.inputs ?? []) out.push(...input.stages, ...input.operators.flatMap((o) => o.post));
  return out;
}
