/**
 * toPlan: a frame's source, stages and operators as a checked QueryPlan (the builders'
 * `writeStream...plan()` calls it), with the sources' rate limits read from their options.
 */
import { pruneUnreadColumns } from './column-pruning';
import { InvalidOptionError } from '../errors';
import type { BatchLimits } from '../ports';
import { checkPlan } from './analysis';
import type { OperatorStep, OutputMode, QueryPlan, SourceSpec, StatelessStage } from './types';
import { resolveName } from '../resolve-name';

// ----------------------------------------------------------------------------------- validation

/** The most state partitions a query may have. */
export const MAX_STATE_PARTITIONS = 256;

const LIMIT_OPTIONS: Record<string, keyof BatchLimits> = {
  maxFilesPerTrigger: 'maxFilesPerTrigger',
  maxBytesPerTrigger: 'maxBytesPerTrigger',
  maxRecordsPerTrigger: 'maxRecordsPerTrigger',
};

/** A positive whole-number option (a rate limit, statePartitions), or the refusal naming it. */
export function positiveIntOption(key: string, v: unknown): number {
  // a string as Spark reads it (Scala's toInt / toLong, Java's parseInt): a sign and digits, no
  // spaces, no exponent, no fraction (' 5', '1e3' and '5.0' are refused)
  const n = typeof v === 'string' ? (/^[+-]?[0-9]+$/.test(v) ? Number(v) : Number.NaN) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) {
    throw new InvalidOptionError(`option ${key}=${JSON.stringify(v)} must be a positive integer, e.g. .option('${key}', 100)`);
  }
  return n;
}

/**
 * The options among `names`, whatever the case they were given in (Spark's data source options are
 * a case-insensitive map: `maxfilespertrigger` is `maxFilesPerTrigger`), under their own names.
 */
export function optionsByName<V>(options: Readonly<Record<string, V>>, names: readonly string[]): Record<string, V> {
  const out: Record<string, V> = {};
  for (const [k, v] of Object.entries(options)) {
    const name = resolveName(names, k, (n) => n);
    if (name !== undefined && (out[name] === undefined || name === k)) out[name] = v;
  }
  return out;
}

/** A source's rate limits, from its options. */
export function sourceLimits(source: SourceSpec, trigger: 'availableNow' | 'once' = 'availableNow'): BatchLimits {
  const limits: { -readonly [K in keyof BatchLimits]: BatchLimits[K] } = {};
  const options = optionsByName(source.options, Object.keys(LIMIT_OPTIONS));
  if (source.kind === 'files' && options.maxFilesPerTrigger !== undefined && options.maxBytesPerTrigger !== undefined) {
    // Spark's FileStreamOptions (SPARK-46641): a file source takes one of the two limits
    throw new InvalidOptionError(
      "Options 'maxFilesPerTrigger' and 'maxBytesPerTrigger' can't be both set at the same time on a file source, as in Spark: keep one of them",
    );
  }
  // Trigger.Once runs one batch with everything: Spark ignores the rate limits for it.
  if (trigger === 'once') return limits;
  for (const [k, v] of Object.entries(options)) limits[LIMIT_OPTIONS[k]] = positiveIntOption(k, v);
  return limits;
}

/**
 * The checked plan of a frame (a StreamFrame's source, stages, operators and joined inputs); throws
 * InvalidQueryError with Spark's rule and the fix (analysis.ts checkPlan).
 */
export function toPlan(
  frame: Required<Pick<QueryPlan, 'source' | 'stages' | 'operators' | 'inputs'>>,
  outputMode: OutputMode,
  trigger: 'availableNow' | 'once',
  name: string,
): QueryPlan {
  const limits = sourceLimits(frame.source, trigger);
  const inputs = frame.inputs.map((i) => ({ ...i, limits: sourceLimits(i.source, trigger) }));
  const pipeline = outputMode === 'append' ? limitOperators(frame.stages, frame.operators) : { stages: frame.stages, operators: frame.operators };
  checkPlan({ source: frame.source, ...pipeline, inputs }, outputMode);
  // expression columns nothing reads are not computed (Spark's ColumnPruning)
  const { stages, operators: ops } = pruneUnreadColumns(pipeline.stages, pipeline.operators);
  const last = ops[ops.length - 1];
  return {
    name,
    source: frame.source,
    ...(inputs.length ? { inputs } : {}),
    stages,
    operators: ops,
    stateful: ops[0]?.spec ?? null,
    post: last ? last.post : [],
    outputMode,
    trigger,
    limits,
    lateRows: 'drop',
    statePartitions: 1,
  };
}

/**
 * The query's pipeline with each limit() stage made a limit operator where it stands (Spark plans
 * a limit in append mode as StreamingGlobalLimitExec, a stateful operator counting the rows it
 * passed): the stages after it become the operator's post stages.
 */
function limitOperators(stages: readonly StatelessStage[], operators: readonly OperatorStep[]): { stages: StatelessStage[]; operators: OperatorStep[] } {
  const split = (list: readonly StatelessStage[]): { before: StatelessStage[]; limits: OperatorStep[] } => {
    const i = list.findIndex((s) => s.kind === 'limit');
    if (i < 0) return { before: [...list], limits: [] };
    const rest = split(list.slice(i + 1));
    const stage = list[i] as Extract<StatelessStage, { kind: 'limit' }>;
    return { before: list.slice(0, i), limits: [{ spec: { kind: 'limit', n: stage.n }, post: rest.before }, ...rest.limits] };
  };
  const head = split(stages);
  const ops: OperatorStep[] = [...head.limits];
  for (const op of operators) {
    const post = split(op.post);
    ops.push({ spec: op.spec, post: post.before }, ...post.limits);
  }
  return { stages: head.before, operators: ops };
}
