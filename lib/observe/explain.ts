/**
 * A query plan as text (Spark's `explain`, sluice's own layout): the source and the columns its
 * reader keeps, every stage and stateful operator in the order a batch runs them, each operator's
 * input columns, event-time columns and state, the other inputs (joined or unioned streams), and
 * the output's columns. `sluice explain <query-module>` prints it; `explain(plan)` returns it.
 */
import { ddlOf } from '../engine/ddl';
import { type ChainedOperator, operatorChain, outputColumns } from '../engine/plan/chain';
import { type ColumnInfo, columnsAfter, describeStaticTable } from '../engine/plan/columns';
import type { AggSpec, GroupKey, PlanInput, ProjectItem, QueryPlan, SourceSpec, StatefulSpec, StatelessStage, TimeRange } from '../engine/plan/types';
import { columnsRead } from '../engine/run/runtime';
import { formatDuration } from './format';

/** A column as `name TYPE` (a window or session window as WINDOW). */
function columnText(c: ColumnInfo): string {
  return `${c.name} ${c.window ? 'WINDOW' : ddlOf(c)}`;
}

function columnsText(cols: readonly ColumnInfo[]): string {
  return cols.map(columnText).join(', ');
}

function sourceText(source: SourceSpec): string {
  const where = source.path ?? '(location given at run time)';
  const options = Object.entries(source.options)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return `${source.kind === 'kinesis' ? 'Kinesis' : `Files (${source.format})`} ${where}${options ? `; ${options}` : ''}`;
}

function itemText(i: ProjectItem): string {
  switch (i.kind) {
    case 'column':
      return i.as === i.column ? i.column : `${i.column} AS ${i.as}`;
    case 'path':
      return `${i.path.text} AS ${i.as}${i.unread ? ' (not read after: not computed)' : ''}`;
    case 'window':
      return `window(${i.window.column}, ${i.window.text}) AS ${i.as}`;
    case 'explode':
      return `${i.position ? 'pos' : ''}explode${i.outer ? '_outer' : ''}(${i.path.text})${i.names ? ` AS (${i.names.join(', ')})` : ''}`;
    default:
      return `${i.kind}(${i.column}) AS ${i.as}`;
  }
}

/** One stateless stage, as a line. */
function stageText(st: StatelessStage): string {
  switch (st.kind) {
    case 'filter':
      return `Filter ${st.label} (a function)`;
    case 'filterExpr':
      return `Filter ${st.text}`;
    case 'select':
      return `Select ${st.columns.join(', ')}`;
    case 'project':
      return `Select ${st.items.map(itemText).join(', ')}`;
    case 'selectExpr':
      return `Select ${st.items.join(', ')}`;
    case 'withColumn':
      return `WithColumn ${st.name} ${st.dataType ? ddlOf(st.dataType) : st.type} (a function)`;
    case 'withColumnExpr':
      return `WithColumn ${st.name} = ${st.text}`;
    case 'extract':
      return `WithColumn ${st.name} = ${st.path.text}${st.unread ? ' (not read after: not computed)' : ''}`;
    case 'watermark':
      return `Watermark ${st.column} delay ${st.delayText}${st.gates?.length ? `; ${st.gates.length} filter conjunct(s) checked before it (Spark pushes them down)` : ''}`;
    case 'join':
      return `Join ${st.type} ${describeStaticTable(st.table)} on ${st.on.map((k) => (k.left === k.right ? k.left : `${k.left} = ${k.right}`)).join(', ')}${st.conditionExpr ? ` and ${st.conditionExpr.text}` : ''}`;
    case 'sort':
      return `Sort ${st.keys.map((k) => `${k.text}${k.desc ? ' DESC' : ''}${k.nullsFirst === !k.desc ? '' : k.nullsFirst ? ' NULLS FIRST' : ' NULLS LAST'}`).join(', ')} (each batch's whole output)`;
    case 'limit':
      return `Limit ${st.n} (each batch's whole output)`;
  }
}

function keyText(k: GroupKey): string {
  if (k.kind === 'column') return k.name;
  return `${k.kind === 'window' ? 'window' : 'session_window'}(${k.column}, ${k.text})`;
}

function aggText(a: AggSpec): string {
  const arg = a.column === undefined || a.column === '*' ? '*' : a.by === undefined ? a.column : `${a.column}, ${a.by}`;
  return `${a.fn}(${arg}) AS ${a.as}`;
}

