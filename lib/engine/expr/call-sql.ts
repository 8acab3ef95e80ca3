/**
 * Spark's SQL text of a function call (a call's name without AS, and the text messages quote).
 * Most calls print as `name(args)`; the ones here print otherwise: a prettyName in capitals (SQRT(4);
 * an alias keeps its own, pow, sign, ceiling, ln), an argument Spark adds (round(2.5, 0),
 * LOG(E(), 10)), or an operator's form (isnull(a) is (a IS NULL), if(...) is (IF(...))).
 */

const FORMS: Readonly<Record<string, (args: readonly string[], quote: (text: string) => string) => string>> = {
  sqrt: (a) => `SQRT(${a.join(', ')})`,
  cbrt: (a) => `CBRT(${a.join(', ')})`,
  exp: (a) => `EXP(${a.join(', ')})`,
  ...Object.fromEntries(
    [
      'sin',
      'cos',
      'tan',
      'cot',
      'sec',
      'csc',
      'asin',
      'acos',
      'atan',
      'atan2',
      'sinh',
      'cosh',
      'tanh',
      'asinh',
      'acosh',
      'atanh',
      'degrees',
      'radians',
      'pi',
      'e',
    ].map((f) => [f, (a: readonly string[]) => `${f.toUpperCase()}(${a.join(', ')})`]),
  ),
  log10: (a) => `LOG10(${a.join(', ')})`,
  log2: (a) => `LOG2(${a.join(', ')})`,
  log: (a) => (a.length === 1 ? `LOG(E(), ${a[0]})` : `LOG(${a.join(', ')})`),
  power: (a) => `POWER(${a.join(', ')})`,
  signum: (a) => `SIGNUM(${a.join(', ')})`,
  // (with a scale: RoundCeil / RoundFloor, named ceil / floor)
  ceil: (a) => (a.length === 1 ? `CEIL(${a[0]})` : `ceil(${a.join(', ')})`),
  floor: (a) => (a.length === 1 ? `FLOOR(${a[0]})` : `floor(${a.join(', ')})`),
  round: (a) => `round(${a[0]}, ${a[1] ?? '0'})`,
  bround: (a) => `bround(${a[0]}, ${a[1] ?? '0'})`,
  isnull: (a) => (a.length === 1 ? `(${a[0]} IS NULL)` : `isnull(${a.join(', ')})`),
  isnotnull: (a) => (a.length === 1 ? `(${a[0]} IS NOT NULL)` : `isnotnull(${a.join(', ')})`),
  if: (a) => `(IF(${a.join(', ')}))`,
  // the arguments Spark fills in (sql-expression-schema.md: locate(bar, foobarbar, 1), split(s, re, -1)...)
  locate: (a) => `locate(${a.join(', ')}${a.length === 2 ? ', 1' : ''})`,
  regexp_replace: (a) => `regexp_replace(${a.join(', ')}${a.length === 3 ? ', 1' : ''})`,
  regexp_instr: (a) => `regexp_instr(${a.join(', ')}${a.length === 2 ? ', 0' : ''})`,
  split: (a) => `split(${a.join(', ')}${a.length === 2 ? ', -1' : ''})`,
  substr: (a) => `substr(${a.join(', ')}${a.length === 2 ? ', 2147483647' : ''})`,
  substring: (a) => `substring(${a.join(', ')}${a.length === 2 ? ', 2147483647' : ''})`,
  sort_array: (a) => `sort_array(${a.join(', ')}${a.length === 1 ? ', true' : ''})`,
  lpad: (a, q) => `lpad(${a.join(', ')}${a.length === 2 ? `, ${q(' ')}` : ''})`,
  rpad: (a, q) => `rpad(${a.join(', ')}${a.length === 2 ? `, ${q(' ')}` : ''})`,
  unix_timestamp: (a, q) => `unix_timestamp(${a.join(', ')}${a.length === 1 ? `, ${q('yyyy-MM-dd HH:mm:ss')}` : ''})`,
  to_unix_timestamp: (a, q) => `to_unix_timestamp(${a.join(', ')}${a.length === 1 ? `, ${q('yyyy-MM-dd HH:mm:ss')}` : ''})`,
  // JsonToStructs prints its JSON argument only (the schema and options are not its children)
  from_json: (a) => `from_json(${a[0] ?? ''})`,
  from_unixtime: (a, q) => `from_unixtime(${a.join(', ')}${a.length === 1 ? `, ${q('yyyy-MM-dd HH:mm:ss')}` : ''})`,
};

/** The call's text from its arguments' texts; `quote` writes a string argument Spark fills in ('x', or x when pretty). */
export function callSql(name: string, args: readonly string[], quote: (text: string) => string): string {
  return FORMS[name]?.(args, quote) ?? `${name}(${args.join(', ')})`;
}
