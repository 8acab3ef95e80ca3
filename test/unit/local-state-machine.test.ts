/**
 * The two steps that turn a synthesized state machine into one the local interpreter runs
 * (lib/local/state-machine.ts), on small hand-written definitions; and what it refuses.
 */
import {
  LocalStateMachineError,
  definitionFromTemplate,
  inlineDistributedMaps,
  resolveIntrinsics,
  runStateMachineLocally,
  type AslDefinition,
} from '../../lib/local/state-machine';

const RESOURCES = {
  Fn1: { Type: 'AWS::Lambda::Function' },
  Machine: { Type: 'AWS::StepFunctions::StateMachine' },
  Table: { Type: 'AWS::DynamoDB::Table' },
};

describe('resolving CDK intrinsics', () => {
  it("joins, and gives the pseudo parameters and the ARNs of the template's resources", () => {
    const value = {
      Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':states:::lambda:invoke']] },
      Fn: { 'Fn::GetAtt': ['Fn1', 'Arn'] },
      list: [{ Ref: 'AWS::Region' }, 3],
    };
    expect(resolveIntrinsics(value, RESOURCES, { partition: 'aws-cn', region: 'cn-north-1', accountId: '111122223333' })).toEqual({
      Resource: 'arn:aws-cn:states:::lambda:invoke',
      Fn: 'arn:aws-cn:lambda:cn-north-1:111122223333:function:Fn1',
      list: ['cn-north-1', 3],
    });
  });

  it('gives a Ref of a state machine its ARN and of another resource its logical id, as CloudFormation gives ARN and name', () => {
    expect(resolveIntrinsics({ Ref: 'Machine' }, RESOURCES)).toBe('arn:aws:states:us-east-1:123456789012:stateMachine:Machine');
    expect(resolveIntrinsics({ Ref: 'Table' }, RESOURCES)).toBe('Table');
  });

  it.each([
    // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudFormation's Fn::Sub syntax
    [{ 'Fn::Sub': 'x-${AWS::Region}' }, /Fn::Sub cannot be resolved locally/],
    [{ 'Fn::GetAtt': ['Fn1', 'Version'] }, /only \.Arn/],
    [{ Ref: 'Missing' }, /not in the template's resources/],
    [{ Ref: 'AWS::StackName' }, /has no local value/],
  ])('refuses %j', (value, message) => {
    expect(() => resolveIntrinsics(value, RESOURCES)).toThrow(LocalStateMachineError);
    expect(() => resolveIntrinsics(value, RESOURCES)).toThrow(message);
  });

  it('reads the one state machine of a template, with its DefinitionSubstitutions', () => {
    const template = {
      Resources: {
        ...RESOURCES,
        Machine: {
          Type: 'AWS::StepFunctions::StateMachine',
          Properties: {
            DefinitionString: {
              // biome-ignore lint/suspicious/noTemplateCurlyInString: a DefinitionSubstitutions placeholder of Step Functions
              'Fn::Join': ['', ['{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"${fn}","End":true}},"Comment":"', { Ref: 'AWS::AccountId' }, '"}']],
            },
            DefinitionSubstitutions: { fn: { 'Fn::GetAtt': ['Fn1', 'Arn'] } },
          },
        },
      },
    };
    expect(definitionFromTemplate(template, { accountId: '444455556666' })).toEqual({
      StartAt: 'A',
      States: { A: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:444455556666:function:Fn1', End: true } },
      Comment: '444455556666',
    });
    expect(() => definitionFromTemplate({ Resources: RESOURCES })).toThrow(/Machine has no DefinitionString/);
    expect(() => definitionFromTemplate({ Resources: { Fn1: RESOURCES.Fn1 } })).toThrow(/has 0 state machines/);
  });
});

/** A Map over $.items whose processor is one Pass state, with `extra` fields on the Map. */
const mapDefinition = (mode: string, extra: Record<string, unknown> = {}): AslDefinition => ({
  StartAt: 'Fan',
  States: {
    Fan: {
      Type: 'Map',
      ItemsPath: '$.items',
      MaxConcurrency: 2,
      Label: 'fan',
      ItemProcessor: { ProcessorConfig: { Mode: mode, ExecutionType: 'STANDARD' }, StartAt: 'Each', States: { Each: { Type: 'Pass', End: true } } },
      End: true,
      ...extra,
    },
  },
});

