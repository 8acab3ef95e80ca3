/**
 * Pipelines that share a state table reach only their own items in it: the construct scopes each
 * role's DynamoDB actions on the table to the query's namespace (a dynamodb:LeadingKeys
 * condition), and the Lambda computes that same namespace (lib/aws/namespace.ts) and refuses a
 * query of another name before any request.
 */
import { App, Stack, aws_dynamodb as dynamodb } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AvailableNowPipeline, PipelineSink } from '../../lib/infra/available-now-pipeline';
import { buildExecutor, type PipelineConfig } from '../../lib/aws/pipeline';
import { pipelineConfigFromEnv } from '../../lib/aws/lambda/env';
import { stateKeyPatterns, stateNamespace } from '../../lib/aws/namespace';
import { legacyDirectoryKey, SliceKeys } from '../../lib/aws/dynamodb/state-layout';
import { InvalidOptionError } from '../../lib/engine/errors';
import { windowedTotals } from '../../examples/windowed-totals';
import { roleStatements, type FlatStatement, rejectionOf } from '../helpers/template';

const ENV = { account: '123456789012', region: 'eu-west-1' };

/** IAM's StringLike: `*` any run of characters, `?` any one, everything else itself. */
function stringLike(pattern: string, value: string): boolean {
  const re = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${re}$`, 's').test(value);
}
const allowed = (patterns: readonly string[], pk: string) => patterns.some((p) => stringLike(p, pk));

function twoPipelinesOnOneTable() {
  // Without CDK's built-in CloudFormation validation: it only prints its findings (no test here
  // reads them), and its WebAssembly engine costs seconds of CPU per file.
  const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Shared', { env: ENV });
  const stateTable = dynamodb.Table.fromTableName(stack, 'State', 'shared-state');
  const orders = new AvailableNowPipeline(stack, 'Orders', { stateTable, queryName: 'orders-per-minute', createAlarms: false, createDashboard: false });
  const clicks = new AvailableNowPipeline(stack, 'Clicks', {
    stateTable,
    queryName: 'clicks',
    parallelism: { statePartitions: 2 },
    createAlarms: false,
    createDashboard: false,
  });
  return { stack, template: Template.fromStack(stack), orders, clicks };
}

const leadingKeys = (st: FlatStatement) => (st.condition as Record<string, Record<string, string[]>>)['ForAllValues:StringLike']['dynamodb:LeadingKeys'];

describe('two pipelines sharing a state table', () => {
  const s = twoPipelinesOnOneTable();
  const bucketOf = (p: AvailableNowPipeline) => s.stack.getLogicalId(p.pipelineBucket!.node.defaultChild as never);
  const stateStatement = (p: AvailableNowPipeline) => {
    const found = roleStatements(s.template, s.stack.getLogicalId(p.role.node.defaultChild as never)).filter((st) =>
      st.actions.some((a) => a.startsWith('dynamodb:')),
    );
    expect(found).toHaveLength(1);
    return found[0];
  };

  it("scopes each role to its own query's lease and state keys", () => {
    const orders = bucketOf(s.orders);
    const clicks = bucketOf(s.clicks);
    expect(leadingKeys(stateStatement(s.orders))).toEqual([
      `lease#orders-per-minute@${orders}/checkpoints/Shared-Orders`,
      `orders-per-minute@${orders}/checkpoints/Shared-Orders#*`,
    ]);
    expect(leadingKeys(stateStatement(s.clicks))).toEqual([`lease#clicks@${clicks}/checkpoints/Shared-Clicks`, `clicks@${clicks}/checkpoints/Shared-Clicks#*`]);
    expect(stateStatement(s.orders).resources).toEqual(stateStatement(s.clicks).resources);
  });

  it('grants nothing else on the state table, and no statement on it is unconditioned', () => {
    for (const p of [s.orders, s.clicks]) {
      const onTable = roleStatements(s.template, s.stack.getLogicalId(p.role.node.defaultChild as never)).filter((st) =>
        st.resources.some((r) => r.includes('shared-state')),
      );
      expect(onTable).toHaveLength(1);
      expect(onTable[0].condition).toBeDefined();
    }
  });

  it('runs the scale-out task Lambda on the same scoped role, told the same query name', () => {
    const fns = s.template.findResources('AWS::Lambda::Function');
    const roleId = s.stack.getLogicalId(s.clicks.role.node.defaultChild as never);
    const taskId = s.stack.getLogicalId(s.clicks.scaleOut!.taskFunction.node.defaultChild as never);
    expect(fns[taskId].Properties.Role).toEqual({ 'Fn::GetAtt': [roleId, 'Arn'] });
    expect(fns[taskId].Properties.Environment.Variables.SLUICE_QUERY_NAME).toBe('clicks');
  });

  it("keeps one pipeline's pattern from matching the other's keys, even with a checkpoint prefix that extends the other's", () => {
    const a = stateNamespace('q', { bucket: 'b', prefix: 'checkpoints/a' });
    const ab = stateNamespace('q', { bucket: 'b', prefix: 'checkpoints/ab' });
    const keysOfAb = [`lease#${ab}`, new SliceKeys(ab, 'agg', 0).head().pk.S!];
    for (const pk of keysOfAb) expect(allowed(stateKeyPatterns(a), pk)).toBe(false);
  });
});

