/**
 * A step's Parquet file (FORMAT-3 "File formats"): the rows written as one Parquet file with the
 * schema's types by DuckDB, a writer other than sluice's own Parquet sink, so that the reader is
 * checked against files it did not write. The rows go to DuckDB as JSON lines read with the
 * declared types (read_json's `columns`), so a DECIMAL given as a string of digits is cast from
 * its text, exactly. DuckDB (@duckdb/node-api) is a dev dependency: loaded only here.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SluiceError } from '../engine/errors';
import { recordLines } from './case';
import type { DataType, Schema } from '../engine/schema';

/** The DuckDB type of a column type. */
function duckType(t: DataType): string {
  switch (t.type) {
    case 'STRING':
      return 'VARCHAR';
    case 'INT':
      return t.bits === 8 ? 'TINYINT' : t.bits === 16 ? 'SMALLINT' : 'INTEGER';
    case 'LONG':
      return 'BIGINT';
    case 'DOUBLE':
      return t.binary32 ? 'FLOAT' : 'DOUBLE';
    case 'BOOLEAN':
      return 'BOOLEAN';
    case 'DECIMAL':
      return `DECIMAL(${t.precision ?? 10},${t.scale ?? 0})`;
    case 'DATE':
      return 'DATE';
    case 'TIMESTAMP':
      return 'TIMESTAMP';
    case 'ARRAY':
      return `${duckType(t.element!)}[]`;
    case 'MAP':
      return `MAP(VARCHAR, ${duckType(t.value!)})`;
    case 'STRUCT':
      return `STRUCT(${t.fields!.map((f) => `"${f.name.replace(/"/g, '""')}" ${duckType(f)}`).join(', ')})`;
  }
}

const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** This process's DuckDB connection, made on first use. */
let shared: Promise<import('@duckdb/node-api').DuckDBConnection> | undefined;
/** The last call given the connection: the next waits for it (one statement at a time). */
let tail: Promise<unknown> = Promise.resolve();

async function connection(): Promise<import('@duckdb/node-api').DuckDBConnection> {
  let duckdb: typeof import('@duckdb/node-api');
  try {
    duckdb = await import('@duckdb/node-api');
  } catch (e) {
    throw new SluiceError(`a Parquet step file needs DuckDB to write it (${(e as Error).message}): npm install --save-dev @duckdb/node-api`, {
      retriable: false,
    });
  }
  return (await duckdb.DuckDBInstance.create(':memory:')).connect();
}

/**
 * Runs `f` on this process's one in-memory DuckDB connection, after every earlier call has ended.
 * The instance lives as long as the process. DuckDB (1.5, @duckdb/node-api) once aborted a whole
 * test run ("Attempted to dereference unique_ptr that is NULL!", thrown where nothing catches it)
 * in a process that had run out of file descriptors, with an instance made and closed around each
 * file; one instance keeps its files and threads once.
 */
export function withDuckDb<T>(f: (conn: import('@duckdb/node-api').DuckDBConnection) => Promise<T>): Promise<T> {
  const run = tail.then(async () => {
    shared ??= connection().catch((e: unknown) => {
      shared = undefined;
      throw e;
    });
    return f(await shared);
  });
  tail = run.catch(() => undefined);
  return run;
}

/** The bytes of one Parquet file holding `rows` with `schema`'s types, written by DuckDB. */
export async function parquetFileOf(schema: Schema, rows: ReadonlyArray<Record<string, unknown>>): Promise<Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-parquet-'));
  try {
    const input = join(dir, 'rows.json');
    const output = join(dir, 'rows.parquet');
    writeFileSync(input, recordLines(rows));
    const columns = `{${schema.columns.map((c) => `${quote(c.name)}: ${quote(duckType(c))}`).join(', ')}}`;
    const names = schema.columns.map((c) => `"${c.name.replace(/"/g, '""')}"`).join(', ');
    const from = rows.length
      ? `read_json(${quote(input)}, format='newline_delimited', columns=${columns})`
      : `(SELECT ${schema.columns.map((c) => `CAST(NULL AS ${duckType(c)}) AS "${c.name.replace(/"/g, '""')}"`).join(', ')} LIMIT 0)`;
    await withDuckDb((conn) => conn.run(`COPY (SELECT ${names} FROM ${from}) TO ${quote(output)} (FORMAT parquet)`));
    return readFileSync(output);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
