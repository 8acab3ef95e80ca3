/**
 * The scale-out Lambdas' own logic: the task Lambda's event check and dispatch, and the starter's
 * "start unless one is running", on an in-memory twin of the two Step Functions calls.
 */
import {
  InvalidTaskEventError,
  createTaskLambda,
  createTaskLambdaFromEnv,
  failingTaskLambda,
  maxSplitsFromEnv,
  parseTaskEvent,
  statePartitionsFromEnv,
} from '../../lib/aws/lambda/scale-out-handler';
import { createStarter, executionName, startUnlessRunning, type ExecutionsPort } from '../../lib/aws/lambda/scale-out-starter';
import type { TaskEvent } from '../../lib/scale/contract';
import { SluiceError } from '../../lib/engine/errors';

describe('the task Lambda', () => {
  it('passes each of the four events through with only the fields of its action', () => {
    expect(parseTaskEvent({ action: 'plan', runId: 'r1', extra: 1 })).toEqual({ action: 'plan', runId: 'r1' });
    expect(parseTaskEvent({ action: 'read', runId: 'r1', batchId: 3, split: 0 })).toEqual({ action: 'read', runId: 'r1', batchId: 3, split: 0 });
    expect(parseTaskEvent({ action: 'partition', runId: 'r1', batchId: 0, partition: 7 })).toEqual({
      action: 'partition',
      runId: 'r1',
      batchId: 0,
      partition: 7,
    });
    expect(parseTaskEvent({ action: 'commit', runId: 'r1', batchId: 2 })).toEqual({ action: 'commit', runId: 'r1', batchId: 2 });
  });

  it.each([
    [{ action: 'merge', runId: 'r' }, /action "merge"/],
    [{ action: 'read', runId: 'r', batchId: 1 }, /split undefined/],
    [{ action: 'partition', runId: 'r', batchId: -1, partition: 0 }, /batchId -1/],
    [{ action: 'commit', runId: '', batchId: 1 }, /runId ""/],
    [[1, 2], /is not an object/],
  ])('refuses %j, naming the field', (event, message) => {
    expect(() => parseTaskEvent(event)).toThrow(InvalidTaskEventError);
    expect(() => parseTaskEvent(event)).toThrow(message);
  });

  it('returns the handler result and logs one line per task; a failure is logged, then rethrown', async () => {
    const lines: string[] = [];
    let t = 1000;
    const seen: TaskEvent[] = [];
    const lambda = createTaskLambda(
      async (e) => {
        seen.push(e);
        t += 25;
        if (e.action === 'commit') throw new SluiceError('commit of batch 4 lost its lease', { retriable: true, details: { key: 'user-12345' } });
        return { ok: true };
      },
      { writeLine: (l) => lines.push(l), now: () => t },
    );
    await expect(lambda({ action: 'read', runId: 'r', batchId: 4, split: 2 })).resolves.toEqual({ ok: true });
    await expect(lambda({ action: 'commit', runId: 'r', batchId: 4 })).rejects.toThrow('lost its lease');
    expect(seen.map((e) => e.action)).toEqual(['read', 'commit']);
    const [ok, failed] = lines.map((l) => JSON.parse(l));
    expect(ok).toMatchObject({ event: 'task', action: 'read', batchId: 4, split: 2, durationMs: 25 });
    expect(failed).toMatchObject({ level: 'error', event: 'task-failed', action: 'commit', retriable: true, details: { key: '<redacted>' } });
  });

  it('redacts the data values of a failed task in the error it rethrows, which the runtime logs and Step Functions keeps as the cause', async () => {
    const lines: string[] = [];
    const failing = (logDataValues: boolean) =>
      createTaskLambda(
        async () => {
          throw new SluiceError('state item of key alice@example.com is over 400 KB', { retriable: false, details: { key: 'alice@example.com', batchId: 3 } });
        },
        { writeLine: (l) => lines.push(l), logDataValues },
      );
    const thrown = await failing(false)({ action: 'partition', runId: 'r', batchId: 3, partition: 1 }).then(
      () => null,
      (e: unknown) => e as SluiceError,
    );
    if (!thrown) throw new Error('the task did not fail');
    // what leaves the function: the error's message, stack, details and the log line
    for (const text of [thrown.message, thrown.stack ?? '', JSON.stringify(thrown.details), lines[0]]) expect(text).not.toContain('alice@example.com');
    expect(thrown.details).toMatchObject({ key: '<redacted>', batchId: 3 });
    expect(JSON.parse(lines[0])).toMatchObject({ redacted: { fields: ['key'] } });
    // SLUICE_LOG_VALUES keeps them
    const kept = await failing(true)({ action: 'partition', runId: 'r', batchId: 3, partition: 1 }).then(
      () => null,
      (e: unknown) => e as SluiceError,
    );
    expect(kept?.message).toContain('alice@example.com');
  });

  it('reads the state partitions the construct sets, refusing a value the engine cannot run', () => {
    expect(statePartitionsFromEnv({ SLUICE_STATE_PARTITIONS: '4' })).toBe(4);
    for (const bad of [undefined, '0', '257', '2.5', 'four'])
      expect(() => statePartitionsFromEnv({ SLUICE_STATE_PARTITIONS: bad })).toThrow(/SLUICE_STATE_PARTITIONS=.* must be a whole number from 1 to 256/);
  });

  it('reads the most splits a batch fans out to, the engine default when unset', () => {
    expect(maxSplitsFromEnv({ SLUICE_MAX_SPLITS: '64' })).toBe(64);
    expect(maxSplitsFromEnv({})).toBeUndefined();
    for (const bad of ['0', '10001', '1.5', 'many'])
      expect(() => maxSplitsFromEnv({ SLUICE_MAX_SPLITS: bad })).toThrow(/SLUICE_MAX_SPLITS=.* must be a whole number from 1 to 10000/);
  });

  it('fails every task of an entry whose configuration cannot work, saying so', async () => {
    const lines: string[] = [];
    const lambda = failingTaskLambda(new SluiceError('SLUICE_SINK_URI is missing'), (l) => lines.push(l));
    await expect(lambda({ action: 'read', runId: 'r', batchId: 0, split: 0 })).rejects.toThrow('SLUICE_SINK_URI is missing');
    expect(JSON.parse(lines[0])).toMatchObject({
      level: 'error',
      event: 'task-failed',
      action: 'read',
      retriable: false,
      message: 'SLUICE_SINK_URI is missing',
    });
  });
});

