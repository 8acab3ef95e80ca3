/**
 * One base error for the whole project. Every message states the value received, the rule it
 * broke and the remedy. `retriable` tells a caller (the Lambda handler, a retry loop) whether the
 * same call may succeed later.
 */
export class SluiceError extends Error {
  readonly retriable: boolean;
  readonly details: Record<string, unknown>;

  constructor(message: string, opts: { cause?: unknown; retriable?: boolean; details?: Record<string, unknown> } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.retriable = opts.retriable ?? false;
    this.details = opts.details ?? {};
  }
}

/** The query cannot run as written (Spark's analysis and unsupported-operation rules). */
export class InvalidQueryError extends SluiceError {}

/** A value in the schema, an option or a duration does not parse. */
export class InvalidOptionError extends SluiceError {}

/** The checkpoint belongs to a query of another stateful shape, or is damaged. */
export class CheckpointMismatchError extends SluiceError {}

/** The lease expired or was taken over while this run held it: stop before acting further. */
export class LeaseLostError extends SluiceError {}

/** The source lost data the checkpoint still points at (retention expired, objects deleted). */
export class DataLossError extends SluiceError {}

/** A crash injected by a test at a named point (see lib/engine/testing/crash.ts). */
export class InjectedCrash extends SluiceError {
  constructor(
    readonly point: string,
    batchId: number,
  ) {
    super(`injected crash at ${point} in batch ${batchId} (test-only failure injection)`, { details: { point, batchId } });
  }
}
