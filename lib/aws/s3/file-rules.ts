/**
 * Which objects under a landing prefix are files of the stream, as Spark's file source lists them
 * (FORMAT-3 "Files with keys of their own"; apache/spark HadoopFSUtils.shouldFilterOutPathName and
 * PartitioningUtils.parsePartition):
 *
 *     <root>/name                       a file
 *     <root>/col=v/col2=w/name          a file with partition values col=v, col2=w
 *     <root>/2026/10/01/name            only with recursiveFileLookup (then no partition columns)
 *     _name (no '='), .name, *._COPYING_   never: the file, or any folder on its path
 *
 * A prefix holding files both at its root and in `col=value` folders, or folders naming other
 * partition columns, is an error as in Spark ("Conflicting directory structures detected").
 * `pathGlobFilter` matches the last path part with Hadoop's glob (`*`, `?`, `[a-z]`, `[!a]`, `{a,b}`).
 */
import { InvalidOptionError, SluiceError } from '../../engine/errors';
import { ddlName, ddlOf } from '../../engine/ddl';
import { decimalOfText } from '../../engine/decimal';
import { dateOfText } from '../../engine/formats/date-text';
import { HIVE_DEFAULT_PARTITION, inferPartitionColumnType, javaParseDouble } from '../../engine/formats/partition-types';
import { type Column, type ColumnType, exactLong, type Schema } from '../../engine/schema';
import { parseTimestamp } from '../../engine/timestamps';

export interface ListingRules {
  readonly recursiveFileLookup: boolean;
  /** The glob on the last path part, compiled. */
  readonly glob: RegExp | null;
}

/** What a key is, relative to the landing prefix. */
export type KeyKind =
  | { readonly kind: 'file'; readonly partitions: ReadonlyArray<readonly [string, string]> }
  | { readonly kind: 'hidden' }
  /** In a sub-folder that is not a `col=value` folder, without recursiveFileLookup. */
  | { readonly kind: 'subfolder' }
  | { readonly kind: 'filtered' };

/** Spark's hidden names: `_x` (unless it holds '='), `.x`, `x._COPYING_`. */
function isHiddenName(name: string): boolean {
  return (name.startsWith('_') && !name.includes('=')) || name.startsWith('.') || name.endsWith('._COPYING_');
}

/** `col=value` with a non-empty column: [col, value]; else null. */
function partitionPart(folder: string): readonly [string, string] | null {
  const eq = folder.indexOf('=');
  if (eq <= 0) return null;
  return [unescapePathName(folder.slice(0, eq)), unescapePathName(folder.slice(eq + 1))];
}

/** Hive's escaping of partition paths (ExternalCatalogUtils.unescapePathName): %XX is the byte. */
function unescapePathName(text: string): string {
  return text.includes('%') ? text.replace(/%([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16))) : text;
}

/** The kind of `rel` (a key with the prefix's root cut off). */
export function classifyKey(rel: string, rules: ListingRules): KeyKind {
  if (rel === '' || rel.endsWith('/')) return { kind: 'hidden' };
  const parts = rel.split('/');
  for (const p of parts) if (p === '' || isHiddenName(p)) return { kind: 'hidden' };
  const name = parts[parts.length - 1];
  if (rules.glob && !rules.glob.test(name)) return { kind: 'filtered' };
  if (rules.recursiveFileLookup) return { kind: 'file', partitions: [] };
  const partitions: Array<readonly [string, string]> = [];
  for (let i = 0; i < parts.length - 1; i++) {
    const kv = partitionPart(parts[i]);
    if (!kv) return { kind: 'subfolder' };
    partitions.push(kv);
  }
  return { kind: 'file', partitions };
}

/**
 * Spark's check of a listing's layout: every file at the same depth of `col=value` folders with
 * the same columns in the same order. `where` names the prefix in the error.
 */
export function checkLayout(files: ReadonlyArray<{ key: string; partitions: ReadonlyArray<readonly [string, string]> }>, where: string): void {
  let first: { key: string; cols: string } | null = null;
  for (const f of files) {
    const cols = f.partitions.map(([c]) => c).join('/');
    if (first === null) first = { key: f.key, cols };
    else if (first.cols !== cols) {
      const describe = (c: string) => (c === '' ? 'no partition folders' : `partition columns ${c.split('/').join(', ')}`);
      throw new SluiceError(
        `Conflicting directory structures detected under ${where}: ${first.key} has ${describe(first.cols)} but ${f.key} has ${describe(cols)}, ` +
          `as Spark refuses them: move the files into one layout (all at the root, or all in the same col=value folders), ` +
          `or set .option('recursiveFileLookup', true) to read every sub-folder without partition columns`,
        { details: { first: first.key, other: f.key } },
      );
    }
  }
}

