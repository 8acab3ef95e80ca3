/** What `join` takes, read into the plan's terms: the join type's spelling and the time range. */
import { InvalidOptionError, InvalidQueryError } from '../errors';
import { parseInterval } from '../duration';
import type { StaticJoinType, StreamJoinType, TimeRange } from '../plan/types';

/** The typed form of a time range: intervals as Spark writes them ('-10 seconds', '5 minutes'). */
export interface TimeRangeArg {
  readonly left: string;
  readonly right: string;
  readonly lower?: string;
  readonly upper?: string;
  readonly lowerStrict?: boolean;
  readonly upperStrict?: boolean;
}

/** Spark's join type names (any case, `_` ignored) to the types sluice runs. */
const JOIN_TYPES: Record<string, StaticJoinType | 'rightOuter' | 'fullOuter' | null> = {
  inner: 'inner',
  left: 'leftOuter',
  leftouter: 'leftOuter',
  semi: 'leftSemi',
  leftsemi: 'leftSemi',
  right: 'rightOuter',
  rightouter: 'rightOuter',
  outer: 'fullOuter',
  full: 'fullOuter',
  fullouter: 'fullOuter',
  anti: 'leftAnti',
  leftanti: 'leftAnti',
  cross: null,
};

/** The join type `type` names, or Spark's refusal (the stream is the left side). */
export function staticJoinType(type: string): StaticJoinType {
  const t = JOIN_TYPES[String(type).toLowerCase().replace(/_/g, '')];
  if (t === 'rightOuter') {
    throw new InvalidQueryError(
      'RightOuter join with a streaming DataFrame/Dataset on the left and a static DataFrame/DataSet on the right not supported: the stream is the left side, so use inner or leftOuter',
    );
  }
  if (t === 'fullOuter') {
    throw new InvalidQueryError(
      'FullOuter joins with streaming DataFrames/Datasets on the left and a static DataFrame/Dataset on the right is not supported: use leftOuter to keep every stream row',
    );
  }
  if (!t)
    throw new InvalidQueryError(`join type ${JSON.stringify(type)} is not supported by sluice: a stream-static join is inner, leftOuter, leftSemi or leftAnti`);
  return t;
}

/** The join type `type` names for a stream-stream join (Spark's spellings accepted). */
export function streamJoinType(type: string): StreamJoinType {
  const t = JOIN_TYPES[String(type).toLowerCase().replace(/_/g, '')];
  if (t === 'leftAnti')
    throw new InvalidQueryError(
      'Left anti joins with a streaming DataFrame/Dataset on the right are not supported: an anti join needs the right side whole, which only a static table is; join a static table, or use leftOuter with a time range and keep the rows whose right columns are null',
    );
  if (!t)
    throw new InvalidQueryError(
      `join type ${JSON.stringify(type)} is not supported by sluice for a stream-stream join: use inner, leftOuter, rightOuter, fullOuter or leftSemi`,
    );
  return t;
}

/** A signed interval ('-10 seconds'), months refused (they have no fixed length). */
function signedInterval(text: string, what: string): number {
  const { us, months } = parseInterval(text, what);
  if (months !== 0)
    throw new InvalidOptionError(`${what} "${text}" uses months or years, which have no fixed length: express it in days, hours or smaller units`);
  return us;
}

/** A join's time range in the plan's terms (µs), its bounds checked. */
export function parseTimeRange(t: TimeRangeArg): TimeRange {
  if (!t || typeof t.left !== 'string' || typeof t.right !== 'string') {
    throw new InvalidQueryError(
      `join timeRange ${JSON.stringify(t)}: give the two TIMESTAMP columns and the bounds, e.g. { left: 'clickTime', right: 'impressionTime', lower: '0 seconds', upper: '1 hour' }`,
    );
  }
  const lowerUs = t.lower === undefined ? null : signedInterval(t.lower, 'join timeRange lower');
  const upperUs = t.upper === undefined ? null : signedInterval(t.upper, 'join timeRange upper');
  if (lowerUs === null && upperUs === null)
    throw new InvalidQueryError(`join timeRange on ${t.left} and ${t.right} has neither lower nor upper: give at least one bound, e.g. upper: '1 hour'`);
  if (lowerUs !== null && upperUs !== null && lowerUs > upperUs) {
    throw new InvalidQueryError(
      `join timeRange on ${t.left} and ${t.right}: lower (${t.lower}) is after upper (${t.upper}), so no pair of rows could match: swap them`,
    );
  }
  return { left: t.left, right: t.right, lowerUs, upperUs, lowerStrict: t.lowerStrict === true, upperStrict: t.upperStrict === true };
}