describe('the namespace the Lambda uses is the one the construct scoped', () => {
  const checkpoint = { bucket: 'my-checkpoints', prefix: 'checkpoints/orders' };
  const cfg: PipelineConfig = {
    checkpoint,
    stateTable: 'shared-state',
    source: { kind: 's3', bucket: 'my-landing', prefix: 'landing/orders' },
    sink: { kind: 'dynamodb', table: 'totals' },
    queryName: 'windowed-totals-append',
  };
  const plan = windowedTotals({ outputMode: 'append' });
  const built = buildExecutor({ region: 'eu-west-1' }, plan, cfg);
  afterAll(() => built.clients.destroy());
  const patterns = stateKeyPatterns(stateNamespace('windowed-totals-append', checkpoint));

  it('puts every partition key it reads or writes in the state table under the patterns', () => {
    expect(built.state.namespace).toBe(stateNamespace(plan.name, checkpoint));
    const pks = [
      built.lease.key.pk.S!,
      ...[0, 3].flatMap((p) => {
        const k = new SliceKeys(built.state.namespace, 'window-agg', p);
        return [k.head(), k.manifestChunk({ v: 7, w: 'x', c: 1, n: 1 }, 0), k.page('7.x.5')].map((i) => i.pk.S!);
      }),
      legacyDirectoryKey(built.state.namespace, 'window-agg').pk.S!,
    ];
    for (const pk of pks) expect({ pk, allowed: allowed(patterns, pk) }).toEqual({ pk, allowed: true });
  });

  it('reads SLUICE_QUERY_NAME, and refuses a query of another name before any request', () => {
    const env = {
      SLUICE_CHECKPOINT_URI: 's3://my-checkpoints/checkpoints/orders',
      SLUICE_STATE_TABLE: 'shared-state',
      SLUICE_SOURCE_URI: 's3://my-landing/x',
      SLUICE_SINK_URI: 's3://my-out/y',
    };
    expect(pipelineConfigFromEnv({ ...env, SLUICE_QUERY_NAME: ' clicks ' }).queryName).toBe('clicks');
    expect(pipelineConfigFromEnv(env).queryName).toBeUndefined();
    expect(() => buildExecutor({ region: 'eu-west-1' }, plan, { ...cfg, queryName: 'clicks' })).toThrow(InvalidOptionError);
    expect(() => buildExecutor({ region: 'eu-west-1' }, plan, { ...cfg, queryName: 'clicks' })).toThrow(/queryName prop to "windowed-totals-append"/);
  });
});

describe('a DynamoDB sink on the state table itself', () => {
  it('warns that its unscoped sink grant reaches every pipeline in the table', () => {
    const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'SameTable', { env: ENV });
    const stateTable = dynamodb.Table.fromTableName(stack, 'State', 'shared-state');
    new AvailableNowPipeline(stack, 'P', {
      stateTable,
      sink: PipelineSink.dynamodb(dynamodb.Table.fromTableName(stack, 'Sink', 'shared-state')),
      createAlarms: false,
      createDashboard: false,
    });
    Annotations.fromStack(stack).hasWarning('/SameTable/P', Match.stringLikeRegexp('writes to the state table'));
  });
});

describe('queryName', () => {
  it('refuses a name that no query can have (and that IAM would read as a wildcard)', () => {
    const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Bad', { env: ENV });
    expect(rejectionOf(() => new AvailableNowPipeline(stack, 'P', { queryName: 'orders*' }))).toMatch(/queryName "orders\*" is not a query name/);
  });
});
