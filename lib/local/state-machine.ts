/**
 * Runs the state machine definition that AvailableNowPipeline synthesizes (lib/infra/scale-out.ts)
 * in this process, on the Amazon States Language interpreter of the npm package
 * aws-local-stepfunctions, with every Lambda task pointed at an in-process TaskHandler. What a test
 * runs is then the definition that is deployed, after two small, explicit steps:
 *
 *     template ── definitionFromTemplate ──▶ the DefinitionString with CDK's intrinsics resolved
 *                 (resolveIntrinsics: Fn::Join, Ref AWS::Partition/Region/AccountId, Ref and
 *                  GetAtt ...Arn of the template's resources as plausible ARNs), parsed
 *              ── inlineDistributedMaps ──▶ each Map's DISTRIBUTED item processor as INLINE
 *                 (the interpreter runs item processors in process either way, and has none of
 *                  Distributed mode's own fields: refused when the definition uses one)
 *              ── runStateMachineLocally ──▶ executes; Lambda tasks call the handler
 *
 * The interpreter's Lambda integration expects the Invoke API's answer, so a `lambda:invoke` task's
 * handler result is wrapped as `{ StatusCode: 200, Payload }` (the deployed task's ResultSelector
 * reads `$.Payload`), and both the event and the result go through JSON, as they do on AWS.
 *
 * The package declares node >= 22; on Node 20 it needs Promise.withResolvers, which is installed
 * (only when missing) before the package is first loaded.
 */
import type * as Asl from 'aws-local-stepfunctions';
import { SluiceError } from '../engine/errors';
import type { TaskEvent, TaskHandler } from '../scale/contract';

// ---------------------------------------------------------------- types

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** A state of an Amazon States Language definition, loosely: the fields these steps read. */
export interface AslState {
  readonly Type: string;
  readonly Resource?: string;
  readonly ItemProcessor?: AslDefinition & { readonly ProcessorConfig?: Record<string, Json> };
  readonly Iterator?: AslDefinition;
  readonly Branches?: readonly AslDefinition[];
  readonly Retry?: readonly unknown[];
  readonly [field: string]: unknown;
}
export interface AslDefinition {
  readonly StartAt: string;
  readonly States: Record<string, AslState>;
  readonly [field: string]: unknown;
}

/** The values CDK's pseudo parameters stand for in a local run. */
export interface PseudoParameters {
  /** @default 'aws' */
  readonly partition?: string;
  /** @default 'us-east-1' */
  readonly region?: string;
  /** @default '123456789012' */
  readonly accountId?: string;
}

/** A template's resources, by logical id: what Ref and Fn::GetAtt need to know about them. */
export type TemplateResources = Record<string, { readonly Type: string; readonly Properties?: Record<string, unknown> }>;

export class LocalStateMachineError extends SluiceError {}

// ---------------------------------------------------------------- step 1: intrinsics

/** ARN forms of the resource types a state machine definition refers to; other types get a generic one. */
const ARN_OF: Record<string, (p: Required<PseudoParameters>, id: string) => string> = {
  'AWS::Lambda::Function': (p, id) => `arn:${p.partition}:lambda:${p.region}:${p.accountId}:function:${id}`,
  'AWS::StepFunctions::StateMachine': (p, id) => `arn:${p.partition}:states:${p.region}:${p.accountId}:stateMachine:${id}`,
  'AWS::SQS::Queue': (p, id) => `arn:${p.partition}:sqs:${p.region}:${p.accountId}:${id}`,
  'AWS::DynamoDB::Table': (p, id) => `arn:${p.partition}:dynamodb:${p.region}:${p.accountId}:table/${id}`,
  'AWS::S3::Bucket': (p, id) => `arn:${p.partition}:s3:::${id.toLowerCase()}`,
  'AWS::IAM::Role': (p, id) => `arn:${p.partition}:iam::${p.accountId}:role/${id}`,
};

/**
 * `value` with CloudFormation's intrinsics replaced by plain values: Fn::Join; Ref of
 * AWS::Partition, AWS::Region, AWS::AccountId, AWS::URLSuffix; Ref of a resource (its logical id,
 * or its ARN for a state machine, as CloudFormation's Ref gives); Fn::GetAtt [id, 'Arn'].
 * Anything else is refused: a definition that needs it cannot be run from the template alone.
 */
