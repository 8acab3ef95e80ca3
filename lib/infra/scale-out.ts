/**
 * The scale-out half of AvailableNowPipeline (its `parallelism` prop): one query run as
 * a Step Functions Standard workflow over many task Lambdas instead of one Lambda.
 *
 *     EventBridge rule rate(interval) ──▶ starter Lambda: ListExecutions(RUNNING) empty?
 *                                             │ yes: StartExecution (name = tick time + event id)
 *                                             ▼
 *     state machine (Standard), one execution per run, runId = $$.Execution.Name
 *
 *       Plan ─▶ done? ─yes─▶ RunDone (Succeed)
 *        ▲        │ no
 *        │      Read       Distributed Map over $.plan.splits,     MaxConcurrency readConcurrency
 *        │        │          one child execution per split: ReadSplit
 *        │      Partition  Distributed Map over $.plan.partitions, MaxConcurrency partitionConcurrency
 *        │        │          one child execution per partition: MergePartition
 *        │      Commit ─▶ more? ─no─▶ RunDone
 *        └────────────────────┘ yes
 *
 *     every task: the one task Lambda (dispatch on `action`, lib/scale/contract.ts), retried on
 *     Lambda's service errors (CDK's default) and then up to TASK_RETRY.maxAttempts times on any
 *     error but the ones a retry cannot fix (NO_RETRY).
 *
 * The items of both maps come from the Plan task's own output (no ItemReader, ItemBatcher or
 * ResultWriter): small descriptors, the data itself in S3. The maps discard their results
 * (ResultPath null) and each child returns only `{ ok }`, so no state's input or output grows with
 * the data; lib/local/state-machine.ts runs this same definition in tests.
 *
 * IAM: the task Lambda runs on the pipeline's role, which reads and writes what the single Lambda
 * does, plus the shuffle objects under `<checkpointPrefix>-shuffle/` (lib/aws/pipeline.ts,
 * shufflePrefix) that this adds. The starter may only list and start executions of this state machine; the state
 * machine may only invoke the task Lambda, and (CDK's DistributedMapPolicy) start, describe, stop
 * and redrive its own child executions.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  type CfnElement,
  Duration,
  type RemovalPolicy,
  Stack,
  aws_iam as iam,
  aws_lambda as lambda,
  aws_lambda_destinations as destinations,
  aws_lambda_nodejs as nodejs,
  aws_logs as logs,
  type aws_sqs as sqs,
  aws_stepfunctions as sfn,
  aws_stepfunctions_tasks as tasks,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { GRANTED_ACTIONS, grantS3, invalid, wholeNumber, type S3Place } from './binding';
import { acknowledge, acknowledgeRuntime, acknowledgeWildcards } from './nag';

// ---------------------------------------------------------------- props

/**
 * `AvailableNowPipeline.parallelism`: run the query on a Step Functions state machine, one task
 * Lambda per split and per state partition. The state partitions are the shape of the query's
 * state, so `statePartitions` is required and fixed for the checkpoint's life; the two
 * concurrencies only say how many of those tasks run at once, so they default.
 */
export interface PipelineParallelism {
  /**
   * P, the state partitions: one partition task each per batch. The query's
   * `option('statePartitions', P)` must be the same number (the task Lambda gets it as
   * SLUICE_STATE_PARTITIONS), and it is fixed for the checkpoint's life. 1 to 256.
   */
  readonly statePartitions: number;
  /** How many read tasks (one per split of the batch's input) run at once: the Read map's MaxConcurrency. 1 to 10000. @default 10 */
  readonly readConcurrency?: number;
  /** How many partition tasks run at once: the Partition map's MaxConcurrency. 1 to statePartitions. @default statePartitions */
  readonly partitionConcurrency?: number;
  /**
   * At most this many read tasks (splits) per batch, one file at least each (the task Lambda's
   * SLUICE_MAX_SPLITS): with readConcurrency, how wide a batch's reads fan out. 1 to 10000. @default 8
   */
  readonly maxSplits?: number;
  /**
   * The task Lambda's entry file: a module exporting a handler built with
   * `createPartitionedTaskLambda` (lib/aws/lambda/scale-out-handler.ts) for the same query as `entry`.
   * @default lambdas/windowed-totals-tasks.ts (the example's, as `entry` defaults to lambdas/windowed-totals.ts)
   */
  readonly taskEntry?: string;
  /** @default 'handler' */
  readonly taskHandler?: string;
  /** Each task Lambda's timeout: at most 900 (a run is not capped by it, a task is). @default 900 */
  readonly taskTimeoutSeconds?: number;
  /** Each task Lambda's memory. 128 to 10240. @default lambdaMemoryMiB */
  readonly taskMemoryMiB?: number;
  /**
   * The run's lease as the task Lambda holds it (its SLUICE_LEASE_SECONDS; the single Lambda keeps
   * `leaseDurationSeconds`). Plan takes it, and renews it once half of it has gone by, and commit
   * renews it, so it should outlast one batch: plan, the read wave, the partition waves and commit. The lease only
   * decides how soon another run may start (every write is fenced by it): too short, a slow batch
   * fails with a lost lease and the next run redoes it; too long, a failed run holds back the
   * next ones until it expires.
   * @default (3 + ceil(statePartitions / partitionConcurrency)) task timeouts + 60
   */
  readonly leaseDurationSeconds?: number;
  /**
   * How long one execution (one run) may last before Step Functions stops it; the next tick then
   * starts another, which resumes from the checkpoint. At least 4 task timeouts (one batch is four
   * waves of tasks), at most a year.
   * @default the larger of 4 schedule intervals and 4 task timeouts
   */
  readonly executionTimeoutSeconds?: number;
}

