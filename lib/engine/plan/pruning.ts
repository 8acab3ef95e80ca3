/**
 * What Spark's ColumnPruning leaves below a dropDuplicates: a Project over a Deduplicate goes
 * under it, so a column that is neither a key nor read after the operator is gone from its
 * child's output, event-time mark and all. operatorChain gives such a dedup only the marks that
 * survive (its late-row filter, its keys' expiry and `sluice explain` all read them there), and the
 * plan's checks ask the same question of the columns they count.
 */
import type { ChainedOperator, Marks } from './chain';
import type { StatefulSpec, StatelessStage } from './types';

/**
 * The marks a dropDuplicates finds on its input rows (Spark's WatermarkSupport.watermarkExpression
 * over findEventTimeColumn(child.output)): its marked input columns less the pruned ones, so that
 * such a dedup drops no late rows. dropDuplicatesWithinWatermark and every other operator keep all
 * their marks (the within-watermark expiry needs its column).
 */
export function dedupMarks(chain: readonly ChainedOperator[], i: number): Marks {
  const op = chain[i];
  if (op.spec.kind !== 'dedup' || op.spec.withinWatermark) return op.marks;
  const kept = keptBelowDedup(op, nextOnInput(chain, i));
  return new Map([...op.marks].filter(([c]) => kept(c)));
}

/** Whether a column reaches a dropDuplicates' input: one of its keys (all columns without a list), or read after it (ColumnPruning keeps it). */
export function keptBelowDedup(op: ChainedOperator, next: ChainedOperator | undefined): (c: string) => boolean {
  const st = op.spec as Extract<StatefulSpec, { kind: 'dedup' }>;
  return (c) => st.columns === null || st.columns.includes(c) || downstream(c, op.post, next);
}

/** The operator after chain[i] on the same input's pipeline (the one its output feeds), if any. */
export function nextOnInput(chain: readonly ChainedOperator[], i: number): ChainedOperator | undefined {
  return chain.slice(i + 1).find((o) => o.input === chain[i].input);
}

/** Whether `text` names column `c` (an expression stage's text: read as written, so a name inside a string literal counts too). */
function names(text: string, c: string): boolean {
  return new RegExp(`(^|[^A-Za-z0-9_])${c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^A-Za-z0-9_])`).test(text);
}

/**
 * Whether column `c` of an operator's output is read after it: by the stateless stages `post`
 * (a projection that leaves it out ends its life), else by the next operator of the pipeline
 * (an aggregation reads its keys and aggregated columns; another operator, a join or the sink
 * every column). A stage whose columns cannot be told (a function's filter or column) reads it.
 */
function downstream(c: string, post: readonly StatelessStage[], next: ChainedOperator | undefined): boolean {
  for (const s of post) {
    switch (s.kind) {
      case 'select':
        if (!s.columns.includes(c)) return false;
        break;
      case 'project': {
        const item = s.items.find((i) => (i.kind === 'window' ? i.window.column : i.kind === 'path' || i.kind === 'explode' ? null : i.column) === c);
        return item !== undefined;
      }
      case 'selectExpr':
        return s.items.some((t) => t.trim() === '*' || names(t, c));
      case 'filterExpr':
        if (names(s.text, c)) return true;
        break;
      case 'withColumnExpr':
        if (names(s.text, c)) return true;
        if (s.name === c) return false; // replaced
        break;
      case 'withColumn':
      case 'filter':
        return true;
      case 'extract':
        if (s.name === c) return false;
        break;
      case 'join':
      case 'watermark':
        return true;
    }
  }
  if (next === undefined || next.spec.kind !== 'aggregate') return true;
  const spec = next.spec;
  return spec.keys.some((k) => (k.kind === 'column' ? k.name : k.column) === c) || spec.aggs.some((a) => a.column === c || a.by === c);
}