/** Step Functions' executions of one state machine, in memory. */
function executionsTwin(runningAtStart: string[] = []) {
  const running = [...runningAtStart];
  const names = new Set<string>();
  const started: Array<{ name: string; input: string }> = [];
  const port: ExecutionsPort = {
    async running(_arn, limit) {
      return running.slice(0, limit);
    },
    async start(arn, name, input) {
      if (names.has(name)) return { alreadyExists: true };
      names.add(name);
      started.push({ name, input });
      const executionArn = `${arn.replace(':stateMachine:', ':execution:')}:${name}`;
      running.push(executionArn);
      return { executionArn, alreadyExists: false };
    },
  };
  return { port, running, started, finishAll: () => running.splice(0) };
}

const ARN = 'arn:aws:states:eu-west-1:123456789012:stateMachine:Runs';
const tick = (id: string, time: string) => ({ id, time, 'detail-type': 'Scheduled Event', source: 'aws.events' });

describe('the starter', () => {
  it('names the execution after the tick time and the event id, without characters Step Functions refuses', () => {
    expect(executionName(tick('6a7e8f22-1111-2222-3333-444455556666', '2026-12-01T18:15:00Z'), 0)).toBe(
      '20261201T181500Z-6a7e8f22-1111-2222-3333-444455556666',
    );
    expect(executionName(undefined, Date.UTC(2026, 0, 2, 3, 4, 5))).toBe(`20260102T030405Z-manual-${Date.UTC(2026, 0, 2, 3, 4, 5).toString(36)}`);
  });

  it('starts a run when none is running, and skips the ticks while it runs', async () => {
    const sfn = executionsTwin();
    const first = await startUnlessRunning(sfn.port, ARN, tick('a', '2026-12-01T18:00:00Z'), 0);
    expect(first).toMatchObject({ outcome: 'started', name: '20261201T180000Z-a' });
    expect(await startUnlessRunning(sfn.port, ARN, tick('b', '2026-12-01T18:15:00Z'), 0)).toEqual({
      outcome: 'still-running',
      running: `${ARN.replace(':stateMachine:', ':execution:')}:20261201T180000Z-a`,
    });
    sfn.finishAll();
    expect(await startUnlessRunning(sfn.port, ARN, tick('c', '2026-12-01T18:30:00Z'), 0)).toMatchObject({ outcome: 'started', name: '20261201T183000Z-c' });
    expect(sfn.started.map((s) => s.name)).toEqual(['20261201T180000Z-a', '20261201T183000Z-c']);
    expect(JSON.parse(sfn.started[0].input)).toEqual({ tick: { id: 'a', time: '2026-12-01T18:00:00Z' } });
  });

  it('starts no second execution for a redelivered tick', async () => {
    const sfn = executionsTwin();
    await startUnlessRunning(sfn.port, ARN, tick('a', '2026-12-01T18:00:00Z'), 0);
    sfn.finishAll();
    expect(await startUnlessRunning(sfn.port, ARN, tick('a', '2026-12-01T18:00:00Z'), 0)).toEqual({ outcome: 'already-started', name: '20261201T180000Z-a' });
    expect(sfn.started).toHaveLength(1);
  });

  it('logs what it did, and refuses an ARN that is not a state machine', async () => {
    const lines: string[] = [];
    const start = createStarter(executionsTwin(['arn:running']).port, ARN, { writeLine: (l) => lines.push(l) });
    await start(tick('x', '2026-12-01T18:00:00Z'));
    expect(JSON.parse(lines[0])).toMatchObject({ event: 'run-still-running', running: 'arn:running', scheduledAt: '2026-12-01T18:00:00Z' });
    expect(() => createStarter(executionsTwin().port, 'arn:aws:lambda:eu-west-1:123456789012:function:f')).toThrow(/not a state machine ARN/);
  });
});

