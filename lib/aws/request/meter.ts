/**
 * What a set of SDK clients consumed, as AWS bills it: DynamoDB read and write request units (from
 * the `ConsumedCapacity` every DynamoDB response carries when asked with
 * `ReturnConsumedCapacity: 'TOTAL'`), DynamoDB requests, and S3 requests by price class.
 *
 * One middleware per client (`attachDynamoDbMeter`, `attachS3Meter`), added by lib/aws/clients.ts
 * to every client it builds, so no adapter asks or counts on its own. The meter only adds up:
 * `snapshot()` and `since(snapshot)` give what was consumed between two moments (clients live per
 * Lambda container, so a run's figures are the delta over the run).
 *
 * What it cannot see (documented in the README's cost section):
 * - a write refused by its condition (`ConditionalCheckFailedException`, a cancelled transaction)
 *   is billed by DynamoDB but answered with an error that carries no `ConsumedCapacity`: such
 *   requests are counted in `dynamodbRefusedWrites`, their units are not;
 * - requests sent by clients built elsewhere (a caller's own SDK client).
 */

import type { RunConsumption, RunReport } from '../../engine/run/types';

/** S3's two request price classes, and the free ones (DELETE, CANCEL). */
type S3RequestClass = 'put' | 'get' | 'free';

/**
 * What was consumed: the engine's RunConsumption (lib/engine/run/types.ts). `s3Requests.put` =
 * PUT, COPY, POST and LIST (ListObjectsV2 is a GET on the wire but priced as LIST); `get` = GET,
 * HEAD and every other; `free` = DELETE and aborting a multipart upload, which S3 does not charge.
 */
export type Consumption = RunConsumption;

/** Commands that accept ReturnConsumedCapacity, and whether their units are reads or writes. */
const DYNAMODB_UNIT_KIND: Readonly<Record<string, 'read' | 'write'>> = {
  GetItemCommand: 'read',
  QueryCommand: 'read',
  ScanCommand: 'read',
  BatchGetItemCommand: 'read',
  TransactGetItemsCommand: 'read',
  PutItemCommand: 'write',
  UpdateItemCommand: 'write',
  DeleteItemCommand: 'write',
  BatchWriteItemCommand: 'write',
  TransactWriteItemsCommand: 'write',
};

/** The price class of an S3 command (by its SDK name). */
function s3RequestClass(commandName: string): S3RequestClass {
  const name = commandName.replace(/Command$/, '');
  if (/^(Delete|AbortMultipartUpload)/.test(name)) return 'free';
  if (/^(Put|Copy|Post|List|CreateMultipartUpload|UploadPart|CompleteMultipartUpload|RestoreObject)/.test(name)) return 'put';
  return 'get';
}

/** What one DynamoDB request consumed, handed to listeners (the bench attributes units with it). */
export interface DynamoDbRequestRecord {
  readonly command: string;
  readonly input: Record<string, unknown>;
  readonly readUnits: number;
  readonly writeUnits: number;
  /** The request failed (after it was sent): its units, if any, are unknown. */
  readonly failed: boolean;
  /** Wall time from send to response, ms. */
  readonly ms: number;
}

export class RequestMeter {
  private writeUnits = 0;
  private readUnits = 0;
  private dynamodbRequests = 0;
  private dynamodbRefusedWrites = 0;
  private readonly s3 = { put: 0, get: 0, free: 0 };
  private readonly listeners = new Set<(r: DynamoDbRequestRecord) => void>();

  snapshot(): Consumption {
    return {
      writeUnits: this.writeUnits,
      readUnits: this.readUnits,
      dynamodbRequests: this.dynamodbRequests,
      dynamodbRefusedWrites: this.dynamodbRefusedWrites,
      s3Requests: { ...this.s3 },
    };
  }

  /** What was consumed since `before` (a snapshot of this meter). */
  since(before: Consumption): Consumption {
    return diffConsumption(this.snapshot(), before);
  }

