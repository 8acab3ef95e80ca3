/**
 * Lambda entry of a query written in SQL (docs/sql.md): the AvailableNowPipeline construct uses
 * it when `entry` is a .sql file, and has esbuild put that file's text in the bundle as the module
 * `sluice-sql-query` (its `text` loader, with an alias to the file: lib/infra/sql-entry.ts). As
 * lambdas/windowed-totals.ts, this file is the edge: it reads process.env once, when the
 * container starts, compiles the SQL to its plan then, and builds the handler.
 */
import sql from 'sluice-sql-query';
import { createScheduledHandlerFromEnv } from '../lib/api/lambda';
import type { ScheduledHandler } from '../lib/aws/lambda/handler';
import { compileSql } from '../lib/engine/sql';

// a bad environment (or a query the construct's synth would have refused) fails every invocation
// with a JSON line that says what to fix (createScheduledHandlerFromEnv)
export const handler: ScheduledHandler = createScheduledHandlerFromEnv(process.env, () => compileSql(sql));
