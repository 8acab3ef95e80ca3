/**
 * The file of the rows the stages are running now: Spark's file scan holds it in a thread-local
 * its task sets before it reads a file's rows; here applyStages (rows.ts) sets it while it runs
 * one chunk's rows through the stages, every row of a chunk coming from one file. Read by
 * input_file_name() and the `_metadata` column (expr/input-file.ts). None of it changes on a
 * replay: a batch's files and their order are fixed by its offsets.
 */
import type { InputFile } from './ports/source';

const current: { file: InputFile | null } = { file: null };

/** The file of the rows being run through the stages, or null (a stream source, or after a stateful operator). */
export function currentInputFile(): InputFile | null {
  return current.file;
}

/** Runs `f` with `file` as the rows' file (null: none), then puts the one before it back. */
export function withInputFile<T>(file: InputFile | null, f: () => T): T {
  const before = current.file;
  current.file = file;
  try {
    return f();
  } finally {
    current.file = before;
  }
}

/**
 * A stored file's URI as Spark's file scan names it (Hadoop's Path: java.net.URI's quoting of a
 * path), `base` the bucket's (`s3://bucket`): a character of the key a URI path cannot hold is
 * %-quoted in UTF-8 (a space as %20, `%` as %25, `#`, `?`, brackets, braces...); letters, digits,
 * `/` and `-_.!~*'(),;:$&+=@` stay, as does any character beyond ASCII.
 */
export function fileUri(base: string, key: string): string {
  let out = '';
  for (const ch of key) {
    const code = ch.codePointAt(0)!;
    out += code > 0x7f || SAFE.test(ch) ? ch : [...Buffer.from(ch, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
  return `${base}/${out}`;
}

const SAFE = /^[A-Za-z0-9/\-_.!~*'(),;:$&+=@]$/;