export function resolveIntrinsics(value: unknown, resources: TemplateResources = {}, pseudo: PseudoParameters = {}): unknown {
  const p: Required<PseudoParameters> = {
    partition: pseudo.partition ?? 'aws',
    region: pseudo.region ?? 'us-east-1',
    accountId: pseudo.accountId ?? '123456789012',
  };
  const arnOf = (id: string): string => {
    const type = resources[id]?.Type;
    if (type === undefined)
      throw new LocalStateMachineError(
        `the definition refers to resource ${JSON.stringify(id)}, which is not in the template's resources: pass the template's Resources`,
        { details: { id } },
      );
    return (ARN_OF[type] ?? ((q, x) => `arn:${q.partition}:local:${q.region}:${q.accountId}:${x}`))(p, id);
  };
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== 'object') return v;
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.length === 1 && (keys[0] === 'Ref' || keys[0].startsWith('Fn::'))) {
      const [fn] = keys;
      const arg = o[fn];
      if (fn === 'Fn::Join') {
        const [sep, parts] = arg as [string, unknown[]];
        return (parts as unknown[])
          .map((part) => {
            const s = walk(part);
            if (typeof s !== 'string') throw new LocalStateMachineError(`Fn::Join part ${JSON.stringify(part)} resolved to ${JSON.stringify(s)}, not a string`);
            return s;
          })
          .join(sep);
      }
      if (fn === 'Ref') {
        const name = arg as string;
        const pseudoValue: Record<string, string> = {
          'AWS::Partition': p.partition,
          'AWS::Region': p.region,
          'AWS::AccountId': p.accountId,
          'AWS::URLSuffix': 'amazonaws.com',
        };
        if (name in pseudoValue) return pseudoValue[name];
        if (name.startsWith('AWS::'))
          throw new LocalStateMachineError(`Ref ${name} has no local value: only AWS::Partition, AWS::Region, AWS::AccountId and AWS::URLSuffix do`);
        // CloudFormation's Ref of a state machine is its ARN; of a function or a table, its name
        // (here its logical id). arnOf also checks the resource is in the template.
        const arn = arnOf(name);
        return resources[name].Type === 'AWS::StepFunctions::StateMachine' ? arn : name;
      }
      if (fn === 'Fn::GetAtt') {
        const [id, attribute] = (typeof arg === 'string' ? arg.split('.') : arg) as [string, string];
        if (attribute !== 'Arn') throw new LocalStateMachineError(`Fn::GetAtt ${id}.${attribute} has no local value: only .Arn does`);
        return arnOf(id);
      }
      throw new LocalStateMachineError(`${fn} cannot be resolved locally: the definition may use only Fn::Join, Ref and Fn::GetAtt ...Arn`, {
        details: { [fn]: arg },
      });
    }
    return Object.fromEntries(keys.map((k) => [k, walk(o[k])]));
  };
  return walk(value);
}

/**
 * The definition of the template's one state machine (or of `logicalId`), intrinsics resolved,
 * DefinitionSubstitutions applied.
 */
export function definitionFromTemplate(
  template: { readonly Resources: TemplateResources },
  opts: PseudoParameters & { readonly logicalId?: string } = {},
): AslDefinition {
  const machines = Object.entries(template.Resources).filter(
    ([id, r]) => r.Type === 'AWS::StepFunctions::StateMachine' && (opts.logicalId === undefined || id === opts.logicalId),
  );
  if (machines.length !== 1) {
    throw new LocalStateMachineError(
      `the template has ${machines.length} state machines${opts.logicalId ? ` with logical id ${opts.logicalId}` : ''}, not one: pass logicalId to pick one`,
      { details: { found: machines.map(([id]) => id) } },
    );
  }
  const props = machines[0][1].Properties ?? {};
  if (props.DefinitionString === undefined)
    throw new LocalStateMachineError(`state machine ${machines[0][0]} has no DefinitionString (a Definition object or an S3 location is not supported)`);
  let text = resolveIntrinsics(props.DefinitionString, template.Resources, opts) as string;
  const substitutions = (resolveIntrinsics(props.DefinitionSubstitutions ?? {}, template.Resources, opts) ?? {}) as Record<string, unknown>;
  for (const [name, v] of Object.entries(substitutions)) text = text.split(`\${${name}}`).join(String(v));
  return JSON.parse(text) as AslDefinition;
}

// ---------------------------------------------------------------- step 2: DISTRIBUTED -> INLINE

/** Fields of a Distributed Map the local interpreter cannot honour; a definition with one is refused. */
const DISTRIBUTED_ONLY = [
  'ItemReader',
  'ItemBatcher',
  'ResultWriter',
  'ToleratedFailurePercentage',
  'ToleratedFailurePercentagePath',
  'ToleratedFailureCount',
  'ToleratedFailureCountPath',
] as const;

