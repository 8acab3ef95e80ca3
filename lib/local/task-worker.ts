/**
 * A worker thread of a local partitioned run (`--workers N`): it builds the query's plan and its
 * AWS clients once, as a Lambda container does, then runs the tasks its parent posts, each on a
 * PartitionedRun of its own (lib/engine/schedule/partitioned.ts), and posts back each result or error.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { buildExecutor } from '../aws/pipeline';
import { createClients } from '../aws/clients';
import { DynamoDbStateCache } from '../aws/dynamodb/state-cache';
import { partitionedTasks, type TaskEvent } from '../engine/schedule/driver';
import { RunMemo } from '../engine/schedule/run-memo';
import { CrashInjector, parseCrashPlan } from '../engine/testing/crash';
import { planFromRecipe, type TaskMessage, type WorkerInit } from './workers';

const init = workerData as WorkerInit;
const plan = planFromRecipe(init.plan);
const clients = createClients(init.connection);
// what the state store read or wrote, for the next task on this thread (as a Lambda container keeps it)
const stateCache = new DynamoDbStateCache();
const memo = new RunMemo();
// a crash plan's injector per run: a point fires in the first task of this worker's share of the run that reaches it
const injectors = new Map<string, CrashInjector>();

function handlerFor(msg: TaskMessage) {
  let crash: CrashInjector | undefined;
  if (msg.crash) {
    crash = injectors.get(msg.event.runId);
    if (!crash) injectors.set(msg.event.runId, (crash = new CrashInjector(parseCrashPlan(msg.crash)!)));
  }
  const offset = msg.clockOffsetMs ?? 0;
  const processingTimeMs = msg.processingTimeMs;
  const processingClock = processingTimeMs === undefined ? undefined : { now: () => processingTimeMs };
  return partitionedTasks(() =>
    buildExecutor(init.connection, plan, msg.config ?? init.config, {
      clients,
      crash,
      stateCache,
      clock: { now: () => Date.now() + offset },
      ...(processingClock ? { processingClock } : {}),
    }).partitioned({ maxSplits: init.maxSplits, memo }),
  );
}

parentPort!.on('message', async (msg: TaskMessage | { close: true }) => {
  if ('close' in msg) {
    clients.destroy();
    process.exit(0);
  }
  try {
    const result = await handlerFor(msg)(msg.event as TaskEvent);
    parentPort!.postMessage({ id: msg.id, result });
  } catch (e) {
    const err = e as Error & { retriable?: boolean; point?: string; details?: { batchId?: number } };
    parentPort!.postMessage({
      id: msg.id,
      error: { name: err.constructor?.name ?? err.name, message: err.message, retriable: err.retriable, point: err.point, batchId: err.details?.batchId },
    });
  }
});
