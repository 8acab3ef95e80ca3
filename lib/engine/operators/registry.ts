/**
 * Which operator runs a plan's stateful step: the one place that knows every operator, so a new
 * operator touches this file and its own (operator.ts holds the contract they implement).
 */
import { compileAgg } from '../aggregates';
import type { SessionKey, StatefulSpec } from '../plan/types';
import { AggregateOperator } from './aggregate';
import { DedupOperator } from './dedup';
import { LimitOperator } from './limit';
import type { OperatorConfig, StatefulOperator } from './operator';
import { SessionOperator } from './session';
import { StreamJoinOperator } from './stream-join';
import { TransformWithStateOperator } from './transform-with-state';

export function createOperator(spec: StatefulSpec, cfg: OperatorConfig): StatefulOperator {
  if (spec.kind === 'dedup') return new DedupOperator(spec, cfg);
  if (spec.kind === 'limit') return new LimitOperator(spec.n, cfg);
  if (spec.kind === 'transformWithState') return new TransformWithStateOperator(spec, cfg);
  if (spec.kind === 'streamJoin') {
    if (!cfg.join) throw new Error(`operator ${cfg.operatorId}: a stream-stream join needs its sides (operatorChain's join)`);
    return new StreamJoinOperator(spec, cfg.join, cfg);
  }
  const session = spec.keys.find((k): k is SessionKey => k.kind === 'session');
  const aggs = spec.aggs.map((a) =>
    compileAgg(
      a,
      cfg.inputColumns.find((c) => c.name === a.column),
      a.by === undefined ? undefined : cfg.inputColumns.find((c) => c.name === a.by),
    ),
  );
  if (session) return new SessionOperator(spec.keys, aggs, session, cfg);
  return new AggregateOperator(spec.keys, aggs, cfg, spec.windowFilter);
}
