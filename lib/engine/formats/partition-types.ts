/**
 * The type Spark gives a partition column the schema does not declare, from the folder values a
 * listing found (apache/spark PartitioningUtils.inferPartitionColumnValue and
 * resolvePartitions, with spark.sql.sources.partitionColumnTypeInference.enabled, the default):
 *
 *     one value    the first that parses whole: INT (Integer.parseInt), BIGINT (Long.parseLong),
 *                  DECIMAL(p,0) (an integer of up to 38 digits), DOUBLE (Double.parseDouble),
 *                  TIMESTAMP ("yyyy-MM-dd HH:mm:ss[.S]"), DATE ("yyyy-MM-dd"), else STRING;
 *                  `__HIVE_DEFAULT_PARTITION__` is a null, of no type
 *     the column   the values' types widened to a common one (INT < BIGINT < DECIMAL < DOUBLE,
 *                  DATE < TIMESTAMP); two that do not widen (a number and a date) give STRING,
 *                  as does a column of nulls only
 *
 * The values are the folder names' text after Hive's unescaping (file-rules.ts does it). Pure: the
 * S3 landing source uses it to name the type a query should declare (sluice fixes a query's
 * columns when it is built, before any listing: docs/sources.md "Partition columns").
 */
import { parseDate } from '../dates';
import type { DataType } from '../schema';
import { parseTimestamp } from '../timestamps';

/** Spark's name of a null partition value (a folder `col=__HIVE_DEFAULT_PARTITION__`). */
export const HIVE_DEFAULT_PARTITION = '__HIVE_DEFAULT_PARTITION__';

/** Spark's type of one partition value; null for the Hive null (it takes any type). */
export function inferPartitionValueType(text: string): DataType | null {
  if (JAVA_INT.test(text)) {
    const digits = significantDigits(text);
    if (digits.length <= 10) {
      const n = Number(text);
      if (n >= -(2 ** 31) && n <= 2 ** 31 - 1) return { type: 'INT' };
    }
    if (digits.length <= 19) {
      const n = BigInt(text.startsWith('+') ? text.slice(1) : text);
      if (n >= -(2n ** 63n) && n <= 2n ** 63n - 1n) return { type: 'LONG' };
    }
  }
  // java.math.BigDecimal with scale ≤ 0 and no exponent (a negative scale is refused by Spark's
  // Decimal): an integer too long for a BIGINT, of at most 38 digits
  if (/^[-+]?\d+$/.test(text)) {
    const p = Math.max(1, significantDigits(text).length);
    if (p <= 38) return { type: 'DECIMAL', precision: p, scale: 0 };
  }
  if (JAVA_DOUBLE.test(text)) return { type: 'DOUBLE' };
  if (PARTITION_TIMESTAMP.test(text) && parseTimestamp(text) !== null) return { type: 'TIMESTAMP' };
  if (PARTITION_DATE.test(text) && parseDate(text) !== null) return { type: 'DATE' };
  if (text === HIVE_DEFAULT_PARTITION) return null;
  return { type: 'STRING' };
}

/** The type of a partition column from all its values: each inferred, widened to a common type. */
export function inferPartitionColumnType(values: Iterable<string>): DataType {
  let t: DataType | null = null;
  for (const v of values) {
    const vt = inferPartitionValueType(v);
    if (vt === null) continue;
    t = t === null ? vt : widerPartitionType(t, vt);
    if (t.type === 'STRING') break;
  }
  return t ?? { type: 'STRING' };
}

/** Spark's findWiderTypeWithoutStringPromotionForTwo on the types inference gives, STRING when there is none. */
export function widerPartitionType(a: DataType, b: DataType): DataType {
  if (a.type === b.type) {
    return a.type === 'DECIMAL' ? { type: 'DECIMAL', precision: Math.max(a.precision!, b.precision!), scale: 0 } : a;
  }
  const ra = NUMERIC_RANK[a.type];
  const rb = NUMERIC_RANK[b.type];
  if (ra !== undefined && rb !== undefined) {
    if (a.type === 'DOUBLE' || b.type === 'DOUBLE') return { type: 'DOUBLE' };
    if (a.type === 'DECIMAL' || b.type === 'DECIMAL') {
      // an integral type is DECIMAL(10,0) (INT) or DECIMAL(20,0) (BIGINT) beside a decimal
      return { type: 'DECIMAL', precision: Math.min(38, Math.max(integralPrecision(a), integralPrecision(b))), scale: 0 };
    }
    return ra >= rb ? a : b;
  }
  const dates = new Set([a.type, b.type]);
  if (dates.has('DATE') && dates.has('TIMESTAMP')) return { type: 'TIMESTAMP' };
  return { type: 'STRING' };
}

/**
 * Java's Double.parseDouble of a folder's text (a declared DOUBLE or FLOAT partition column, as
 * Spark's castPartValueToDesiredType reads it): NaN, Infinity, an f/d suffix, blanks around;
 * undefined for text it refuses. (Hex floats, rare in folder names, are refused here.)
 */
export function javaParseDouble(text: string): number | undefined {
  if (!JAVA_DOUBLE.test(text)) return undefined;
  const t = text.replace(/^[\s\0-\x20]+|[\s\0-\x20]+$/g, '').replace(/[fFdD]$/, '');
  if (/^[-+]?0[xX]/.test(t)) return undefined;
  const n = Number(t.replace(/^\+/, ''));
  return Number.isNaN(n) && !/NaN$/.test(t) ? undefined : n;
}

/** Whether Java's Double.parseDouble reads `text` (hex floats included). */
export function isJavaDoubleText(text: string): boolean {
  return JAVA_DOUBLE.test(text);
}

/** Java's Integer.parseInt / Long.parseLong text: an optional sign, then ASCII digits. */
const JAVA_INT = /^[-+]?\d+$/;
/**
 * Java's Double.parseDouble text (FloatingDecimal): surrounding whitespace, a sign, NaN or
 * Infinity, or digits with a point and an exponent, an optional f/F/d/D suffix, or a hex float.
 */
const JAVA_DOUBLE =
  /^[\s\0-\x20]*[-+]?(NaN|Infinity|((\d+\.?\d*|\.\d+)([eE][-+]?\d+)?[fFdD]?)|(0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][-+]?\d+[fFdD]?))[\s\0-\x20]*$/;
/** Spark's timestampPartitionPattern "yyyy-MM-dd HH:mm:ss[.S]", parsed whole. */
const PARTITION_TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,9})?$/;
/** The DateFormatter's default "yyyy-MM-dd", parsed whole. */
const PARTITION_DATE = /^\d{4}-\d{2}-\d{2}$/;

const NUMERIC_RANK: Partial<Record<DataType['type'], number>> = { INT: 0, LONG: 1, DECIMAL: 2, DOUBLE: 3 };

function integralPrecision(t: DataType): number {
  return t.type === 'INT' ? 10 : t.type === 'LONG' ? 20 : t.precision!;
}

function significantDigits(text: string): string {
  return text.replace(/^[-+]?0*/, '');
}
