/**
 * The text of a state value, for stores that keep text (DynamoDB). JSON has no NaN nor Infinity,
 * and JSON.stringify writes them as null; Spark's doubles have them (a sum over a NaN is NaN, a
 * grouping value may be NaN), and a null read back would change the result. So:
 *
 * - a value without a non-finite number is its JSON text, as before;
 * - a value with one is `~` followed by the JSON of `{ v, n }`: v is the value as JSON.stringify
 *   writes it (null where each non-finite number was) and n lists where they were, as
 *   `[path, "NaN" | "Infinity" | "-Infinity"]` with path the keys and indexes down to it.
 *
 * A BIGINT beyond 2^53 − 1 is a bigint (schema.ts exactLong), which JSON.stringify refuses: a
 * value with one takes the second form too, the bigint at its path as `"<digits>n"`, so it reads
 * back exactly (never through a double).
 *
 * No JSON text starts with `~`, so the two forms cannot be confused, and text written before this
 * form existed reads as it did.
 */
import { gzipSync } from 'node:zlib';
import { SluiceError } from './errors';
import type { Json } from './ports';

const MARK = '~';

type Path = Array<string | number>;

function nonFinite(v: unknown, path: Path, out: Array<[Path, string]>): void {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) out.push([path.slice(), String(v)]);
  } else if (typeof v === 'bigint') {
    out.push([path.slice(), `${v}n`]);
  } else if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      path.push(i);
      nonFinite(v[i], path, out);
      path.pop();
    }
  } else if (v !== null && typeof v === 'object') {
    for (const [k, item] of Object.entries(v)) {
      path.push(k);
      nonFinite(item, path, out);
      path.pop();
    }
  }
}

/** The text of a state value (see the file comment). */
export function encodeStateJson(value: Json | object): string {
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    json = 'null'; // a bigint in it (JSON.stringify's TypeError): the marked form below
  }
  // a non-finite number is written as null: without a null, there is none
  if (!json.includes('null')) return json;
  const found: Array<[Path, string]> = [];
  nonFinite(value, [], found);
  return found.length === 0 ? json : MARK + JSON.stringify({ v: value, n: found }, bigintAsNull);
}

/** JSON.stringify's replacer for the marked form: a bigint is null there, and listed in `n`. */
function bigintAsNull(_key: string, v: unknown): unknown {
  return typeof v === 'bigint' ? null : v;
}

/** The state value of a text written by encodeStateJson (or plain JSON). */
export function decodeStateJson(text: string): Json {
  if (!text.startsWith(MARK)) return JSON.parse(text) as Json;
  const { v, n } = JSON.parse(text.slice(MARK.length)) as { v: Json; n: Array<[Path, string]> };
  let root = v;
  for (const [path, name] of n) {
    const num: Json = name.endsWith('n') ? (BigInt(name.slice(0, -1)) as unknown as Json) : Number(name);
    if (path.length === 0) {
      root = num;
      continue;
    }
    let at = root as Record<string | number, Json>;
    for (let i = 0; i < path.length - 1; i++) at = at[path[i]] as Record<string | number, Json>;
    at[path[path.length - 1]] = num;
  }
  return root;
}

/** DynamoDB's item limit, which every state store keeps (so that the in-memory twin refuses what DynamoDB would). */
export const STATE_ITEM_MAX_BYTES = 400 * 1024;

/** Values whose text exceeds this are stored gzipped (the DynamoDB store's default). */
const STATE_COMPRESS_ABOVE_BYTES = 32 * 1024;

/** The bytes a value's text takes as stored: as is, or gzipped above `compressAboveBytes`. */
export function storedStateBytes(text: string, compressAboveBytes = STATE_COMPRESS_ABOVE_BYTES): number {
  const bytes = Buffer.byteLength(text, 'utf8');
  return bytes <= compressAboveBytes ? bytes : gzipSync(text).byteLength;
}

/**
 * The error for a key whose state cannot be stored: `what` (e.g. "a DynamoDB item ...") needs
 * `sizeBytes` > `limitBytes`. Raised by StateStore.check before any effect of the batch.
 */
export function stateItemTooLarge(operatorId: string, id: string, sizeBytes: number, limitBytes: number, what: string): SluiceError {
  const prefix = id.length > 60 ? `${id.slice(0, 60)}...` : id;
  return new SluiceError(
    `state of operator \`${operatorId}\` for key \`${prefix}\` needs ${what} of ${sizeBytes} bytes, above the limit of ${limitBytes} bytes: ` +
      'per-key state must stay smaller: aggregate a hash or prefix (not max of a long string); bound sessions by a watermark (not complete mode)',
    { details: { operatorId, key: id.slice(0, 200), keyChars: id.length, sizeBytes, limitBytes } },
  );
}
