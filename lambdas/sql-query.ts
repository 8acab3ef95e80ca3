/**
 * Lambda entry of a query written in SQL (docs/sql.md): the AvailableNowPipeline construct uses
 * it when `entry` is a .sql file, and has esbuild put that file's text in the bundle as the module
 * `sluice-sql-query` (its `text` loader, with an alias to the file: lib/infra/sql-entry.ts). As
 * lambdas/windowed-totals.ts, this file is the edge: it reads process.env once, when the
 * container starts, compiles the SQL to its plan then, and builds the handler.
 */
import sql from 'sluice-sql-query';
import { createScheduledHandler, failingHandler, type ScheduledHandler } from '../lib/aws/lambda/handler';
import { lambdaEnvironmentFrom } from '../lib/aws/lambda/env';
import { compileSql } from '../lib/engine/sql';

function build(env: NodeJS.ProcessEnv): ScheduledHandler {
  const { config, connection, metricsNamespace, pipelineName, logDataValues } = lambdaEnvironmentFrom(env);
  return createScheduledHandler(compileSql(sql), config, connection, { metricsNamespace, pipelineName, logDataValues });
}

function buildOrFail(env: NodeJS.ProcessEnv): ScheduledHandler {
  try {
    return build(env);
  } catch (error) {
    // a bad environment (or a query the construct's synth would have refused) fails every
    // invocation with a JSON line that says what to fix
    return failingHandler(error);
  }
}

export const handler: ScheduledHandler = buildOrFail(process.env);