  /** Called for every DynamoDB response or error; returns a function that removes the listener. */
  onDynamoDbRequest(listener: (r: DynamoDbRequestRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** @internal the middleware's entry */
  recordDynamoDb(command: string, input: Record<string, unknown>, consumed: unknown, failed: boolean, refused: boolean, ms: number): void {
    this.dynamodbRequests++;
    if (refused) this.dynamodbRefusedWrites++;
    const units = unitsOf(consumed, DYNAMODB_UNIT_KIND[command]);
    this.readUnits += units.read;
    this.writeUnits += units.write;
    if (this.listeners.size > 0) {
      const record: DynamoDbRequestRecord = { command, input, readUnits: units.read, writeUnits: units.write, failed, ms };
      for (const l of this.listeners) l(record);
    }
  }

  /** @internal the middleware's entry */
  recordS3(command: string): void {
    this.s3[s3RequestClass(command)]++;
  }
}

function diffConsumption(after: Consumption, before: Consumption): Consumption {
  const r = (x: number) => Math.round(x * 1000) / 1000; // units come in halves; keep float noise out
  return {
    writeUnits: r(after.writeUnits - before.writeUnits),
    readUnits: r(after.readUnits - before.readUnits),
    dynamodbRequests: after.dynamodbRequests - before.dynamodbRequests,
    dynamodbRefusedWrites: after.dynamodbRefusedWrites - before.dynamodbRefusedWrites,
    s3Requests: {
      put: after.s3Requests.put - before.s3Requests.put,
      get: after.s3Requests.get - before.s3Requests.get,
      free: after.s3Requests.free - before.s3Requests.free,
    },
  };
}

interface CapacityLike {
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
}

/**
 * Read and write units of a `ConsumedCapacity` (one object, or an array with one per table for
 * the batch and transaction commands). With TOTAL, DynamoDB may give only `CapacityUnits`; those
 * count as the command's kind (`kind`), the split fields when present win.
 */
function unitsOf(consumed: unknown, kind: 'read' | 'write' | undefined): { read: number; write: number } {
  let read = 0;
  let write = 0;
  const list = Array.isArray(consumed) ? consumed : consumed ? [consumed] : [];
  for (const c of list as CapacityLike[]) {
    if (!c || typeof c !== 'object') continue;
    const r = num(c.ReadCapacityUnits);
    const w = num(c.WriteCapacityUnits);
    if (r !== undefined || w !== undefined) {
      read += r ?? 0;
      write += w ?? 0;
    } else if (kind === 'read') read += num(c.CapacityUnits) ?? 0;
    else if (kind === 'write') write += num(c.CapacityUnits) ?? 0;
  }
  return { read, write };
}

const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);

/** The part of an SDK client the middleware needs. */
interface MiddlewareClient {
  middlewareStack: { add(mw: unknown, opts: Record<string, unknown>): void };
}

type Handler = (args: { input: Record<string, unknown> }) => Promise<{ output: Record<string, unknown> }>;
type Middleware = (next: Handler, context: { commandName?: string }) => Handler;

/**
 * Every command of `client` that accepts it is sent with `ReturnConsumedCapacity: 'TOTAL'` (unless
 * the caller asked for more, INDEXES), and what the response reports goes to `meter`.
 */
export function attachDynamoDbMeter(client: MiddlewareClient, meter: RequestMeter): void {
  const mw: Middleware = (next, context) => async (args) => {
    const command = context.commandName ?? '?';
    const metered = DYNAMODB_UNIT_KIND[command] !== undefined;
    const input = metered && args.input.ReturnConsumedCapacity === undefined ? { ...args.input, ReturnConsumedCapacity: 'TOTAL' } : args.input;
    const t0 = performance.now();
    try {
      const result = await next({ ...args, input });
      meter.recordDynamoDb(command, input, result.output?.ConsumedCapacity, false, false, performance.now() - t0);
      return result;
    } catch (error) {
      const name = (error as { name?: string })?.name;
      const refused = name === 'ConditionalCheckFailedException' || name === 'TransactionCanceledException';
      // A cancelled transaction's error may carry the units (CancellationReasons do not; some
      // services attach ConsumedCapacity): take them when there.
      meter.recordDynamoDb(command, input, (error as { ConsumedCapacity?: unknown })?.ConsumedCapacity, true, refused, performance.now() - t0);
      throw error;
    }
  };
  // initialize: before serialization (the parameter must be in the request), outermost, so it
  // sees each send's final output or error once.
  client.middlewareStack.add(mw, { step: 'initialize', priority: 'high', name: 'sluiceConsumedCapacity' });
}

/** Every request of `client` is counted in `meter` by S3 price class. */
export function attachS3Meter(client: MiddlewareClient, meter: RequestMeter): void {
  const mw: Middleware = (next, context) => async (args) => {
    meter.recordS3(context.commandName ?? '?');
    return next(args);
  };
  client.middlewareStack.add(mw, { step: 'initialize', priority: 'high', name: 'sluiceS3RequestMeter' });
}

/**
 * Makes every `run()` of `executor` report what it consumed (`RunReport.consumed`): the delta of
 * `meter` over the run, lease and its release included. The clients of a Lambda container serve
 * one run at a time; runs sharing clients concurrently would see each other's requests.
 */
export function meterRuns<E extends { run(opts?: never): Promise<RunReport> }>(executor: E, meter: RequestMeter): E {
  const run = executor.run.bind(executor) as (opts?: unknown) => Promise<RunReport>;
  (executor as { run: (opts?: unknown) => Promise<RunReport> }).run = async (opts) => {
    const before = meter.snapshot();
    const report = await run(opts);
    return { ...report, consumed: meter.since(before) };
  };
  return executor;
}
