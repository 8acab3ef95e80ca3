/**
 * A pipeline whose query is a .sql file (docs/sql.md): the construct's Lambda runs
 * lambdas/sql-query.ts (and, with `parallelism`, lambdas/sql-query-tasks.ts), and esbuild bundles
 * the file's text into it as the module `sluice-sql-query` (an alias to the file, read by the
 * `text` loader): no generated file, and only the engine's SQL compiler added to the bundle. The
 * SQL is compiled at synth too, so a query with an error fails `cdk synth` with its line and
 * column, and its `SET queryName` names the query. No CDK imports.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { QueryPlan } from '../engine/plan/types';
import { compileSql } from '../engine/sql';

/** The repository root (two levels above lib/infra). */
const REPO_ROOT = path.resolve(__dirname, '..', '..');
const sourceFile = (name: string) =>
  [path.join(REPO_ROOT, 'lambdas', `${name}.ts`), path.join(REPO_ROOT, 'lambdas', `${name}.js`)].find((f) => fs.existsSync(f)) ??
  path.join(REPO_ROOT, 'lambdas', `${name}.ts`);

/** The Lambda entry of a .sql query, and of its scale-out tasks. */
export const SQL_ENTRY = sourceFile('sql-query');
export const SQL_TASK_ENTRY = sourceFile('sql-query-tasks');

/** Whether `entry` is a query in SQL rather than a Lambda entry module. */
export function isSqlEntry(entry: string): boolean {
  return /\.sql$/i.test(entry);
}

/** The plan of the query in `file` (named by its SET queryName, else 'query'); throws the compiler's error for a bad query. */
export function sqlQueryPlan(file: string): QueryPlan {
  return compileSql(fs.readFileSync(file, 'utf8'));
}

/** What esbuild needs to put `file` in the bundle as the module `sluice-sql-query`. */
export function sqlBundling(file: string): { loader: Record<string, string>; esbuildArgs: Record<string, string> } {
  return { loader: { '.sql': 'text' }, esbuildArgs: { '--alias': `sluice-sql-query=${path.resolve(file)}` } };
}
