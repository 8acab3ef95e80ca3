/** Reader options as Spark takes them: a JSON string, number or boolean whose text Spark reads. */
import { compileDatetimePattern, type DatetimePattern } from '../datetime-patterns';
import { InvalidOptionError } from '../errors';

type OptionValue = string | number | boolean;
export type ReaderOptions = Readonly<Record<string, OptionValue>>;

/** The options `names` that `get` (a function's options map: keys in any case) holds, as reader options. */
export function pickOptions(get: (name: string) => string | null | undefined, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const v = get(name);
    if (v != null) out[name] = v;
  }
  return out;
}

/** A boolean option (true/false, any case, as Spark's text); absent: the default. */
export function boolOption(options: ReaderOptions, name: string, fallback: boolean): boolean {
  const v = options[name];
  if (v === undefined) return fallback;
  const t = String(v).toLowerCase();
  if (t === 'true') return true;
  if (t === 'false') return false;
  throw new InvalidOptionError(`option ${name}=${JSON.stringify(v)} must be true or false, e.g. .option('${name}', true)`);
}

/** A one-character option (sep, quote, escape); `\t` and `\\t` are a tab, as in Spark. */
export function charOption(options: ReaderOptions, name: string, fallback: string): string {
  const v = options[name];
  if (v === undefined) return fallback;
  const t = String(v) === '\\t' ? '\t' : String(v);
  if (t.length !== 1) {
    throw new InvalidOptionError(
      `option ${name}=${JSON.stringify(v)} must be one character, e.g. .option('${name}', '${fallback === '\t' ? '\\t' : fallback}')`,
    );
  }
  return t;
}

/** A datetime pattern option (dateFormat, timestampFormat), compiled; absent: null (Spark's default forms). */
export function patternOption(options: ReaderOptions, name: string): DatetimePattern | null {
  const v = options[name];
  if (v === undefined) return null;
  try {
    return compileDatetimePattern(String(v));
  } catch (e) {
    throw new InvalidOptionError(`option ${name}: ${(e as Error).message}`);
  }
}
