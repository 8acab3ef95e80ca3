/**
 * Which objects under a landing prefix are files of the stream, as Spark's file source lists them
 * (FORMAT-3 "Files with keys of their own"; apache/spark HadoopFSUtils.shouldFilterOutPathName,
 * PartitioningAwareFileIndex and PartitioningUtils.parsePartition):
 *
 *     <root>/name                       a file
 *     <root>/col=v/col2=w/name          a file with partition values col=v, col2=w
 *     <root>/col=v/extra/name           also col=v: the walk up from the file's folder skips
 *                                       folders without '=' until it finds a partition folder
 *     <root>/2026/10/01/name            only with recursiveFileLookup (then no partition columns)
 *     _name (no '='), .name, *._COPYING_   never: the file, or any folder on its path (Spark's
 *                                       listing keeps folders named _metadata..., _common_metadata...)
 *
 * A prefix holding files both at its root and in `col=value` folders, files whose partition
 * folders start below different folders, or folders naming other partition columns (compared
 * case-insensitively), is an error as in Spark. `pathGlobFilter` matches the last path part with
 * Hadoop's glob (`*`, `?`, `[a-z]`, `[!a]`, `{a,b}`).
 */
import { InvalidOptionError, SluiceError } from '../../engine/errors';
import { ddlName, ddlOf } from '../../engine/ddl';
import { decimalOfText } from '../../engine/decimal';
import { dateOfText } from '../../engine/formats/date-text';
import { HIVE_DEFAULT_PARTITION, inferPartitionColumnType, javaParseDouble } from '../../engine/formats/partition-types';
import { type Column, type ColumnType, exactLong, type Schema } from '../../engine/schema';
import { parseTimestamp } from '../../engine/timestamps';
import { resolveName } from '../../engine/resolve-name';

export interface ListingRules {
  readonly recursiveFileLookup: boolean;
  /** The glob on the last path part, compiled. */
  readonly glob: RegExp | null;
}

/**
 * Where a file sits in Spark's partition discovery (PartitioningUtils.parsePartition of its folder):
 * the `col=value` folders read from its folder upwards, stopping at the first folder without `=`
 * once one was found, and the folder where that walk stopped (its base: the root when every
 * folder above is a partition folder; the file's own folder when none is).
 */
export interface FileShape {
  readonly key: string;
  /** The file's folder under the root ('' at the root). */
  readonly folder: string;
  readonly base: string;
  /** Its partition columns, outermost first, as the folders name them (unescaped). */
  readonly columns: readonly string[];
  /** Left out by pathGlobFilter: Spark still counts its folder in partition discovery. */
  readonly filtered: boolean;
}

/** What a key is, relative to the landing prefix. */
export type KeyKind =
  | { readonly kind: 'file'; readonly partitions: ReadonlyArray<readonly [string, string]>; readonly shape: FileShape | null }
  | { readonly kind: 'hidden' }
  /** In a sub-folder with no `col=value` folder on its path, without recursiveFileLookup. */
  | { readonly kind: 'subfolder'; readonly shape: FileShape }
  | { readonly kind: 'filtered'; readonly shape: FileShape | null };

/** Spark's hidden names (HadoopFSUtils.shouldFilterOutPathName, then isDataPath for a file): `_x` (unless it holds '='), `.x`, `x._COPYING_`. */
function isHiddenName(name: string): boolean {
  return (name.startsWith('_') && !name.includes('=')) || name.startsWith('.') || name.endsWith('._COPYING_');
}

/** A hidden folder: as a hidden name, but Spark's listing keeps folders named `_metadata...` and `_common_metadata...` (Parquet's summaries). */
function isHiddenFolder(name: string): boolean {
  return isHiddenName(name) && !name.startsWith('_metadata') && !name.startsWith('_common_metadata');
}

/** `col=value`: [col, value] (Hive-unescaped); null without '='. Spark refuses an empty column or value. */
function partitionPart(folder: string, key: string): readonly [string, string] | null {
  const eq = folder.indexOf('=');
  if (eq < 0) return null;
  const col = unescapePathName(folder.slice(0, eq));
  const value = folder.slice(eq + 1);
  if (col === '' || value === '') {
    throw new SluiceError(
      `Empty partition column ${col === '' ? 'name' : 'value'} in '${folder}' (s3 key ${key}), as Spark refuses it: ` +
        `a partition folder is col=value with both parts non-empty (a null value is col=${HIVE_DEFAULT_PARTITION}); rename the folder, or set .option('recursiveFileLookup', true)`,
      { details: { key, folder } },
    );
  }
  return [col, unescapePathName(value)];
}

/** Hive's escaping of partition paths (ExternalCatalogUtils.unescapePathName): %XX is the byte. */
function unescapePathName(text: string): string {
  return text.includes('%') ? text.replace(/%([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16))) : text;
}