/**
 * `definition` with every Map state whose ItemProcessor runs in DISTRIBUTED mode turned INLINE,
 * its Label dropped, and the names of the maps changed. A Distributed Map with an ItemReader,
 * ItemBatcher, ResultWriter or tolerated failures is refused: inline, it would behave otherwise.
 */
export function inlineDistributedMaps(definition: AslDefinition): { definition: AslDefinition; inlined: string[] } {
  const inlined: string[] = [];
  const visit = (def: AslDefinition): AslDefinition => ({
    ...def,
    States: Object.fromEntries(
      Object.entries(def.States).map(([name, state]) => {
        let s: AslState = state;
        if (s.Type === 'Map' && s.ItemProcessor?.ProcessorConfig?.Mode === 'DISTRIBUTED') {
          const used = DISTRIBUTED_ONLY.filter((f) => s[f] !== undefined);
          if (used.length > 0) {
            throw new LocalStateMachineError(
              `Map state ${name} uses ${used.join(', ')}, which the local interpreter has no inline equivalent for: give the items in the state input (ItemsPath) and let tasks write their own results`,
              { details: { state: name, used } },
            );
          }
          const { Label: _label, ...rest } = s;
          s = { ...rest, Type: 'Map', ItemProcessor: { ...s.ItemProcessor, ProcessorConfig: { Mode: 'INLINE' } } };
          inlined.push(name);
        }
        if (s.ItemProcessor) s = { ...s, ItemProcessor: { ...s.ItemProcessor, ...visit(s.ItemProcessor) } };
        if (s.Iterator) s = { ...s, Iterator: visit(s.Iterator) };
        if (s.Branches) s = { ...s, Branches: s.Branches.map(visit) };
        return [name, s];
      }),
    ),
  });
  return { definition: visit(definition), inlined };
}

// ---------------------------------------------------------------- running

/** Every state of `definition`, nested ones included, by name (CDK keeps names unique across them). */
function allStates(definition: AslDefinition): Array<[string, AslState]> {
  return Object.entries(definition.States).flatMap(([name, s]) => [
    [name, s] as [string, AslState],
    ...(s.ItemProcessor ? allStates(s.ItemProcessor) : []),
    ...(s.Iterator ? allStates(s.Iterator) : []),
    ...(s.Branches ?? []).flatMap(allStates),
  ]);
}

const LAMBDA_INVOKE = /^arn:[a-z-]+:states:::lambda:invoke$/;
const LAMBDA_FUNCTION = /^arn:[a-z-]+:lambda:[a-z0-9-]+:\d{12}:function:[^:]+(:[^:]+)?$/;

export interface LocalRunOptions {
  /** `$$.Execution.Name`, which the tasks get as runId. @default `local-<time>` */
  readonly executionName?: string;
  /** The wait before each retry, in ms: local runs do not wait out the deployed backoff. @default 0 */
  readonly retryIntervalMs?: number;
  /** Replaces every Task state's TimeoutSeconds (a hung handler then fails the run). @default the definition's (the interpreter's 60 s where it has none) */
  readonly taskTimeoutSeconds?: number;
}

export interface LocalRun {
  readonly output: unknown;
  /** The interpreter's event log: every state entered and exited, with its input and output. */
  readonly events: LocalEvent[];
}

/** An entry of the interpreter's event log (the fields read here). */
export interface LocalEvent {
  readonly type: string;
  readonly timestamp: number;
  readonly state?: { readonly name: string; readonly type: string; readonly input: unknown; readonly output?: unknown };
  readonly index?: number;
  readonly Error?: string;
  readonly Cause?: unknown;
}

/** The run failed; `events` holds the event log up to the failure. */
export class LocalExecutionError extends SluiceError {
  constructor(
    message: string,
    readonly events: LocalEvent[],
    cause: unknown,
  ) {
    super(message, { cause });
  }
}

