/**
 * Patterns compiled for matching: a LIKE pattern as a RegExp (Spark's escapeLikeRegex rules), and a
 * Java regular expression translated by java-regex.ts (RLIKE, regexp_*, split), with its group
 * count and names kept beside the compiled RegExp and patterns given per row cached.
 */
import type { Analyzer } from './analyze';
import { SparkRowError } from './errors';
import { translateJavaRegex } from './java-regex';

/**
 * A LIKE pattern as a regex: `%` any text, `_` one character, the escape character before `%`, `_` or
 * itself for that character. As Spark's escapeLikeRegex, the escape character before anything else is
 * INVALID_FORMAT.ESC_IN_THE_MIDDLE and at the end INVALID_FORMAT.ESC_AT_THE_END (thrown as a SparkRowError).
 */
export function likeRegex(pattern: string, escapeChar: string): RegExp {
  let out = '';
  const chars = Array.from(pattern);
  const quote = (c: string) => c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    if (c === escapeChar) {
      if (i + 1 >= chars.length) {
        throw new SparkRowError(
          'INVALID_FORMAT.ESC_AT_THE_END',
          `The format is invalid: '${pattern}'. A LIKE pattern may not end with its escape character '${escapeChar}'; double it ('${escapeChar}${escapeChar}') to match it`,
        );
      }
      const n = chars[++i];
      if (n !== '%' && n !== '_' && n !== escapeChar) {
        throw new SparkRowError(
          'INVALID_FORMAT.ESC_IN_THE_MIDDLE',
          `The format is invalid: '${pattern}'. The escape character '${escapeChar}' may only precede '%', '_' or itself, not '${n}'; double it ('${escapeChar}${escapeChar}') to match it`,
        );
      }
      out += quote(n);
    } else if (c === '%') out += '[\\s\\S]*';
    else if (c === '_') out += '[\\s\\S]';
    else out += quote(c);
  }
  return new RegExp(`^${out}$`, 'u');
}

/** Each compiled Java pattern's number of capturing groups (Java's groupCount()). */
const GROUP_COUNTS = new WeakMap<RegExp, { groups: number; names: Record<string, number> }>();
/** Patterns given per row (not literals), compiled once each. */
const ROW_PATTERNS = new Map<string, RegExp>();

/**
 * A Java regular expression (Spark's RLIKE, regexp_extract, regexp_replace, split) as a JS RegExp,
 * translated by java-regex.ts so that it matches what Java's would; a pattern Java refuses, or one
 * with no faithful translation, is INVALID_PARAMETER_VALUE.PATTERN (at analysis for a literal).
 */
export function javaRegex(source: string, az: Analyzer | null, pos: number, flags = ''): RegExp {
  const key = `${flags}/${source}`;
  if (az === null) {
    const hit = ROW_PATTERNS.get(key);
    if (hit !== undefined) return hit;
  }
  let re: RegExp;
  try {
    const t = translateJavaRegex(source);
    re = new RegExp(t.source, t.flags + flags);
    GROUP_COUNTS.set(re, { groups: t.groups, names: t.names });
  } catch (e) {
    const err = new SparkRowError(
      'INVALID_PARAMETER_VALUE.PATTERN',
      `The value of parameter(s) \`regexp\` is invalid: '${source}' (${(e as Error).message}); fix the regular expression`,
    );
    if (az !== null) throw az.fail('INVALID_PARAMETER_VALUE.PATTERN', err.message.replace(/^\[[^\]]+\] /, ''), pos);
    throw err;
  }
  if (az === null) {
    if (ROW_PATTERNS.size >= 256) ROW_PATTERNS.clear();
    ROW_PATTERNS.set(key, re);
  }
  return re;
}

/** The number of capturing groups of a pattern compiled by javaRegex. */
export function javaGroupCount(re: RegExp): number {
  return GROUP_COUNTS.get(re)?.groups ?? 0;
}

/** The named groups of a pattern compiled by javaRegex, with their numbers. */
export function javaGroupNames(re: RegExp): Record<string, number> {
  return GROUP_COUNTS.get(re)?.names ?? {};
}
