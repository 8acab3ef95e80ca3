/**
 * The file a row was read from (lib/engine/input-file.ts): Spark's input_file_name(),
 * input_file_block_start(), input_file_block_length() and a file source's hidden `_metadata`
 * column (STRUCT<file_path, file_name, file_size, file_block_start, file_block_length,
 * file_modification_time>). After a stateful operator, and on a stream source, there is no file:
 * input_file_name() is '' and the block functions -1, as Spark gives them after a shuffle, and
 * `_metadata` is null.
 */
import { currentInputFile } from '../input-file';
import type { InputFile } from '../ports/source';
import type { FunctionDef } from './analyze';
import { call, def } from './fn-util';
import type { Typed } from './typed';
import { LONG, STRING, type SqlType, TIMESTAMP } from './types';

/** The type of the `_metadata` column (Spark 3.3's file source metadata, less Parquet's row_index). */
const METADATA_TYPE: SqlType = {
  type: 'STRUCT',
  fields: [
    { ...STRING, name: 'file_path' },
    { ...STRING, name: 'file_name' },
    { ...LONG, name: 'file_size' },
    { ...LONG, name: 'file_block_start' },
    { ...LONG, name: 'file_block_length' },
    { ...TIMESTAMP, name: 'file_modification_time' },
  ],
};

/** The name of the hidden column, when no column of the input has it (a data column of that name wins, as in Spark). */
export const METADATA_COLUMN = '_metadata';

const metadataOf = new WeakMap<InputFile, Record<string, unknown>>();

/** The `_metadata` value of a file, made once per file (every row of it shares one). */
function metadata(file: InputFile): Record<string, unknown> {
  let m = metadataOf.get(file);
  if (m === undefined) {
    const slash = file.path.lastIndexOf('/');
    m = {
      file_path: file.path,
      file_name: unquote(file.path.slice(slash + 1)),
      file_size: file.size,
      file_block_start: 0,
      file_block_length: file.size,
      file_modification_time: file.modifiedMs === null ? null : file.modifiedMs * 1000,
    };
    metadataOf.set(file, m);
  }
  return m;
}

/** The node of a reference to `_metadata`: the current file's struct, null without one. */
export function metadataColumn(): Typed {
  return {
    type: METADATA_TYPE,
    sql: METADATA_COLUMN,
    name: METADATA_COLUMN,
    children: [],
    build: () => () => {
      const file = currentInputFile();
      return file === null ? null : metadata(file);
    },
  };
}

export const INPUT_FILE_FUNCTIONS: Record<string, FunctionDef> = {
  input_file_name: def(0, 0, (_, c) => call(c, STRING, [], () => () => currentInputFile()?.path ?? '')),
  input_file_block_start: def(0, 0, (_, c) => call(c, LONG, [], () => () => (currentInputFile() === null ? -1 : 0))),
  input_file_block_length: def(0, 0, (_, c) => call(c, LONG, [], () => () => currentInputFile()?.size ?? -1)),
};

/** A path's name as Hadoop's Path.getName gives it: its %-quoting undone. */
function unquote(name: string): string {
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}
