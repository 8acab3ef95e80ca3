/**
 * CDK assertions on AvailableNowPipeline with `parallelism` (lib/infra/scale-out.ts): the state
 * machine and its Distributed Maps, the task Lambda, the starter the schedule invokes, the IAM of
 * each, and the execution alarms. Without `parallelism` none of it exists (and the rest of the
 * template is the one test/infra/available-now-pipeline.test.ts checks).
 */
import { App, type CfnElement, Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AvailableNowPipeline, type AvailableNowPipelineProps, NO_RETRY, PipelineSource, TASK_RETRY } from '../../lib/infra/available-now-pipeline';
import { STARTER_ENTRY, DEFAULT_TASK_ENTRY } from '../../lib/infra/scale-out';
import { definitionFromTemplate, type AslDefinition, type AslState } from '../../lib/local/state-machine';
import { bundledFiles, commandsSent } from '../helpers/sdk-commands';
import { flat, roleStatements, statements, type FlatStatement, rejectionOf } from '../helpers/template';
import { validationFindings } from '../helpers/validation';

jest.setTimeout(60_000);

const ACCOUNT = '123456789012';
const REGION = 'eu-west-1';

interface Synth {
  readonly stack: Stack;
  readonly pipeline: AvailableNowPipeline;
  readonly template: Template;
  readonly id: (element: unknown) => string;
  readonly definition: () => AslDefinition;
}