/** The kind of `rel` (a key with the prefix's root cut off; `key` names it in errors). */
export function classifyKey(rel: string, rules: ListingRules, key = rel): KeyKind {
  if (rel === '' || rel.endsWith('/')) return { kind: 'hidden' };
  const parts = rel.split('/');
  const name = parts[parts.length - 1];
  if (isHiddenName(name)) return { kind: 'hidden' };
  const folders = parts.slice(0, -1);
  for (const p of folders) if (p === '' || isHiddenFolder(p)) return { kind: 'hidden' };
  const filtered = rules.glob !== null && !rules.glob.test(name);
  if (rules.recursiveFileLookup) return filtered ? { kind: 'filtered', shape: null } : { kind: 'file', partitions: [], shape: null };
  // from the file's folder upwards: partition folders, until a folder without '=' once one was found
  const partitions: Array<readonly [string, string]> = [];
  let i = folders.length - 1;
  for (; i >= 0; i--) {
    const kv = partitionPart(folders[i], key);
    if (kv) partitions.unshift(kv);
    else if (partitions.length) break;
  }
  const folder = folders.join('/');
  const shape: FileShape = {
    key,
    folder,
    base: partitions.length ? folders.slice(0, i + 1).join('/') : folder,
    columns: partitions.map(([c]) => c),
    filtered,
  };
  if (filtered) return { kind: 'filtered', shape };
  // without partition folders, only the prefix's own files are read (Spark's allFiles: the root's children)
  if (partitions.length === 0 && folder !== '') return { kind: 'subfolder', shape };
  return { kind: 'file', partitions, shape };
}

/**
 * Spark's check of a listing's layout (PartitioningUtils.parsePartitions and resolvePartitions,
 * column names compared case-insensitively, as spark.sql.caseSensitive is false by default): once
 * a folder holds partition columns, every file's walk must stop at the same base ("Conflicting
 * directory structures detected"), and name the same columns in the same order ("Conflicting
 * partition column names detected"). Files at the root beside partition folders are refused too
 * (FORMAT-3; Spark would leave them unread). `where` names the prefix in the error.
 */
export function checkLayout(files: readonly FileShape[], where: string): void {
  const first = files.find((f) => f.columns.length > 0);
  if (!first) return;
  const remedy =
    `move the files into one layout (all at the root, or all in the same col=value folders), ` +
    `or set .option('recursiveFileLookup', true) to read every sub-folder without partition columns`;
  for (const f of files) {
    // a root file the glob leaves out is not listed at all
    if (f.columns.length === 0 && f.filtered && f.folder === '') continue;
    if (f.columns.length === 0 || f.base.toLowerCase() !== first.base.toLowerCase()) {
      const where2 = (s: FileShape) =>
        s.columns.length === 0 ? `no partition folders` : `partition folders under ${s.base === '' ? 'the root' : `${s.base}/`}`;
      throw new SluiceError(
        `Conflicting directory structures detected under ${where}: ${first.key} has ${where2(first)} but ${f.key} has ${where2(f)}, as Spark refuses them: ${remedy}`,
        { details: { first: first.key, other: f.key } },
      );
    }
  }
  const lists = new Map<string, FileShape>();
  for (const f of files) {
    if (f.columns.length === 0) continue; // (a root file the glob leaves out)
    const names = f.columns.join('/').toLowerCase();
    if (!lists.has(names)) lists.set(names, f);
  }
  if (lists.size > 1) {
    const shapes = [...lists.values()];
    throw new SluiceError(
      `Conflicting partition column names detected under ${where}: ${shapes.map((s, n) => `Partition column name list #${n}: ${s.columns.join(', ')} (${s.key})`).join('; ')}. ` +
        `Data files must be only in the innermost partition folders, and the folders at one level must name the same column, as Spark requires: ${remedy}`,
      { details: { files: shapes.map((s) => s.key) } },
    );
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

/** The schema's column a partition folder names, its case aside (Spark resolves names case-insensitively by default). */
function declaredColumn(schema: Schema, name: string): Column | undefined {
  return resolveName(schema.columns, name);
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
    // the schema's column of that name, whatever its case (spark.sql.caseSensitive is false): its name and type
    const column = declaredColumn(schema, col);
    if (!column) continue;
    if (text === HIVE_DEFAULT_PARTITION) {
      values.push([column.name, null]);
      continue;
    }
    const v = PARTITION_CASTS[column.type](text, column);
    if (v === undefined)
      return {
        error: `partition folder ${col}=${text} is not a ${ddlOf(column)} (the schema's type of ${column.name}): rename the folder or declare ${column.name} STRING`,
      };
    values.push([column.name, v]);
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
  const values = new Map<string, Set<string>>();
  for (const f of files) {
    for (const [col, text] of f.partitions) {
      if (declaredColumn(schema, col)) continue;
      let set = values.get(col);
      if (!set) values.set(col, (set = new Set()));
      set.add(text);
    }
  }
  return [...values].map(([name, set]) => ({ name, ddl: `${ddlName(name)} ${ddlOf(inferPartitionColumnType(set))}`, examples: [...set].sort().slice(-3) }));
}
