/**
 * What a failed run may say about the data in the function's logs. A SluiceError's `details` can
 * carry the query's data: a state key or a DynamoDB sink key is the JSON of grouping values (a
 * user id, an account), a row or a raw record is the data itself. By default the handler replaces
 * those fields, and their values where the message repeats them, with "<redacted>" before the
 * error reaches the log: in the "run-failed" line and in the error it rethrows, which the Lambda
 * runtime logs again (message, stack and every enumerable property) and hands to the on-failure
 * destination. SLUICE_LOG_VALUES=true (the construct's `logDataValues`) keeps them.
 *
 *     details field                      kept     redacted (default)
 *     key, under a pipeline S3 prefix    yes      no: it names an object (checkpoint entry, landing file, ...)
 *     key, anything else                 yes      yes: a state or sink key, built from grouping values
 *     keys rows row records record raw values value      yes: data, at any depth
 *     everything else                    yes      no: batch ids, versions, sizes, operator ids, offsets
 */

/** Detail fields, at any depth, whose values are the query's data. */
const DATA_VALUE_FIELDS: readonly string[] = ['key', 'keys', 'row', 'rows', 'record', 'records', 'raw', 'value', 'values'];

/** What stands in for a redacted value. */
export const REDACTED = '<redacted>';

/**
 * A value this long or longer is also cut out of the message wherever it appears, in full or as a
 * truncated prefix of at least TRUNCATED_MATCH characters (messages often quote a key cut to 80
 * or 120 characters). Shorter values (a 2-digit number) would match ordinary words and digits.
 */
const MIN_SCRUB_LENGTH = 4;
const TRUNCATED_MATCH = 16;

export interface RedactionOptions {
  /**
   * Key prefixes (no trailing slash) of the pipeline's own S3 locations: a string `key` at or
   * under one names an object, not data, and is kept.
   */
  readonly objectPrefixes?: readonly string[];
}

export interface Redaction {
  readonly message: string;
  readonly details: Record<string, unknown>;
  /** The paths of the redacted fields, e.g. `key`, `conflict.rows`; empty when nothing was. */
  readonly fields: string[];
  /** The redacted values as text, to scrub from other text about the same error (its stack). */
  readonly values: string[];
}

/** `details` without data values, and `message` without the redacted values it repeats. */
export function redactDataValues(message: string, details: Record<string, unknown>, opts: RedactionOptions = {}): Redaction {
  const prefixes = (opts.objectPrefixes ?? []).filter((p) => p !== '');
  const namesObject = (v: unknown) => typeof v === 'string' && prefixes.some((p) => v === p || v.startsWith(`${p}/`));
  const fields: string[] = [];
  const values: string[] = [];

  const walk = (value: unknown, path: string): unknown => {
    if (Array.isArray(value)) return value.map((v, i) => walk(v, `${path}[${i}]`));
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [name, v] of Object.entries(value)) {
      const at = path ? `${path}.${name}` : name;
      if (DATA_VALUE_FIELDS.includes(name) && v !== null && v !== undefined && !(name === 'key' && namesObject(v))) {
        fields.push(at);
        collectText(v, values);
        out[name] = REDACTED;
      } else {
        out[name] = walk(v, at);
      }
    }
    return out;
  };
  const redacted = walk(details, '') as Record<string, unknown>;
  return { message: scrubText(message, values), details: redacted, fields, values };
}

/** `text` with every occurrence of each value (or of a truncated prefix of it) replaced by REDACTED. */
export function scrubText(text: string, values: readonly string[]): string {
  let out = text;
  for (const value of values) {
    if (value.length < MIN_SCRUB_LENGTH) continue;
    // As written, and as JSON.stringify escapes it inside a quoted string.
    const forms = [value, JSON.stringify(value).slice(1, -1)];
    for (const form of new Set(forms)) out = cutOut(out, form);
  }
  return out;
}

/** Replaces each maximal run of `text` that equals `form` or a prefix of it of TRUNCATED_MATCH or more characters. */
function cutOut(text: string, form: string): string {
  const probe = form.slice(0, Math.min(form.length, TRUNCATED_MATCH));
  let out = '';
  let from = 0;
  for (let at = text.indexOf(probe); at !== -1; at = text.indexOf(probe, from)) {
    let len = probe.length;
    while (len < form.length && at + len < text.length && text[at + len] === form[len]) len++;
    out += text.slice(from, at) + REDACTED;
    from = at + len;
  }
  return out + text.slice(from);
}

/** The text forms of a redacted value: a string as it is, each element of an array or object, and the whole as JSON. */
function collectText(value: unknown, into: string[]): void {
  if (typeof value === 'string') {
    into.push(value);
    // A state or sink key is the JSON of grouping values: a message may quote one of them alone.
    if (/^[[{]/.test(value)) {
      const parsed = parseJson(value);
      if (parsed !== null && typeof parsed === 'object') for (const v of Object.values(parsed)) collectText(v, into);
    }
    return;
  }
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) collectText(v, into);
  }
  const json = safeJson(value);
  if (json !== undefined) into.push(json);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function safeJson(value: unknown): string | undefined {
  try {
    return typeof value === 'bigint' ? String(value) : JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/**
 * Redacts the data values of `error` where they leave the process: its details, its message and
 * its stack (the Lambda runtime logs a rejected error's message, stack and enumerable properties,
 * passes message and stack to the on-failure destination, and Step Functions stores them as a
 * failed task's cause). Both Lambdas (the scheduled one and the scale-out task one) call it before
 * they log and rethrow. Returns the redacted fields.
 */
export function redactInPlace(error: Error & { details?: Record<string, unknown> }, objectPrefixes: readonly string[]): string[] {
  const r = redactDataValues(error.message, error.details ?? {}, { objectPrefixes });
  if (r.fields.length === 0) return [];
  const stack = error.stack;
  const writable = error as { message: string; stack?: string; details?: Record<string, unknown> };
  writable.details = r.details;
  writable.message = r.message;
  if (stack !== undefined) writable.stack = scrubText(stack, r.values);
  return r.fields;
}