/** `parallelism` after defaults and checks. */
export interface ResolvedParallelism {
  readonly statePartitions: number;
  readonly readConcurrency: number;
  readonly maxSplits: number;
  readonly partitionConcurrency: number;
  readonly taskEntry: string;
  readonly taskHandler: string;
  readonly taskTimeoutSeconds: number;
  readonly taskMemoryMiB: number;
  readonly leaseDurationSeconds: number;
  readonly executionTimeoutSeconds: number;
}

/** The engine's limit on state partitions (lib/engine/plan/to-plan.ts, MAX_STATE_PARTITIONS). */
const MAX_STATE_PARTITIONS = 256;
/** Step Functions' limit on a Distributed Map's MaxConcurrency. */
const MAX_MAP_CONCURRENCY = 10_000;

/** The repository root (two levels above lib/infra). */
const REPO_ROOT = path.resolve(__dirname, '..', '..');
/** `<dir>/<name>.ts` of this package, or its compiled `.js` in the published package. */
const sourceFile = (dir: string, name: string) =>
  [path.join(REPO_ROOT, dir, `${name}.ts`), path.join(REPO_ROOT, dir, `${name}.js`)].find((f) => fs.existsSync(f)) ?? path.join(REPO_ROOT, dir, `${name}.ts`);

/** The default task entry: the windowed-totals example's tasks, as `entry` defaults to its scheduled run. */
export const DEFAULT_TASK_ENTRY = sourceFile('lambdas', 'windowed-totals-tasks');
/** The starter's entry. */
export const STARTER_ENTRY = sourceFile(path.join('lib', 'aws', 'lambda'), 'scale-out-starter');