/** A join's time range as Spark reads it, `left BETWEEN right + lower AND right + upper`: `it in [ct - 5m, ct]`. */
function rangeText(r: TimeRange): string {
  const bound = (us: number | null) => (us === null ? null : us === 0 ? r.right : `${r.right} ${us < 0 ? '-' : '+'} ${formatDuration(Math.abs(us) / 1000)}`);
  const lower = bound(r.lowerUs);
  const upper = bound(r.upperUs);
  return `${r.left} in ${lower === null ? '(-∞' : `${r.lowerStrict ? '(' : '['}${lower}`}, ${upper === null ? '∞)' : `${upper}${r.upperStrict ? ')' : ']'}`}`;
}

/** A stateful operator, as a line. */
function operatorText(st: StatefulSpec, inputs: readonly PlanInput[]): string {
  switch (st.kind) {
    case 'aggregate':
      return `Aggregate by ${st.keys.map(keyText).join(', ') || '(one group)'}: ${st.aggs.map(aggText).join(', ')}${st.windowFilter ? `; pairs kept by ${st.windowFilter.texts.join(' AND ')}` : ''}`;
    case 'dedup':
      return `${st.withinWatermark ? 'DropDuplicatesWithinWatermark' : 'DropDuplicates'} on ${st.columns?.join(', ') ?? 'every column'}`;
    case 'limit':
      return `GlobalLimit ${st.n} (the count passed so far in state)`;
    case 'streamJoin': {
      const on = st.on.map((k) => `${k.left} = ${k.right}`).join(' AND ');
      const range = st.timeRange ? `; ${rangeText(st.timeRange)}` : '';
      return `StreamJoin ${st.type} with ${inputs[st.input]?.name ?? `input ${st.input}`} on ${on}${range}${st.conditionExpr ? `; condition ${st.conditionExpr.text}` : ''}`;
    }
    case 'transformWithState':
      return `TransformWithState ${st.processorName} by ${st.keys.join(', ')}, ${st.timeMode} time`;
  }
}

function operatorLines(op: ChainedOperator, inputs: readonly PlanInput[]): string[] {
  const marks = [...op.marks].map(([c, d]) => `${c} (delay ${formatDuration(d)})`).join(', ');
  return [
    `Operator ${op.operatorId}: ${operatorText(op.spec, inputs)}`,
    `    takes: ${columnsText(op.inputColumns)}`,
    `    event time: ${marks || 'none (no watermark reaches it)'}`,
  ];
}

/** The plan as text (see the module's comment). */
export function explainPlan(plan: QueryPlan): string {
  const lines: string[] = [`== ${plan.name}: ${plan.outputMode} mode, trigger ${plan.trigger}, ${plan.statePartitions} state partition(s) ==`];
  const inputs = plan.inputs ?? [];
  const chain = operatorChain(plan).operators;
  const pipeline = (input: number | null, source: SourceSpec, stages: readonly StatelessStage[], indent: string) => {
    lines.push(`${indent}Source: ${sourceText(source)}`);
    lines.push(`${indent}    columns: ${columnsText(source.schema.columns)}`);
    for (const st of stages) lines.push(`${indent}${stageText(st)}`);
    for (const op of chain.filter((o) => o.input === input)) {
      if (op.spec.kind === 'streamJoin') {
        const other = inputs[op.spec.input];
        lines.push(`${indent}Input ${other.name} (joined):`);
        pipeline(op.spec.input, other.source, other.stages, `${indent}  `);
      }
      for (const line of operatorLines(op, inputs)) lines.push(`${indent}${line}`);
      for (const st of op.post) lines.push(`${indent}${stageText(st)}`);
    }
  };
  pipeline(null, plan.source, plan.stages, '');
  // (the reader of the first source parses only the columns the query reads, when they are known)
  const read = columnsRead(plan, plan.lateRows === 'dead-letter');
  if (read !== undefined) lines.splice(3, 0, `    the reader parses only: ${read.join(', ')}`);
  inputs.forEach((input, k) => {
    if (input.unionAt === undefined) return;
    const at = input.unionAt === 0 ? 'as read' : `after: ${stageText(plan.stages[input.unionAt - 1])}`;
    lines.push(`Input ${input.name} (unioned: its rows join the stream's ${at}):`);
    lines.push(`  Source: ${sourceText(input.source)}`);
    lines.push(`      columns: ${columnsText(input.source.schema.columns)}`);
    for (const st of input.stages) lines.push(`  ${stageText(st)}`);
    lines.push(`  then: ${columnsText(columnsAfter(input.source.schema.columns, input.stages))} (as input ${k + 2})`);
  });
  lines.push(`Output: ${columnsText(columnsAfter(outputColumns(plan), plan.post))}`);
  return `${lines.join('\n')}\n`;
}