describe('the task Lambda from its environment', () => {
  it('fails every task, saying which variable to fix, when the environment cannot work', async () => {
    const lines: string[] = [];
    const lambda = createTaskLambdaFromEnv(
      { SLUICE_STATE_TABLE: 't' },
      () => {
        throw new Error('the query is not built when the environment is bad');
      },
      { writeLine: (l) => lines.push(l) },
    );
    await expect(lambda({ action: 'plan', runId: 'r' })).rejects.toThrow(/SLUICE_CHECKPOINT_URI/);
    expect(JSON.parse(lines[0])).toMatchObject({ event: 'task-failed', action: 'plan', retriable: false });
  });

  it('refuses an environment without the state partitions the construct sets', async () => {
    const env = {
      SLUICE_CHECKPOINT_URI: 's3://my-bucket/checkpoints/q',
      SLUICE_STATE_TABLE: 'state',
      SLUICE_SOURCE_URI: 's3://my-bucket/landing/q',
      SLUICE_SINK_URI: 's3://my-bucket/output/q',
      AWS_REGION: 'eu-west-1',
    };
    const lambda = createTaskLambdaFromEnv(env, () => ({}) as never, { writeLine: () => undefined });
    await expect(lambda({ action: 'plan', runId: 'r' })).rejects.toThrow(/SLUICE_STATE_PARTITIONS=undefined/);
  });
});