export function resolveParallelism(scope: Construct, p: PipelineParallelism, t: { intervalSeconds: number; memoryMiB: number }): ResolvedParallelism {
  const statePartitions = wholeNumber(
    scope,
    'parallelism.statePartitions',
    p.statePartitions,
    1,
    MAX_STATE_PARTITIONS,
    "give the query's option('statePartitions', P), at most 256",
  );
  const readConcurrency = wholeNumber(
    scope,
    'parallelism.readConcurrency',
    p.readConcurrency ?? 10,
    1,
    MAX_MAP_CONCURRENCY,
    'a Distributed Map runs at most 10000 child executions at once',
  );
  const partitionConcurrency = wholeNumber(
    scope,
    'parallelism.partitionConcurrency',
    p.partitionConcurrency ?? statePartitions,
    1,
    statePartitions,
    `a batch has ${statePartitions} partition tasks (statePartitions), so more cannot run at once`,
  );
  const maxSplits = wholeNumber(
    scope,
    'parallelism.maxSplits',
    p.maxSplits ?? 8,
    1,
    MAX_MAP_CONCURRENCY,
    'a batch splits into at most one read task a file; the Read map runs at most 10000 at once',
  );
  const taskEntry = path.resolve(p.taskEntry ?? DEFAULT_TASK_ENTRY);
  if (!fs.existsSync(taskEntry))
    invalid(
      scope,
      `parallelism.taskEntry ${JSON.stringify(p.taskEntry)} does not exist: pass the path of an entry exporting a task handler built with createPartitionedTaskLambda, e.g. lambdas/windowed-totals-tasks.ts`,
      { taskEntry: p.taskEntry },
    );
  const taskTimeoutSeconds = wholeNumber(
    scope,
    'parallelism.taskTimeoutSeconds',
    p.taskTimeoutSeconds ?? 900,
    1,
    900,
    'a Lambda runs at most 15 minutes (900 s); a run is as long as its tasks need',
  );
  const taskMemoryMiB = wholeNumber(
    scope,
    'parallelism.taskMemoryMiB',
    p.taskMemoryMiB ?? t.memoryMiB,
    128,
    10240,
    'Lambda memory ranges from 128 to 10240 MiB',
  );
  const minExecution = 4 * taskTimeoutSeconds;
  const executionTimeoutSeconds = wholeNumber(
    scope,
    'parallelism.executionTimeoutSeconds',
    p.executionTimeoutSeconds ?? Math.max(4 * t.intervalSeconds, minExecution),
    minExecution,
    31_536_000,
    `one batch runs four waves of tasks of up to ${taskTimeoutSeconds} s (taskTimeoutSeconds), so give at least ${minExecution}`,
  );
  const batchSeconds = (3 + Math.ceil(statePartitions / partitionConcurrency)) * taskTimeoutSeconds;
  const leaseDurationSeconds = wholeNumber(
    scope,
    'parallelism.leaseDurationSeconds',
    p.leaseDurationSeconds ?? batchSeconds + 60,
    taskTimeoutSeconds + 60,
    86_400,
    `a task may run ${taskTimeoutSeconds} s (taskTimeoutSeconds), so the lease must outlast one task by a minute at least; one batch takes up to ${batchSeconds} s`,
  );
  return {
    statePartitions,
    readConcurrency,
    maxSplits,
    partitionConcurrency,
    taskEntry,
    taskHandler: p.taskHandler ?? 'handler',
    taskTimeoutSeconds,
    taskMemoryMiB,
    leaseDurationSeconds,
    executionTimeoutSeconds,
  };
}

// ---------------------------------------------------------------- the resources

/** Errors a retry cannot fix (SluiceError subclasses, as Lambda reports their `name`): fail the task at once. */
export const NO_RETRY = ['InvalidTaskEventError', 'InvalidOptionError', 'InvalidQueryError', 'CheckpointMismatchError', 'DataLossError'] as const;
/** The retry of any other task error, after CDK's own retry of Lambda's service errors. */
export const TASK_RETRY = { maxAttempts: 3, intervalSeconds: 5, backoffRate: 2 } as const;

/** What the pipeline hands the scale-out resources. */
export interface ScaleOutInputs {
  readonly pipelineName: string;
  readonly intervalSeconds: number;
  readonly scheduleMaxEventAgeSeconds: number;
  readonly parallelism: ResolvedParallelism;
  /** The pipeline's role: the task Lambda reads and writes what the single Lambda does, and the shuffle. */
  readonly role: iam.Role;
  /** Where the tasks hand data to each other: `<checkpointPrefix>-shuffle` in the checkpoint bucket (shufflePrefix in lib/aws/pipeline.ts). */
  readonly shuffle: S3Place;
  /** The single Lambda's environment; the task Lambda gets it too, with its own SLUICE_LEASE_SECONDS and SLUICE_STATE_PARTITIONS. */
  readonly environment: Record<string, string>;
  readonly architecture: lambda.Architecture;
  readonly bundling: nodejs.BundlingOptions;
  readonly logRetention: logs.RetentionDays;
  readonly removalPolicy: RemovalPolicy;
  readonly failureQueue: sqs.IQueue;
}

/** The scale-out resources, under the construct `ScaleOut` of the pipeline. */
export class ScaleOut extends Construct {
  /** The one task Lambda of every Plan, Read, Partition and Commit task. */
  readonly taskFunction: nodejs.NodejsFunction;
  readonly taskLogGroup: logs.LogGroup;
  /** Starts an execution on each tick, unless one is running. */
  readonly starter: nodejs.NodejsFunction;
  readonly starterRole: iam.Role;
  readonly starterLogGroup: logs.LogGroup;
  readonly stateMachine: sfn.StateMachine;
  readonly parallelism: ResolvedParallelism;
  /** The shuffle's key prefix in the checkpoint bucket. */
  readonly shufflePrefix: string;

