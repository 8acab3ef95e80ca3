/**
 * Spark's ColumnPruning for expression columns: a column a `selectExpr` item or `withColumn(name,
 * expr)` computes, which no later stage, operator or the output reads, is never computed. Spark
 * removes such an alias from its Project, so its expression never runs and raises no ANSI error:
 * `withColumn("r", "total / qty").groupBy("k").count()` counts a row whose qty is 0. Here the item
 * is evaluated as NULL of its type instead (the stage's columns and types stay as they are), so it
 * raises nothing and makes no dead letter.
 *
 * The same holds for a DataFrame `select` of a nested path (`lines[5]`: its index is not followed,
 * so it raises no INVALID_ARRAY_INDEX), a `withColumn` of a path, and a `withColumn(name, type,
 * fn)` whose function is then not called (Spark prunes an unused UDF too).
 *
 * What each stage reads is worked out backwards from the output (every column of it is read):
 * a filter function, a read `withColumn` function or a watermark with gates reads every column
 * (its function is opaque), as do a static join, a stream-stream join and transformWithState; an aggregation reads
 * its keys and its aggregates' columns, dropDuplicates its columns and what comes after it (within
the watermark, every column). Names
 * are compared in lower case (Spark resolves them without case) and a nested name counts its first
 * part and its whole text: when in doubt a column counts as read, which only computes more.
 * Only the first input's pipeline is pruned; a joined input's stages run as written.
 */
import { namesReadOf } from '../expr';
import type { OperatorStep, ProjectItem, StatefulSpec, StatelessStage } from './types';

/** The columns read from a point on, lower case; null: every column. */
type Read = ReadonlySet<string> | null;

function withNames(read: Read, names: Iterable<string> | null): Read {
  if (read === null || names === null) return null;
  const out = new Set(read);
  for (const n of names) out.add(n.toLowerCase());
  return out;
}

function withoutName(read: Read, name: string): Read {
  if (read === null) return null;
  const out = new Set(read);
  out.delete(name.toLowerCase());
  return out;
}

function isRead(read: Read, name: string): boolean {
  return read === null || read.has(name.toLowerCase());
}

/** The plan's first pipeline with its unread expression columns pruned (the same objects where nothing changed). */
export function pruneUnreadColumns(
  stages: readonly StatelessStage[],
  operators: readonly OperatorStep[],
): { stages: readonly StatelessStage[]; operators: readonly OperatorStep[] } {
  let read: Read = null;
  const ops = [...operators];
  for (let k = ops.length - 1; k >= 0; k--) {
    const post = pruneStages(ops[k].post, read);
    if (post.stages !== ops[k].post) ops[k] = { ...ops[k], post: post.stages };
    read = operatorReads(ops[k].spec, post.read);
  }
  const first = pruneStages(stages, read);
  const changed = first.stages !== stages || ops.some((op, k) => op !== operators[k]);
  return changed ? { stages: first.stages, operators: ops } : { stages, operators };
}

function pruneStages(stages: readonly StatelessStage[], after: Read): { stages: readonly StatelessStage[]; read: Read } {
  let read = after;
  let out: StatelessStage[] | null = null;
  for (let i = stages.length - 1; i >= 0; i--) {
    const { stage, before } = pruneStage(stages[i], read);
    if (stage !== stages[i]) {
      out ??= [...stages];
      out[i] = stage;
    }
    read = before;
  }
  return { stages: out ?? stages, read };
}

function pruneStage(stage: StatelessStage, after: Read): { stage: StatelessStage; before: Read } {
  switch (stage.kind) {
    case 'selectExpr': {
      const c = stage.compiled;
      const unread = c.columns.filter((col) => !isRead(after, col.name)).map((col) => col.name);
      // a generator's rows count whatever reads its columns: every item's reads stay then
      let before: Read = new Set<string>();
      c.columns.forEach((col, i) => {
        if (c.generates || isRead(after, col.name)) before = withNames(before, c.reads[i]);
      });
      return { stage: unread.length === 0 ? stage : { ...stage, compiled: c.pruned(new Set(unread)) }, before };
    }
    case 'withColumnExpr':
      if (isRead(after, stage.name)) return { stage, before: withNames(withoutName(after, stage.name), namesReadOf(stage.text)) };
      return { stage: { ...stage, compiled: { ...stage.compiled, evaluate: () => null } }, before: after };
    case 'filterExpr':
      return { stage, before: withNames(after, namesReadOf(stage.text)) };
    case 'select':
      if (stage.columns.some((c) => c.includes('*'))) return { stage, before: null };
      return {
        stage,
        before: withNames(
          new Set(),
          stage.columns.filter((c) => isRead(after, c)),
        ),
      };
    case 'project':
      return pruneProject(stage, after);
    case 'extract':
      if (isRead(after, stage.name)) return { stage, before: withNames(withoutName(after, stage.name), [stage.path.column]) };
      return { stage: stage.unread ? stage : { ...stage, unread: true }, before: withoutName(after, stage.name) };
    case 'withColumn':
      // an opaque function reads any column; one whose column nothing reads is not called (Spark prunes an unused UDF)
      if (isRead(after, stage.name)) return { stage, before: null };
      return { stage: { ...stage, fn: () => null }, before: withoutName(after, stage.name) };
    case 'watermark':
      return { stage, before: stage.gates?.length ? null : withNames(after, [stage.column]) };
    default:
      // a filter function, a static join: they may read any column
      return { stage, before: null };
  }
}

/** A DataFrame select: an unread path item is not followed (its index cannot fail), and reads nothing. */
function pruneProject(stage: Extract<StatelessStage, { kind: 'project' }>, after: Read): { stage: StatelessStage; before: Read } {
  // a generator's rows count whatever reads their columns: every item stays read then
  if (stage.items.some((i) => i.kind === 'explode')) return { stage, before: withNames(new Set(), stage.items.map(itemColumn)) };
  const read = stage.items.filter((i) => i.kind === 'explode' || isRead(after, i.as));
  let items: ProjectItem[] | null = null;
  stage.items.forEach((item, k) => {
    if (item.kind !== 'path' || item.unread || isRead(after, item.as)) return;
    items ??= [...stage.items];
    items[k] = { ...item, unread: true };
  });
  return { stage: items === null ? stage : { ...stage, items }, before: withNames(new Set(), read.map(itemColumn)) };
}

function itemColumn(item: ProjectItem): string {
  switch (item.kind) {
    case 'path':
    case 'explode':
      return item.path.column;
    case 'window':
      return item.window.column;
    default:
      return item.column;
  }
}

function operatorReads(spec: StatefulSpec, after: Read): Read {
  switch (spec.kind) {
    case 'aggregate':
      return withNames(new Set(), [
        ...spec.keys.flatMap((k) =>
          k.kind === 'column' ? [k.name] : k.kind === 'session' && k.gapColumn !== undefined ? [k.column, k.gapColumn] : [k.column],
        ),
        ...spec.aggs.flatMap((a) => [...(a.column === undefined || a.column === '*' ? [] : [a.column]), ...(a.by === undefined ? [] : [a.by])]),
      ]);
    case 'dedup':
      // within the watermark, a row's expiry also reads the event-time column, named nowhere here
      return spec.columns === null || spec.withinWatermark ? null : withNames(after, spec.columns);
    case 'limit':
      // rows pass as they are
      return after;
    default:
      return null;
  }
}