/** A stack `Test` with one pipeline `Pipeline`; nothing bundled (the tests read the template, not the code). */
function synth(props: AvailableNowPipelineProps, opts: { validate?: boolean } = {}): Synth {
  const app = new App({ builtinCloudFormationValidation: opts.validate ?? false, context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test', { env: { account: ACCOUNT, region: REGION } });
  const pipeline = new AvailableNowPipeline(stack, 'Pipeline', props);
  const template = Template.fromStack(stack);
  const id = (element: unknown) => stack.getLogicalId((element as { node: { defaultChild: CfnElement } }).node.defaultChild);
  const definition = () => definitionFromTemplate(template.toJSON() as { Resources: never }, { region: REGION, accountId: ACCOUNT });
  return { stack, pipeline, template, id, definition };
}

const rejection = (props: AvailableNowPipelineProps): string => rejectionOf(() => synth(props));

/** Every state of a definition, nested ones included. */
function allStates(def: AslDefinition): Array<[string, AslState]> {
  return Object.entries(def.States).flatMap(([name, s]) => [[name, s] as [string, AslState], ...(s.ItemProcessor ? allStates(s.ItemProcessor) : [])]);
}

const key = (x: FlatStatement) => JSON.stringify(x);
const sortedKeys = (xs: FlatStatement[]) => xs.map(key).sort();

describe('with parallelism { statePartitions: 4, readConcurrency: 8 } on the defaults', () => {
  let s: Synth;
  let def: AslDefinition;
  let fn: string;
  let machine: string;
  let starter: string;
  beforeAll(() => {
    s = synth({ parallelism: { statePartitions: 4, readConcurrency: 8 } }, { validate: true });
    def = s.definition();
    fn = s.id(s.pipeline.scaleOut!.taskFunction);
    machine = s.id(s.pipeline.scaleOut!.stateMachine);
    starter = s.id(s.pipeline.scaleOut!.starter);
  });

  it('deploys one Standard state machine, stopped after 4 task timeouts (= 4 intervals of 15 min)', () => {
    s.template.resourceCountIs('AWS::StepFunctions::StateMachine', 1);
    s.template.hasResourceProperties('AWS::StepFunctions::StateMachine', { StateMachineType: 'STANDARD' });
    expect(def.TimeoutSeconds).toBe(3600);
  });

  it('plans, and when plan says done succeeds, else reads, partitions and commits, and loops while commit says more', () => {
    expect(def.StartAt).toBe('Plan');
    const st = def.States;
    expect(st.Plan).toMatchObject({ Type: 'Task', Next: 'PlanDone', ResultPath: '$.plan' });
    expect(st.Plan.Parameters).toEqual({
      FunctionName: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${fn}`,
      Payload: { action: 'plan', 'runId.$': '$$.Execution.Name' },
    });
    expect(st.PlanDone).toEqual({ Type: 'Choice', Choices: [{ Variable: '$.plan.done', BooleanEquals: true, Next: 'RunDone' }], Default: 'Read' });
    expect(st.Read).toMatchObject({ Type: 'Map', Next: 'Partition' });
    expect(st.Partition).toMatchObject({ Type: 'Map', Next: 'Commit' });
    expect(st.Commit).toMatchObject({ Type: 'Task', Next: 'MoreBatches', ResultPath: '$.commit' });
    expect((st.Commit.Parameters as { Payload: unknown }).Payload).toEqual({ action: 'commit', 'runId.$': '$$.Execution.Name', 'batchId.$': '$.plan.batchId' });
    expect(st.MoreBatches).toEqual({ Type: 'Choice', Choices: [{ Variable: '$.commit.more', BooleanEquals: true, Next: 'Plan' }], Default: 'RunDone' });
    expect(st.RunDone.Type).toBe('Succeed');
  });

  it("reads and partitions in DISTRIBUTED maps over the plan's own items, with the MaxConcurrency given, discarding their results", () => {
    const expected = {
      Read: { items: '$.plan.splits', action: 'read', field: 'split', concurrency: 8, task: 'ReadSplit' },
      Partition: { items: '$.plan.partitions', action: 'partition', field: 'partition', concurrency: 4, task: 'MergePartition' }, // default: statePartitions
    };
    for (const [name, e] of Object.entries(expected)) {
      const map = def.States[name];
      expect(map.ItemProcessor!.ProcessorConfig).toEqual({ Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' });
      expect(map.ItemsPath).toBe(e.items);
      expect(map.MaxConcurrency).toBe(e.concurrency);
      expect(map.ResultPath).toBeNull();
      expect(map.ItemSelector).toEqual({
        action: e.action,
        'runId.$': '$$.Execution.Name',
        'batchId.$': '$.plan.batchId',
        [`${e.field}.$`]: `$$.Map.Item.Value.${e.field}`,
      });
      for (const absent of ['ItemReader', 'ItemBatcher', 'ResultWriter', 'ToleratedFailurePercentage', 'ToleratedFailureCount'])
        expect(map[absent]).toBeUndefined();
      expect(Object.keys(map.ItemProcessor!.States)).toEqual([e.task]);
      expect(map.ItemProcessor!.States[e.task]).toMatchObject({
        Type: 'Task',
        End: true,
        ResultSelector: { 'ok.$': '$.Payload.ok' },
        Parameters: { 'Payload.$': '$' },
      });
    }
  });

  it('invokes the one task Lambda from every task, retrying service errors, then any error but the permanent ones, with a timeout', () => {
    const tasks = allStates(def).filter(([, st]) => st.Type === 'Task');
    expect(tasks.map(([n]) => n).sort()).toEqual(['Commit', 'MergePartition', 'Plan', 'ReadSplit']);
    for (const [, task] of tasks) {
      expect(task.Resource).toBe('arn:aws:states:::lambda:invoke');
      expect((task.Parameters as { FunctionName: string }).FunctionName).toBe(`arn:aws:lambda:${REGION}:${ACCOUNT}:function:${fn}`);
      expect(task.TimeoutSeconds).toBe(900 + 30);
      const retry = task.Retry as Array<{ ErrorEquals: string[]; MaxAttempts?: number; IntervalSeconds?: number; BackoffRate?: number }>;
      expect(retry[0].ErrorEquals).toContain('Lambda.ServiceException');
      expect(retry[1]).toEqual({ ErrorEquals: [...NO_RETRY], MaxAttempts: 0 });
      expect(retry[2]).toEqual({
        ErrorEquals: ['States.ALL'],
        MaxAttempts: TASK_RETRY.maxAttempts,
        IntervalSeconds: TASK_RETRY.intervalSeconds,
        BackoffRate: TASK_RETRY.backoffRate,
      });
      expect(retry).toHaveLength(3); // States.ALL last, as Step Functions requires
    }
  });

  it("runs the task Lambda on the pipeline's role and environment, with the state partitions, 900 s, no reserved concurrency", () => {
    const fns = s.template.findResources('AWS::Lambda::Function');
    const task = fns[fn].Properties;
    const single = fns[s.id(s.pipeline.function)].Properties;
    expect(task.Role).toEqual(single.Role);
    expect(task.Timeout).toBe(900);
    expect(task.MemorySize).toBe(1024);
    expect(task.ReservedConcurrentExecutions).toBeUndefined();
    expect(task.Handler).toBe('index.handler');
    expect(Object.fromEntries(Object.entries(task.Environment.Variables).map(([k, v]) => [k, flat(v)]))).toEqual({
      ...Object.fromEntries(Object.entries(single.Environment.Variables).map(([k, v]) => [k, flat(v)])),
      SLUICE_STATE_PARTITIONS: '4',
      SLUICE_MAX_SPLITS: '8',
      // plan, a read wave, one partition wave (4 partitions, 4 at once), commit: 4 tasks of 900 s, + 60
      SLUICE_LEASE_SECONDS: String(4 * 900 + 60),
    });
    expect(single.Environment.Variables.SLUICE_LEASE_SECONDS).toBe('660');
  });

  it('schedules the starter, not the single Lambda, which stays for runs by hand', () => {
    s.template.resourceCountIs('AWS::Events::Rule', 1);
    s.template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(15 minutes)',
      Targets: [
        Match.objectLike({ Arn: { 'Fn::GetAtt': [starter, 'Arn'] }, DeadLetterConfig: { Arn: { 'Fn::GetAtt': [s.id(s.pipeline.failureQueue), 'Arn'] } } }),
      ],
    });
    const fns = s.template.findResources('AWS::Lambda::Function');
    expect(fns[starter].Properties).toMatchObject({
      ReservedConcurrentExecutions: 1,
      Timeout: 30,
      Environment: { Variables: { SLUICE_STATE_MACHINE_ARN: { Ref: machine } } },
    });
    expect(fns[s.id(s.pipeline.function)].Properties.Description).toMatch(/by hand only/);
    s.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: starter },
      MaximumRetryAttempts: 0,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [s.id(s.pipeline.failureQueue), 'Arn'] } } },
    });
  });

  it('lets the state machine invoke the task Lambda and manage its own child executions, nothing else', () => {
    const role = s.id(s.pipeline.scaleOut!.stateMachine.role);
    const executions =
      `arn:aws:states:${REGION}:${ACCOUNT}:execution:{${JSON.stringify({ 'Fn::Select': [6, { 'Fn::Split': [':', { Ref: machine }] }] })}}`.replace(
        'arn:aws',
        'arn:AWS::Partition',
      );
    expect(sortedKeys(roleStatements(s.template, role))).toEqual(
      sortedKeys([
        { actions: ['lambda:InvokeFunction'], resources: [`${fn}.Arn`, `${fn}.Arn:*`] },
        { actions: ['states:StartExecution'], resources: [machine] },
        { actions: ['states:DescribeExecution', 'states:StopExecution'], resources: [`${executions}:*`] },
        { actions: ['states:RedriveExecution'], resources: [`${executions}/*:*`] },
      ]),
    );
  });

  it('lets the starter list and start executions of this state machine only', () => {
    const role = s.id(s.pipeline.scaleOut!.starterRole);
    expect(sortedKeys(roleStatements(s.template, role))).toEqual(
      sortedKeys([
        { actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [`${s.id(s.pipeline.scaleOut!.starterLogGroup)}.Arn`] },
        { actions: ['states:ListExecutions', 'states:StartExecution'], resources: [machine] },
        { actions: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'], resources: [`${s.id(s.pipeline.failureQueue)}.Arn`] },
      ]),
    );
  });

  it("adds to the pipeline's role only the task Lambda's log group and the shuffle beside the checkpoint", () => {
    const without = synth({});
    const before = new Set(roleStatements(without.template, without.id(without.pipeline.role)).map(key));
    const added = roleStatements(s.template, s.id(s.pipeline.role)).filter((st) => !before.has(key(st)));
    const bucket = s.id(s.pipeline.pipelineBucket);
    expect(sortedKeys(added)).toEqual(
      sortedKeys([
        { actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [`${s.id(s.pipeline.scaleOut!.taskLogGroup)}.Arn`] },
        { actions: ['s3:DeleteObject', 's3:GetObject', 's3:PutObject'], resources: [`${bucket}.Arn/checkpoints/Test-Pipeline-shuffle/*`] },
        { actions: ['s3:ListBucket'], resources: [`${bucket}.Arn`], condition: { StringLike: { 's3:prefix': ['checkpoints/Test-Pipeline-shuffle/*'] } } },
      ]),
    );
  });

  it('uses no Resource "*"', () => {
    expect(statements(s.template).filter((st) => st.resources.includes('*'))).toEqual([]);
  });

  it('alarms on failed, timed-out and longer-than-the-interval executions of its state machine', () => {
    s.template.resourceCountIs('AWS::CloudWatch::Alarm', 9 + 3);
    const onMachine = (metric: string, statistic: string, threshold: number, comparison: string) =>
      s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/States',
        MetricName: metric,
        Dimensions: [{ Name: 'StateMachineArn', Value: { Ref: machine } }],
        Statistic: statistic,
        Period: 900,
        Threshold: threshold,
        ComparisonOperator: comparison,
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      });
    onMachine('ExecutionsFailed', 'Sum', 1, 'GreaterThanOrEqualToThreshold');
    onMachine('ExecutionsTimedOut', 'Sum', 1, 'GreaterThanOrEqualToThreshold');
    onMachine('ExecutionTime', 'Maximum', 900_000, 'GreaterThanThreshold');
    expect(Object.keys(s.pipeline.alarms)).toEqual(expect.arrayContaining(['executionFailed', 'executionTimedOut', 'executionDuration']));
  });

  it('draws the executions on the dashboard', () => {
    const body = flat(Object.values(s.template.findResources('AWS::CloudWatch::Dashboard'))[0].Properties.DashboardBody);
    for (const metric of ['ExecutionsStarted', 'ExecutionsSucceeded', 'ExecutionsFailed', 'ExecutionsTimedOut', 'ExecutionTime'])
      expect(body).toContain(`"AWS/States","${metric}"`);
  });

  // The findings of the synth-time validation are not Annotations: read from its report (test/helpers/validation.ts;
  // its negative control is in test/infra/available-now-pipeline.test.ts).
  it('passes CloudFormation template validation without a warning', () => {
    expect(validationFindings(s.stack)).toEqual([]);
  });

  it('adds no construct warning (Annotations)', () => {
    const warnings = Annotations.fromStack(s.stack).findWarning('*', Match.anyValue());
    expect(warnings.map((w) => `${w.id}: ${String(w.entry.data)}`)).toEqual([]);
  });
});

describe('with every parallelism prop given', () => {
  it('uses them in the maps, the task Lambda, the task timeouts and the execution timeout and alarms', () => {
    const s = synth({
      scheduleInterval: Duration.minutes(30),
      parallelism: {
        statePartitions: 16,
        readConcurrency: 50,
        maxSplits: 64,
        partitionConcurrency: 6,
        taskTimeoutSeconds: 300,
        taskMemoryMiB: 2048,
        executionTimeoutSeconds: 7200,
      },
      alarms: { executionDuration: { thresholdSeconds: 2400 }, executionTimedOut: false },
    });
    const def = s.definition();
    expect([def.States.Read.MaxConcurrency, def.States.Partition.MaxConcurrency, def.TimeoutSeconds]).toEqual([50, 6, 7200]);
    expect(
      allStates(def)
        .filter(([, st]) => st.Type === 'Task')
        .map(([, st]) => st.TimeoutSeconds),
    ).toEqual([330, 330, 330, 330]);
    // 16 partitions, 6 at once: 3 partition waves, so plan + read + 3 + commit = 6 tasks of 300 s, + 60
    s.template.hasResourceProperties('AWS::Lambda::Function', {
      Timeout: 300,
      MemorySize: 2048,
      Environment: { Variables: Match.objectLike({ SLUICE_STATE_PARTITIONS: '16', SLUICE_MAX_SPLITS: '64', SLUICE_LEASE_SECONDS: String(6 * 300 + 60) }) },
    });
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ExecutionTime', Threshold: 2_400_000, Period: 1800 });
    expect(s.pipeline.alarms.executionTimedOut).toBeUndefined();
    expect(s.pipeline.alarms.executionFailed).toBeDefined();
  });

  it('defaults the execution timeout to 4 schedule intervals when they are longer than 4 task timeouts', () => {
    expect(synth({ scheduleInterval: Duration.hours(1), parallelism: { statePartitions: 2 } }).definition().TimeoutSeconds).toBe(4 * 3600);
  });
});

describe('without parallelism', () => {
  it('creates no state machine, starter or task Lambda, and schedules the single Lambda', () => {
    const s = synth({});
    s.template.resourceCountIs('AWS::StepFunctions::StateMachine', 0);
    s.template.resourceCountIs('AWS::Lambda::Function', 1);
    expect(s.pipeline.scaleOut).toBeUndefined();
    s.template.hasResourceProperties('AWS::Events::Rule', { Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [s.id(s.pipeline.function), 'Arn'] } })] });
    expect(Object.keys(s.pipeline.alarms)).not.toContain('executionFailed');
  });
});

describe('when the parallelism props are invalid, synth fails with a message that names the fix', () => {
  it.each<[string, AvailableNowPipelineProps, RegExp]>([
    ['no state partition', { parallelism: { statePartitions: 0 } }, /parallelism.statePartitions \(0\) must be a whole number from 1 to 256/],
    ['more state partitions than the engine keeps', { parallelism: { statePartitions: 300 } }, /from 1 to 256/],
    [
      'more partition tasks at once than partitions',
      { parallelism: { statePartitions: 4, partitionConcurrency: 5 } },
      /partitionConcurrency \(5\) must be a whole number from 1 to 4: a batch has 4 partition tasks/,
    ],
    ["a read concurrency above Step Functions' limit", { parallelism: { statePartitions: 4, readConcurrency: 20_000 } }, /readConcurrency \(20000\)/],
    [
      'a task longer than Lambda allows',
      { parallelism: { statePartitions: 4, taskTimeoutSeconds: 1000 } },
      /taskTimeoutSeconds \(1000\) must be a whole number from 1 to 900/,
    ],
    [
      'an execution shorter than one batch',
      { parallelism: { statePartitions: 4, taskTimeoutSeconds: 600, executionTimeoutSeconds: 1200 } },
      /executionTimeoutSeconds \(1200\) must be a whole number from 2400/,
    ],
    [
      'a lease shorter than a task',
      { parallelism: { statePartitions: 4, taskTimeoutSeconds: 600, leaseDurationSeconds: 600 } },
      /leaseDurationSeconds \(600\) must be a whole number from 660/,
    ],
    ['a missing task entry', { parallelism: { statePartitions: 4, taskEntry: 'lambdas/nope.ts' } }, /taskEntry "lambdas\/nope.ts" does not exist/],
    [
      'SLUICE_STATE_PARTITIONS in environment',
      { parallelism: { statePartitions: 4 }, environment: { SLUICE_STATE_PARTITIONS: '8' } },
      /environment sets SLUICE_STATE_PARTITIONS/,
    ],
    [
      'an execution alarm without parallelism',
      { alarms: { executionFailed: { threshold: 2 } } },
      /alarms.executionFailed alarms on the scale-out state machine, which exists only with `parallelism`/,
    ],
    [
      'an execution duration alarm that could never fire',
      { parallelism: { statePartitions: 4 }, alarms: { executionDuration: { thresholdSeconds: 3600 } } },
      /thresholdSeconds \(3600\) must be a whole number from 1 to 3599/,
    ],
  ])('rejects %s', (_name, props, message) => {
    expect(rejection(props)).toMatch(message);
  });
});

describe('every AWS SDK command the scale-out Lambdas send is granted', () => {
  const sentBy = (entry: string) => new Set(bundledFiles(entry).flatMap(commandsSent));

  it("for the starter, by the starter's role", () => {
    const s = synth({ parallelism: { statePartitions: 2 } });
    const sent = sentBy(STARTER_ENTRY);
    expect([...sent].sort()).toEqual(['states:ListExecutions', 'states:StartExecution']);
    const granted = new Set(roleStatements(s.template, s.id(s.pipeline.scaleOut!.starterRole)).flatMap((st) => st.actions));
    expect([...sent].filter((a) => !granted.has(a))).toEqual([]);
  });

  it("for the default task entry (the engine's tasks on the AWS adapters), by the pipeline's role, with either source", () => {
    // The task bundle carries notification mode's SQS calls (buildExecutor), but a partitioned
    // pipeline never makes them: the construct refuses discovery 'notifications' with parallelism
    // (test/infra/notification-source.test.ts), so no role of one is granted them.
    const sent = [...sentBy(DEFAULT_TASK_ENTRY)].filter((a) => !a.startsWith('sqs:'));
    expect(sent).toContain('s3:PutObject'); // the shuffle, the checkpoint
    const granted = new Set(
      [synth({ parallelism: { statePartitions: 2 } }), synth({ parallelism: { statePartitions: 2 }, source: PipelineSource.newKinesisStream() })].flatMap((s) =>
        roleStatements(s.template, s.id(s.pipeline.role)).flatMap((st) => st.actions),
      ),
    );
    expect([...sent].filter((a) => !granted.has(a))).toEqual([]);
  });
});
