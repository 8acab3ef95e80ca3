/**
 * The scale-out schedule's starter: on each EventBridge tick, start one execution of the state
 * machine unless one is still running.
 *
 *     tick t0 ──▶ ListExecutions(RUNNING) = [] ──▶ StartExecution(name = <tick time>-<event id>)
 *     tick t1 ──▶ ListExecutions(RUNNING) = [run of t0] ──▶ skip ("run-still-running")
 *     EventBridge redelivers t1 ──▶ the same name: Step Functions starts no second execution
 *                                   (ExecutionAlreadyExists is "already-started")
 *
 * Listing then starting is not atomic: two starters racing (a tick and a hand-made invocation)
 * could both start one. The run's lease (DynamoDB, with its fencing token) keeps the second from
 * acting; this check only keeps executions from piling up behind a long run.
 */
import { ExecutionAlreadyExists, ListExecutionsCommand, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { InvalidOptionError } from '../../engine/errors';
import type { ScheduledEventLike } from './handler';

/** The two Step Functions calls the starter makes. */
export interface ExecutionsPort {
  /** The ARNs of the state machine's RUNNING executions (at most `limit`). */
  running(stateMachineArn: string, limit: number): Promise<string[]>;
  /** Starts an execution; `{ alreadyExists: true }` when one of that name exists (a redelivered tick). */
  start(stateMachineArn: string, name: string, input: string): Promise<{ executionArn?: string; alreadyExists: boolean }>;
}

export type StartOutcome =
  | { readonly outcome: 'started'; readonly executionArn: string; readonly name: string }
  | { readonly outcome: 'still-running'; readonly running: string }
  | { readonly outcome: 'already-started'; readonly name: string };

/** The port on the SDK client. */
export function sfnExecutions(client: SFNClient): ExecutionsPort {
  return {
    async running(stateMachineArn, limit) {
      const out = await client.send(new ListExecutionsCommand({ stateMachineArn, statusFilter: 'RUNNING', maxResults: limit }));
      return (out.executions ?? []).map((e) => e.executionArn ?? '?');
    },
    async start(stateMachineArn, name, input) {
      try {
        const out = await client.send(new StartExecutionCommand({ stateMachineArn, name, input }));
        return { executionArn: out.executionArn, alreadyExists: false };
      } catch (error) {
        if (error instanceof ExecutionAlreadyExists) return { alreadyExists: true };
        throw error;
      }
    },
  };
}

/**
 * The execution's name, which becomes the run's `runId`: the tick's time and EventBridge's event
 * id, so that names sort by time and a redelivered event maps to the same name. Step Functions
 * allows 1 to 80 of letters, digits, - and _ (no `:`).
 */
export function executionName(event: ScheduledEventLike | undefined, nowMs: number): string {
  const time = (event?.time && !Number.isNaN(Date.parse(event.time)) ? new Date(event.time) : new Date(nowMs))
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
  const id = event?.id ? event.id.replace(/[^A-Za-z0-9_-]/g, '') : `manual-${nowMs.toString(36)}`;
  return `${time}-${id}`.slice(0, 80);
}

/** Starts one execution of `stateMachineArn` for `event`, unless one is running. */
export async function startUnlessRunning(
  port: ExecutionsPort,
  stateMachineArn: string,
  event: ScheduledEventLike | undefined,
  nowMs: number,
): Promise<StartOutcome> {
  const running = await port.running(stateMachineArn, 1);
  if (running.length > 0) return { outcome: 'still-running', running: running[0] };
  const name = executionName(event, nowMs);
  const input = JSON.stringify({ tick: { id: event?.id ?? null, time: event?.time ?? new Date(nowMs).toISOString() } });
  const started = await port.start(stateMachineArn, name, input);
  if (started.alreadyExists) return { outcome: 'already-started', name };
  return { outcome: 'started', executionArn: started.executionArn ?? '?', name };
}

/** The handler, on a port and the state machine's ARN; logs one JSON line per tick. */
export function createStarter(port: ExecutionsPort, stateMachineArn: string, opts: { writeLine?: (line: string) => void; now?: () => number } = {}) {
  if (!/^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:stateMachine:[A-Za-z0-9_-]{1,80}$/.test(stateMachineArn)) {
    throw new InvalidOptionError(
      `SLUICE_STATE_MACHINE_ARN=${JSON.stringify(stateMachineArn)} is not a state machine ARN: the construct sets it to arn:aws:states:<region>:<account>:stateMachine:<name>`,
    );
  }
  const writeLine = opts.writeLine ?? ((line: string) => process.stdout.write(`${line}\n`));
  const now = opts.now ?? Date.now;
  return async (event?: ScheduledEventLike): Promise<StartOutcome> => {
    const outcome = await startUnlessRunning(port, stateMachineArn, event, now());
    writeLine(
      JSON.stringify({ level: 'info', event: outcome.outcome === 'started' ? 'run-started' : `run-${outcome.outcome}`, scheduledAt: event?.time, ...outcome }),
    );
    return outcome;
  };
}

/** The deployed entry: reads its one variable once, when the container starts. */
export const handler = (() => {
  const arn = process.env.SLUICE_STATE_MACHINE_ARN;
  if (arn === undefined)
    return async (): Promise<never> => {
      throw new InvalidOptionError('SLUICE_STATE_MACHINE_ARN is not set: the starter needs the ARN of the state machine it starts (the construct sets it)');
    };
  return createStarter(sfnExecutions(new SFNClient({})), arn);
})();