  constructor(scope: Construct, id: string, x: ScaleOutInputs) {
    super(scope, id);
    const p = x.parallelism;
    this.parallelism = p;

    // ---- the task Lambda
    this.taskLogGroup = new logs.LogGroup(this, 'TaskLogs', { retention: x.logRetention, removalPolicy: x.removalPolicy });
    this.taskLogGroup.grantWrite(x.role);
    // The read tasks' partial results, which the partition tasks read; purged with old batches.
    grantS3(x.role, { ...x.shuffle, objectActions: GRANTED_ACTIONS.shuffleObjects, list: true, kms: ['kms:Decrypt', 'kms:GenerateDataKey'] });
    this.shufflePrefix = x.shuffle.prefix;
    this.taskFunction = new nodejs.NodejsFunction(this, 'TaskFunction', {
      entry: p.taskEntry,
      handler: p.taskHandler,
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: x.architecture,
      memorySize: p.taskMemoryMiB,
      timeout: Duration.seconds(p.taskTimeoutSeconds),
      role: x.role,
      logGroup: this.taskLogGroup,
      description: `sluice scale-out task (plan, read, partition, commit) of ${x.pipelineName}, ${p.statePartitions} state partitions`,
      environment: {
        ...x.environment,
        SLUICE_LEASE_SECONDS: String(p.leaseDurationSeconds),
        SLUICE_STATE_PARTITIONS: String(p.statePartitions),
        SLUICE_MAX_SPLITS: String(p.maxSplits),
      },
      bundling: x.bundling,
    });

    // ---- the state machine
    const fn = this.taskFunction;
    const taskTimeout = sfn.Timeout.duration(Duration.seconds(p.taskTimeoutSeconds + 30));
    const runId = sfn.JsonPath.stringAt('$$.Execution.Name');
    const retried = <T extends tasks.LambdaInvoke>(task: T): T => {
      task.addRetry({ errors: [...NO_RETRY], maxAttempts: 0 });
      task.addRetry({
        errors: [sfn.Errors.ALL],
        maxAttempts: TASK_RETRY.maxAttempts,
        interval: Duration.seconds(TASK_RETRY.intervalSeconds),
        backoffRate: TASK_RETRY.backoffRate,
      });
      return task;
    };

    const plan = retried(
      new tasks.LambdaInvoke(this, 'Plan', {
        comment: 'takes the lease, writes offsets/N and returns the batch: its splits and partitions, or done',
        lambdaFunction: fn,
        payload: sfn.TaskInput.fromObject({ action: 'plan', runId }),
        resultSelector: {
          runId: sfn.JsonPath.stringAt('$.Payload.runId'),
          batchId: sfn.JsonPath.numberAt('$.Payload.batchId'),
          done: sfn.JsonPath.stringAt('$.Payload.done'),
          splits: sfn.JsonPath.listAt('$.Payload.splits'),
          partitions: sfn.JsonPath.listAt('$.Payload.partitions'),
        },
        resultPath: '$.plan',
        taskTimeout,
      }),
    );

    /** A Distributed Map over the plan's `items`, each child one task `taskId` with event `{ action, runId, batchId, <field> }`. */
    const fanOut = (
      mapId: string,
      taskId: string,
      action: 'read' | 'partition',
      items: 'splits' | 'partitions',
      field: 'split' | 'partition',
      maxConcurrency: number,
      comment: string,
    ) => {
      const map = new sfn.DistributedMap(this, mapId, {
        comment,
        itemsPath: `$.plan.${items}`,
        itemSelector: {
          action,
          runId,
          batchId: sfn.JsonPath.numberAt('$.plan.batchId'),
          [field]: sfn.JsonPath.numberAt(`$$.Map.Item.Value.${field}`),
        },
        maxConcurrency,
        mapExecutionType: sfn.StateMachineType.STANDARD,
        resultPath: sfn.JsonPath.DISCARD,
      });
      map.itemProcessor(
        retried(
          new tasks.LambdaInvoke(this, taskId, {
            lambdaFunction: fn,
            payload: sfn.TaskInput.fromJsonPathAt('$'),
            // Only `{ ok }` per child: the map's result stays small even before ResultPath drops it.
            resultSelector: { ok: sfn.JsonPath.stringAt('$.Payload.ok') },
            taskTimeout,
          }),
        ),
      );
      return map;
    };
    const read = fanOut(
      'Read',
      'ReadSplit',
      'read',
      'splits',
      'split',
      p.readConcurrency,
      'reads each split of the batch into its shuffle objects under <checkpoint>-shuffle/N/',
    );
    const partition = fanOut(
      'Partition',
      'MergePartition',
      'partition',
      'partitions',
      'partition',
      p.partitionConcurrency,
      "merges each state partition's shuffle objects into its state and output, and commits its state version N",
    );

    const commit = retried(
      new tasks.LambdaInvoke(this, 'Commit', {
        comment: 'writes commits/N with the next watermark, renews the lease, and says whether to plan another batch',
        lambdaFunction: fn,
        payload: sfn.TaskInput.fromObject({ action: 'commit', runId, batchId: sfn.JsonPath.numberAt('$.plan.batchId') }),
        resultSelector: {
          runId: sfn.JsonPath.stringAt('$.Payload.runId'),
          batchId: sfn.JsonPath.numberAt('$.Payload.batchId'),
          more: sfn.JsonPath.stringAt('$.Payload.more'),
        },
        resultPath: '$.commit',
        taskTimeout,
      }),
    );

    const done = new sfn.Succeed(this, 'RunDone', { comment: 'no batch left to run in this execution (or no time): the next tick continues' });
    const batch = read
      .next(partition)
      .next(commit)
      .next(new sfn.Choice(this, 'MoreBatches').when(sfn.Condition.booleanEquals('$.commit.more', true), plan).otherwise(done));
    const definition = plan.next(new sfn.Choice(this, 'PlanDone').when(sfn.Condition.booleanEquals('$.plan.done', true), done).otherwise(batch));

    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      comment: `sluice scale-out run of pipeline ${x.pipelineName}`,
      stateMachineType: sfn.StateMachineType.STANDARD,
      definitionBody: sfn.DefinitionBody.fromChainable(definition),
      timeout: Duration.seconds(p.executionTimeoutSeconds),
    });
    acknowledge(
      this.stateMachine,
      ['AwsSolutions-SF1', 'AwsSolutions-SF2'],
      "a Standard workflow keeps each execution's history (every state, input and output) for 90 days and each task Lambda logs to its own group; ALL-level logs and X-Ray would bill every transition of maps over thousands of children and need logs/xray actions on Resource '*'",
    );
    const taskArnAnyVersion = `<${Stack.of(this).getLogicalId(this.taskFunction.node.defaultChild as CfnElement)}.Arn>:*`;
    acknowledgeWildcards(
      this.stateMachine.role,
      (this.stateMachine.role.node.tryFindChild('DefaultPolicy') as iam.Policy | undefined)?.document,
      (r) => r === taskArnAnyVersion,
      "invoking any version or alias of its own task Lambda (CDK's LambdaInvoke grant): the function is fixed, only its qualifier is open",
    );
    const mapPolicy = this.stateMachine.node.tryFindChild('DistributedMapPolicy') as iam.Policy | undefined;
    acknowledgeWildcards(
      mapPolicy ?? this.stateMachine,
      mapPolicy?.document,
      (r) => /:execution:.*:\*$/.test(r) && r.includes(Stack.of(this).getLogicalId(this.stateMachine.node.defaultChild as CfnElement)),
      "the Distributed Maps' own child executions (CDK's DistributedMapPolicy): execution names are made at run time under this state machine's name",
    );

    // ---- the starter
    this.starterLogGroup = new logs.LogGroup(this, 'StarterLogs', { retention: x.logRetention, removalPolicy: x.removalPolicy });
    this.starterRole = new iam.Role(this, 'StarterRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `sluice pipeline ${x.pipelineName}: starts a scale-out run unless one is running`,
    });
    this.starterLogGroup.grantWrite(this.starterRole);
    this.starterRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'StartRunUnlessRunning',
        actions: ['states:ListExecutions', 'states:StartExecution'],
        resources: [this.stateMachine.stateMachineArn],
      }),
    );
    this.starter = new nodejs.NodejsFunction(this, 'Starter', {
      entry: STARTER_ENTRY,
      handler: 'handler',
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: x.architecture,
      memorySize: 256,
      timeout: Duration.seconds(30),
      role: this.starterRole,
      logGroup: this.starterLogGroup,
      description: `starts a sluice scale-out run of ${x.pipelineName} every ${x.intervalSeconds / 60} min, unless one is running`,
      // One tick at a time; the ListExecutions check does the rest, and the lease guards the data.
      reservedConcurrentExecutions: 1,
      retryAttempts: 0,
      maxEventAge: Duration.seconds(x.scheduleMaxEventAgeSeconds),
      onFailure: new destinations.SqsDestination(x.failureQueue),
      environment: { SLUICE_STATE_MACHINE_ARN: this.stateMachine.stateMachineArn, NODE_OPTIONS: '--enable-source-maps' },
      bundling: x.bundling,
    });
    acknowledgeRuntime([this.taskFunction, this.starter]);
  }
}