/** Installs Promise.withResolvers where the runtime lacks it (Node 20), then loads the package. */
function loadInterpreter(): typeof Asl {
  const P = Promise as unknown as { withResolvers?: () => unknown };
  if (typeof P.withResolvers !== 'function') {
    Object.defineProperty(Promise, 'withResolvers', {
      configurable: true,
      writable: true,
      value: function withResolvers<T>() {
        let resolve!: (v: T | PromiseLike<T>) => void;
        let reject!: (e: unknown) => void;
        const promise = new Promise<T>((res, rej) => {
          resolve = res;
          reject = rej;
        });
        return { promise, resolve, reject };
      },
    });
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('aws-local-stepfunctions') as typeof Asl;
}

/**
 * Runs `definition` (plain: see definitionFromTemplate) with `input`, every Lambda task calling
 * `handler` in this process, after turning its Distributed Maps inline. Resolves with the
 * execution's output and event log; rejects with a LocalExecutionError when the execution fails.
 * A Task state that is not a Lambda invocation is refused before anything runs.
 */
export async function runStateMachineLocally(definition: AslDefinition, handler: TaskHandler, input: unknown, opts: LocalRunOptions = {}): Promise<LocalRun> {
  let local = inlineDistributedMaps(definition).definition;
  if (opts.taskTimeoutSeconds !== undefined) local = withTaskTimeout(local, opts.taskTimeoutSeconds);

  const taskResourceLocalHandlers: Record<string, (input: Json) => Promise<Json>> = {};
  const retryIntervalOverrides: Record<string, number> = {};
  for (const [name, state] of allStates(local)) {
    if (state.Retry) retryIntervalOverrides[name] = opts.retryIntervalMs ?? 0;
    if (state.Type !== 'Task') continue;
    const resource = state.Resource ?? '';
    const invokeApi = LAMBDA_INVOKE.test(resource);
    if (!invokeApi && !LAMBDA_FUNCTION.test(resource)) {
      throw new LocalStateMachineError(
        `Task state ${name} calls ${JSON.stringify(resource)}, not a Lambda function: only Lambda tasks run locally (arn:aws:states:::lambda:invoke or a function ARN)`,
        { details: { state: name, resource } },
      );
    }
    taskResourceLocalHandlers[name] = async (taskInput) => {
      // lambda:invoke gets { FunctionName, Payload }; a function-ARN task gets the payload itself.
      const payload = invokeApi ? (taskInput as { Payload?: Json }).Payload : taskInput;
      const result = await handler(JSON.parse(JSON.stringify(payload ?? null)) as TaskEvent);
      const returned = JSON.parse(JSON.stringify(result ?? null)) as Json;
      return invokeApi ? { StatusCode: 200, ExecutedVersion: '$LATEST', Payload: returned } : returned;
    };
  }

  const { StateMachine } = loadInterpreter();
  const machine = new StateMachine(local as unknown as Asl.StateMachineDefinition);
  const execution = machine.run(input as Json, {
    overrides: { taskResourceLocalHandlers, retryIntervalOverrides },
    context: { Execution: { Name: opts.executionName ?? `local-${new Date().toISOString().replace(/[-:.]/g, '')}` } },
  });
  const events: LocalEvent[] = [];
  const logged = (async () => {
    for await (const event of execution.eventLogs) events.push(event as unknown as LocalEvent);
  })();
  try {
    const output = await execution.result;
    await logged;
    return { output, events };
  } catch (error) {
    await Promise.race([logged, new Promise((r) => setTimeout(r, 100))]);
    const e = error as Error & { cause?: Error };
    const reason = e.cause?.message ?? e.message;
    const failed = [...events].reverse().find((ev) => ev.type === 'StateFailed')?.state?.name;
    throw new LocalExecutionError(
      `the local execution failed${failed ? ` in state ${failed}` : ''}: ${reason} (its event log is on the error's \`events\`)`,
      events,
      error,
    );
  }
}

/** `definition` with every Task state's TimeoutSeconds set to `seconds`. */
function withTaskTimeout(definition: AslDefinition, seconds: number): AslDefinition {
  if (!Number.isInteger(seconds) || seconds < 1)
    throw new LocalStateMachineError(`taskTimeoutSeconds (${seconds}) must be a whole number of seconds, at least 1`);
  const visit = (def: AslDefinition): AslDefinition => ({
    ...def,
    States: Object.fromEntries(
      Object.entries(def.States).map(([name, s]) => {
        let out: AslState = s.Type === 'Task' ? { ...s, TimeoutSeconds: seconds } : s;
        if (out.ItemProcessor) out = { ...out, ItemProcessor: { ...out.ItemProcessor, ...visit(out.ItemProcessor) } };
        if (out.Iterator) out = { ...out, Iterator: visit(out.Iterator) };
        if (out.Branches) out = { ...out, Branches: out.Branches.map(visit) };
        return [name, out];
      }),
    ),
  });
  return visit(definition);
}