/** Hadoop's glob (GlobPattern) as a regular expression on a whole name; refuses a malformed glob. */
export function compileGlob(glob: string): RegExp {
  let re = '';
  let inClass = false;
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '\\' && i + 1 < glob.length) {
      re += `\\${glob[++i]}`;
      continue;
    }
    if (inClass) {
      if (c === ']') {
        inClass = false;
        re += ']';
      } else if ((c === '!' || c === '^') && glob[i - 1] === '[') re += '^';
      else re += c === '\\' ? '\\\\' : c;
      continue;
    }
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      inClass = true;
      re += '[';
    } else if (c === '{') {
      braces++;
      re += '(?:';
    } else if (c === '}' && braces > 0) {
      braces--;
      re += ')';
    } else if (c === ',' && braces > 0) re += '|';
    else re += c.replace(/[.+^$()|{}]/g, '\\$&');
  }
  if (inClass || braces > 0) {
    throw new InvalidOptionError(
      `option pathGlobFilter ${JSON.stringify(glob)} is not a valid glob (an unclosed ${inClass ? '[' : '{'}): e.g. '*.json' or 'part-[0-9]*'`,
    );
  }
  return new RegExp(`^${re}$`, 's');
}

/**
 * A partition folder's text as a value of the declared type (Spark: castPartValueToDesiredType;
 * `__HIVE_DEFAULT_PARTITION__` is null). Undefined: the text is not a value of the type, or the
 * type is nested (a folder name holds no array, map or struct).
 */
const PARTITION_CASTS: Record<ColumnType, (text: string, column: Column) => unknown> = {
  STRING: (t) => t,
  // Integer.parseInt (then TINYINT/SMALLINT in range: Spark's toByte/toShort would wrap, a value
  // outside the type is a dead letter here, as FORMAT-3 has it), Long.parseLong exactly
  INT: (t, c) => integerIn(t, c.bits === 8 ? -128 : c.bits === 16 ? -32768 : -(2 ** 31), c.bits === 8 ? 127 : c.bits === 16 ? 32767 : 2 ** 31 - 1),
  LONG: (t) => (/^[-+]?\d+$/.test(t) ? (exactLong(t.replace(/^\+/, '')) ?? undefined) : undefined),
  // Double.parseDouble, a FLOAT then as binary32 (.toFloat)
  DOUBLE: (t, c) => {
    const n = javaParseDouble(t);
    return n !== undefined && c.binary32 ? Math.fround(n) : n;
  },
  BOOLEAN: (t) => (/^true$/i.test(t) ? true : /^false$/i.test(t) ? false : undefined),
  TIMESTAMP: (t) => parseTimestamp(t) ?? undefined,
  DATE: (t) => dateOfText(t) ?? undefined,
  DECIMAL: (t, c) => decimalOfText(t.trim(), c.precision!, c.scale!) ?? undefined,
  ARRAY: () => undefined,
  MAP: () => undefined,
  STRUCT: () => undefined,
};

function integerIn(t: string, lo: number, hi: number): number | undefined {
  if (!/^[-+]?\d+$/.test(t)) return undefined;
  const n = Number(t);
  return n >= lo && n <= hi ? n : undefined;
}

/**
 * The partition values of a file as a row's columns: only the columns the schema declares (an
 * undeclared partition column is not added: the query cannot name it, so declare it to read it).
 * A value that does not fit the declared type is an error text for the file's dead letter.
 */
export function partitionValues(
  schema: Schema,
  partitions: ReadonlyArray<readonly [string, string]>,
): { values: Array<readonly [string, unknown]> } | { error: string } {
  const values: Array<readonly [string, unknown]> = [];
  for (const [col, text] of partitions) {
    const column = schema.columns.find((c) => c.name === col);
    if (!column) continue;
    if (text === HIVE_DEFAULT_PARTITION) {
      values.push([col, null]);
      continue;
    }
    const v = PARTITION_CASTS[column.type](text, column);
    if (v === undefined)
      return { error: `partition folder ${col}=${text} is not a ${ddlOf(column)} (the schema's type of ${col}): rename the folder or declare ${col} STRING` };
    values.push([col, v]);
  }
  return { values };
}

/** A partition column found in folders that the schema does not declare, typed as Spark would infer it. */
export interface UndeclaredPartitionColumn {
  readonly name: string;
  /** The column as a schema would declare it: its name and Spark's inferred type, in DDL. */
  readonly ddl: string;
  /** A few of the folder values it was inferred from. */
  readonly examples: readonly string[];
}

/**
 * The partition columns of `files` (their `col=value` folders) that the schema does not declare,
 * each with the type Spark would infer from every value found (engine/formats/partition-types.ts).
 */
export function undeclaredPartitionColumns(
  schema: Schema,
  files: ReadonlyArray<{ readonly partitions: ReadonlyArray<readonly [string, string]> }>,
): UndeclaredPartitionColumn[] {
  const declared = new Set(schema.columns.map((c) => c.name));
  const values = new Map<string, Set<string>>();
  for (const f of files) {
    for (const [col, text] of f.partitions) {
      if (declared.has(col)) continue;
      let set = values.get(col);
      if (!set) values.set(col, (set = new Set()));
      set.add(text);
    }
  }
  return [...values].map(([name, set]) => ({ name, ddl: `${ddlName(name)} ${ddlOf(inferPartitionColumnType(set))}`, examples: [...set].sort().slice(-3) }));
}