describe('turning Distributed Maps inline', () => {
  it('makes a DISTRIBUTED item processor INLINE, keeping MaxConcurrency and dropping the label', () => {
    const { definition, inlined } = inlineDistributedMaps(mapDefinition('DISTRIBUTED'));
    expect(inlined).toEqual(['Fan']);
    expect(definition.States.Fan).toEqual({
      Type: 'Map',
      ItemsPath: '$.items',
      MaxConcurrency: 2,
      ItemProcessor: { ProcessorConfig: { Mode: 'INLINE' }, StartAt: 'Each', States: { Each: { Type: 'Pass', End: true } } },
      End: true,
    });
  });

  it('leaves an inline Map as it is, and the input definition untouched', () => {
    const input = mapDefinition('DISTRIBUTED');
    const before = JSON.stringify(input);
    inlineDistributedMaps(input);
    expect(JSON.stringify(input)).toBe(before);
    expect(inlineDistributedMaps(mapDefinition('INLINE'))).toEqual({ definition: mapDefinition('INLINE'), inlined: [] });
  });

  it.each([
    ['ItemReader', { Resource: 'arn:aws:states:::s3:getObject' }],
    ['ItemBatcher', { MaxItemsPerBatch: 10 }],
    ['ResultWriter', { Resource: 'arn:aws:states:::s3:putObject' }],
    ['ToleratedFailurePercentage', 5],
  ])('refuses a Distributed Map with %s, which would behave otherwise inline', (field, value) => {
    expect(() => inlineDistributedMaps(mapDefinition('DISTRIBUTED', { [field]: value }))).toThrow(new RegExp(`Map state Fan uses ${field}`));
  });
});

describe('running locally', () => {
  it('refuses a Task that is not a Lambda invocation, before running anything', async () => {
    const def: AslDefinition = { StartAt: 'Put', States: { Put: { Type: 'Task', Resource: 'arn:aws:states:::dynamodb:putItem', End: true } } };
    let called = false;
    await expect(
      runStateMachineLocally(
        def,
        async () => {
          called = true;
          return { ok: true };
        },
        {},
      ),
    ).rejects.toThrow(/Task state Put calls "arn:aws:states:::dynamodb:putItem", not a Lambda function/);
    expect(called).toBe(false);
  });

  it('hands a lambda:invoke task its Payload and answers with the Invoke API shape; a function-ARN task gets the input itself', async () => {
    const def: AslDefinition = {
      StartAt: 'Invoke',
      States: {
        Invoke: {
          Type: 'Task',
          Resource: 'arn:aws:states:::lambda:invoke',
          Parameters: { FunctionName: 'f', Payload: { action: 'plan', 'runId.$': '$$.Execution.Name' } },
          ResultPath: '$.invoked',
          Next: 'Direct',
        },
        Direct: {
          Type: 'Task',
          Resource: 'arn:aws:lambda:eu-west-1:123456789012:function:f',
          Parameters: { action: 'commit', runId: 'r', 'batchId.$': '$.invoked.Payload.batchId' },
          ResultPath: '$.direct',
          End: true,
        },
      },
    };
    const seen: unknown[] = [];
    const { output } = await runStateMachineLocally(
      def,
      async (event) => {
        seen.push(event);
        return event.action === 'plan'
          ? { runId: event.runId, batchId: 4, done: false, splits: [], partitions: [] }
          : { runId: event.runId, batchId: 4, more: false };
      },
      { start: true },
      { executionName: 'run-1' },
    );
    expect(seen).toEqual([
      { action: 'plan', runId: 'run-1' },
      { action: 'commit', runId: 'r', batchId: 4 },
    ]);
    expect(output).toEqual({
      start: true,
      invoked: { StatusCode: 200, ExecutedVersion: '$LATEST', Payload: { runId: 'run-1', batchId: 4, done: false, splits: [], partitions: [] } },
      direct: { runId: 'r', batchId: 4, more: false },
    });
  });

  it('fails a task that outlives taskTimeoutSeconds', async () => {
    const def: AslDefinition = {
      StartAt: 'Slow',
      States: { Slow: { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Parameters: { 'Payload.$': '$' }, End: true } },
    };
    const slow = () => new Promise<{ ok: true }>(() => undefined); // never answers
    await expect(runStateMachineLocally(def, slow, { action: 'plan', runId: 'r' }, { taskTimeoutSeconds: 1 })).rejects.toThrow(/local execution failed/);
  });
});
