/**
 * Lambda entry of the scale-out tasks (AvailableNowPipeline with `parallelism`) of a query written
 * in SQL: the construct uses it when `entry` is a .sql file, with the file's text bundled as the
 * module `sluice-sql-query`, as lambdas/sql-query.ts.
 */
import sql from 'sluice-sql-query';
import { createTaskLambdaFromEnv, type TaskLambda } from '../lib/aws/lambda/scale-out-handler';
import { compileSql } from '../lib/engine/sql';

export const handler: TaskLambda = createTaskLambdaFromEnv(process.env, () => compileSql(sql));
