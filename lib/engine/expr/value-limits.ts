/**
 * How large a value an expression may build for one row. Spark's limit for an array is
 * ByteArrayMethods.MAX_ROUNDED_ARRAY_LENGTH (2,147,483,632 elements), checked by sequence,
 * array_repeat, array_insert...; a string has no check of its own and fails the query when the JVM
 * cannot allocate it. A Node.js process dies outright (a V8 fatal error, not an exception) on an
 * array of about 2^27 elements, and a Lambda runs out of memory well before either: a record whose
 * count argument is two billion would then crash every run that reads it, and the pipeline would
 * never get past it. So here one array or string an expression builds holds at most
 * MAX_BUILT_LENGTH elements or characters, and a row that asks for more is a row error (a dead
 * letter naming the function, the length and the limit; the batch goes on). A departure from
 * Spark for values between this limit and Spark's (FORMAT-3's departure 2 covers the rest).
 */
import { SparkRowError } from './errors';

/** Spark's largest array (ByteArrayMethods.MAX_ROUNDED_ARRAY_LENGTH). */
const SPARK_MAX_ARRAY_LENGTH = 2147483632;

/** The most elements of an array, or characters of a string, one expression builds for a row: 2^24. */
export const MAX_BUILT_LENGTH = 16_777_216;

/**
 * Throws the row error of an array of `n` elements when it is over the limit: Spark's
 * COLLECTION_SIZE_LIMIT_EXCEEDED past Spark's, the same class with sluice's limit past sluice's.
 */
export function checkArrayLength(n: number | bigint, fn: string, sub: 'PARAMETER' | 'FUNCTION' = 'PARAMETER'): void {
  if (n <= MAX_BUILT_LENGTH) return;
  const spark = n > SPARK_MAX_ARRAY_LENGTH;
  throw new SparkRowError(
    `COLLECTION_SIZE_LIMIT_EXCEEDED.${sub}`,
    spark
      ? `Can't create array with ${n} elements which exceeding the array size limit ${SPARK_MAX_ARRAY_LENGTH}, unsuccessful try to create arrays in the function \`${fn}\`.`
      : `Can't create array with ${n} elements which exceeding the array size limit ${MAX_BUILT_LENGTH} (sluice's limit for one value; Spark's is ${SPARK_MAX_ARRAY_LENGTH}, but a Lambda would run out of memory first) in the function \`${fn}\`: check the row's count or bounds`,
  );
}

/** Throws the row error of a string of `n` characters when it is over the limit. */
export function checkStringLength(n: number, fn: string): void {
  if (n <= MAX_BUILT_LENGTH) return;
  throw new SparkRowError(
    'STRING_SIZE_LIMIT_EXCEEDED',
    `Can't create a string of ${n} characters in the function \`${fn}\`: one value holds at most ${MAX_BUILT_LENGTH} (sluice's limit; Spark fails the query when the JVM cannot allocate it): check the row's length or count argument`,
  );
}
