/**
 * CDK assertions on PipelineSink.parquet: the sink URI the handler gets, the grants (S3 PUT only,
 * nothing of Glue), and the Glue database and table over the prefix with partition projection,
 * as they appear in the synthesized template.
 */
import { App, Stack, aws_s3 as s3 } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AvailableNowPipeline, PipelineSink, outputColumnTypes, type ParquetSinkOptions } from '../../lib/infra/available-now-pipeline';
import { parseSinkUri } from '../../lib/aws/pipeline';
import { BATCH_ID_COLUMN } from '../../lib/aws/s3/parquet-sink';
import { InvalidOptionError } from '../../lib/engine/errors';
import { readStream } from '../../lib/engine/query/reader';
import { windowedTotals } from '../../examples/windowed-totals';

// ---- factories -------------------------------------------------------------------------------

/** A stack `Test` with one pipeline writing Parquet to s3://sink-bucket/totals, not bundled. */
function synth(options: ParquetSinkOptions) {
  // Without CDK's built-in CloudFormation validation: it only prints its findings (no test here
  // reads them), and its WebAssembly engine costs seconds of CPU per file.
  const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test', { env: { account: '123456789012', region: 'eu-west-1' } });
  const bucket = s3.Bucket.fromBucketName(stack, 'Out', 'sink-bucket');
  const pipeline = new AvailableNowPipeline(stack, 'Pipeline', { sink: PipelineSink.parquet(bucket, 'totals', options) });
  return { stack, pipeline, template: Template.fromStack(stack) };
}

/** A CloudFormation value with its Fn::Join flattened (the bucket names here are plain strings). */
function flat(v: unknown): unknown {
  if (v && typeof v === 'object' && 'Fn::Join' in v) {
    const [sep, parts] = (v as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
    return parts.map((p) => (typeof p === 'string' ? p : JSON.stringify(p))).join(sep);
  }
  return v;
}

function tableInput(template: Template) {
  const tables = Object.values(template.findResources('AWS::Glue::Table'));
  expect(tables).toHaveLength(1);
  return tables[0].Properties.TableInput as {
    Name: string;
    Parameters: Record<string, unknown>;
    PartitionKeys: Array<{ Name: string; Type: string }>;
    StorageDescriptor: {
      Location: unknown;
      Columns: Array<{ Name: string; Type: string }>;
      InputFormat: string;
      OutputFormat: string;
      SerdeInfo: { SerializationLibrary: string };
    };
  };
}

function sinkUri(template: Template): string {
  const fns = Object.values(template.findResources('AWS::Lambda::Function'));
  return String(flat(fns[0].Properties.Environment.Variables.SLUICE_SINK_URI));
}

/** Every IAM action the template grants anyone. */
function grantedActions(template: Template): string[] {
  const out: string[] = [];
  for (const p of Object.values(template.findResources('AWS::IAM::Policy'))) {
    for (const st of p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[] }>) out.push(...[st.Action].flat());
  }
  return out;
}

const windowedColumns = () => outputColumnTypes(windowedTotals());

// ---- scenarios --------------------------------------------------------------------------------

describe('when the windowed-totals query writes Parquet by day of window.start, with a Glue table', () => {
  const { template, pipeline } = synth({ partitionBy: 'window.start', granularity: 'day', glue: { columns: windowedColumns(), database: 'sluice_demo' } });

  it('hands the handler a Parquet sink URI that parses into the Parquet sink', () => {
    expect(sinkUri(template)).toBe('s3://sink-bucket/totals?format=parquet&partitionBy=window.start&granularity=day');
    expect(parseSinkUri(sinkUri(template))).toEqual({
      kind: 's3-files',
      format: 'parquet',
      bucket: 'sink-bucket',
      prefix: 'totals',
      partitionBy: 'window.start',
      partitionGranularity: 'day',
    });
  });

  it("creates the database and an external Parquet table whose columns are the query's, plus batch_id", () => {
    template.hasResourceProperties('AWS::Glue::Database', { CatalogId: '123456789012', DatabaseInput: Match.objectLike({ Name: 'sluice_demo' }) });
    template.hasResourceProperties('AWS::Glue::Table', {
      CatalogId: '123456789012',
      DatabaseName: 'sluice_demo',
      TableInput: Match.objectLike({ Name: 'output', TableType: 'EXTERNAL_TABLE' }),
    });
    const t = tableInput(template);
    expect(t.StorageDescriptor.Columns.map((c) => [c.Name, c.Type])).toEqual([
      ['window', 'struct<start:timestamp,end:timestamp>'],
      ['total', 'double'],
      ['events', 'bigint'],
      [BATCH_ID_COLUMN, 'bigint'],
    ]);
    expect(flat(t.StorageDescriptor.Location)).toBe('s3://sink-bucket/totals/');
    expect(t.StorageDescriptor.SerdeInfo.SerializationLibrary).toBe('org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe');
    expect(t.StorageDescriptor.InputFormat).toBe('org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat');
    expect(t.StorageDescriptor.OutputFormat).toBe('org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat');
    expect(pipeline.sinkGlueTable).toBeDefined();
  });

  it("projects the day partitions from the sink's folders, so no crawler is needed", () => {
    const t = tableInput(template);
    expect(t.PartitionKeys.map((k) => [k.Name, k.Type])).toEqual([['window_start', 'string']]);
    expect(t.Parameters).toMatchObject({
      'projection.enabled': 'true',
      'projection.window_start.type': 'date',
      'projection.window_start.format': 'yyyy-MM-dd',
      'projection.window_start.range': 'NOW-1YEARS,NOW',
      'projection.window_start.interval': '1',
      'projection.window_start.interval.unit': 'DAYS',
      classification: 'parquet',
    });
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Glue's partition projection template, ${...} in the literal
    expect(flat(t.Parameters['storage.location.template'])).toBe('s3://sink-bucket/totals/window_start=${window_start}/');
  });

  it('outputs an Athena query to try', () => {
    template.hasOutput('*', { Value: 'SELECT * FROM "sluice_demo"."output" ORDER BY batch_id DESC LIMIT 100' });
  });

  it('grants the function S3 PUT (and GET, for a replay to compare) on the prefix and nothing of Glue', () => {
    const actions = grantedActions(template);
    expect(actions.filter((a) => a.startsWith('glue:') || a.startsWith('athena:'))).toEqual([]);
    const onSink = Object.values(template.findResources('AWS::IAM::Policy'))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>)
      .filter((st) => String(flat(st.Resource)).includes('sink-bucket/totals'));
    expect(onSink.map((st) => [[st.Action].flat(), flat(st.Resource)])).toEqual([
      [['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload'], 'arn:{"Ref":"AWS::Partition"}:s3:::sink-bucket/totals/*'],
    ]);
  });
});

describe('when the partition column is a top-level column of the data', () => {
  it('names the key <folder>_partition (a data column keeps its name) and projects hours', () => {
    const { template } = synth({
      partitionBy: 'event_time',
      granularity: 'hour',
      glue: { columns: { user: 'STRING', event_time: 'TIMESTAMP', amount: 'DOUBLE' }, projectionRange: '2026-01-01T00,NOW' },
    });
    const t = tableInput(template);
    expect(t.PartitionKeys.map((k) => k.Name)).toEqual(['event_time_partition']);
    expect(t.StorageDescriptor.Columns.map((c) => c.Name)).toEqual(['user', 'event_time', 'amount', 'batch_id']);
    expect(t.Parameters).toMatchObject({
      'projection.event_time_partition.type': 'date',
      'projection.event_time_partition.format': "yyyy-MM-dd'T'HH",
      'projection.event_time_partition.range': '2026-01-01T00,NOW',
      'projection.event_time_partition.interval.unit': 'HOURS',
    });
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Glue's partition projection template, ${...} in the literal
    expect(flat(t.Parameters['storage.location.template'])).toBe('s3://sink-bucket/totals/event_time=${event_time_partition}/');
  });

  it('projects a value partition as injected (queries filter it with =), or as an enum of the values given', () => {
    const injected = tableInput(synth({ partitionBy: 'user', glue: { columns: { user: 'STRING', total: 'DOUBLE' } } }).template);
    expect(injected.Parameters['projection.user_partition.type']).toBe('injected');
    const enumerated = tableInput(synth({ partitionBy: 'user', glue: { columns: { user: 'STRING', total: 'DOUBLE' }, partitionValues: ['a', 'b'] } }).template);
    expect(enumerated.Parameters).toMatchObject({ 'projection.user_partition.type': 'enum', 'projection.user_partition.values': 'a,b' });
  });
});

describe('when the sink is not partitioned, or has no Glue table', () => {
  it('an unpartitioned table has no partition keys and no projection', () => {
    const t = tableInput(synth({ glue: { columns: windowedColumns(), createDatabase: false, database: 'analytics', table: 'totals' } }).template);
    expect(t.Name).toBe('totals');
    expect(t.PartitionKeys).toEqual([]);
    expect(t.Parameters['projection.enabled']).toBeUndefined();
  });

  it('createDatabase: false creates only the table; no glue option creates neither', () => {
    const { template } = synth({ glue: { columns: windowedColumns(), createDatabase: false, database: 'analytics' } });
    template.resourceCountIs('AWS::Glue::Database', 0);
    template.resourceCountIs('AWS::Glue::Table', 1);
    const bare = synth({ partitionBy: 'window.start', granularity: 'day' }).template;
    bare.resourceCountIs('AWS::Glue::Table', 0);
    expect(sinkUri(bare)).toBe('s3://sink-bucket/totals?format=parquet&partitionBy=window.start&granularity=day');
  });
});

describe('when the query outputs decimals, dates and nested types', () => {
  const DDL =
    'order_id BIGINT, price DECIMAL(10,2), big DECIMAL(38,10), day DATE, tiny TINYINT, small SMALLINT, ratio FLOAT, ' +
    'items ARRAY<STRUCT<sku: STRING, qty: INT, price: DECIMAL(10,2)>>, counts MAP<STRING, BIGINT>, deep MAP<STRING, ARRAY<ARRAY<DATE>>>';
  const plan = readStream.format('json').schema(DDL).load().writeStream.outputMode('append').trigger({ availableNow: true }).queryName('typed').plan();

  it("gives the Glue table each column's Hive type from the plan's full type, at any depth", () => {
    const { template } = synth({ glue: { columns: outputColumnTypes(plan) } });
    expect(tableInput(template).StorageDescriptor.Columns.map((c) => [c.Name, c.Type])).toEqual([
      ['order_id', 'bigint'],
      ['price', 'decimal(10,2)'],
      ['big', 'decimal(38,10)'],
      ['day', 'date'],
      ['tiny', 'tinyint'],
      ['small', 'smallint'],
      ['ratio', 'float'],
      ['items', 'array<struct<sku:string,qty:int,price:decimal(10,2)>>'],
      ['counts', 'map<string,bigint>'],
      ['deep', 'map<string,array<array<date>>>'],
      [BATCH_ID_COLUMN, 'bigint'],
    ]);
  });

  it('takes the types written out in Spark DDL as well, and WINDOW', () => {
    const { template } = synth({ glue: { columns: { window: 'WINDOW', total: 'DECIMAL(20,2)', lines: 'ARRAY<STRUCT<sku: STRING, n: BIGINT>>' } } });
    expect(tableInput(template).StorageDescriptor.Columns.map((c) => [c.Name, c.Type])).toEqual([
      ['window', 'struct<start:timestamp,end:timestamp>'],
      ['total', 'decimal(20,2)'],
      ['lines', 'array<struct<sku:string,n:bigint>>'],
      [BATCH_ID_COLUMN, 'bigint'],
    ]);
  });
});

describe('when the Glue options cannot work', () => {
  it('refuses them when the factory is called, with the value and the fix', () => {
    const cases: Array<[ParquetSinkOptions, RegExp]> = [
      [{ glue: { columns: {} } }, /glue.columns must list the query's output columns and their types: pass outputColumnTypes\(plan\)/],
      [{ partitionBy: 'country', glue: { columns: { total: 'DOUBLE' } } }, /partitionBy "country" names none of glue.columns \(total\)/],
      [{ partitionBy: 'window.middle', granularity: 'day', glue: { columns: windowedColumns() } }, /names a field of window \(WINDOW\), which has none/],
      [{ glue: { columns: { 'my col': 'STRING' } } }, /"my col", which Athena cannot name/],
      [
        { glue: { columns: { total: 'FLOT' } } },
        /the type "FLOT", which is not WINDOW or a Spark DDL type .*pass outputColumnTypes\(plan\), or a type such as "DECIMAL\(10,2\)"/,
      ],
      [{ glue: { columns: { total: { kind: 'DOUBLE' } as never } } }, /the type \{"kind":"DOUBLE"\}, which is neither WINDOW nor a type/],
      [{ glue: { columns: { line: 'STRUCT<`sku id`: STRING>' } } }, /a struct field "sku id", which Athena cannot name/],
      [{ glue: { columns: { batch_id: 'LONG' } } }, /has a column batch_id, which the Parquet sink adds itself/],
      [{ glue: { columns: windowedColumns(), database: 'My-DB' } }, /lowercase letters, digits or _ .*not "My-DB"/],
      [{ partitionBy: 'user', glue: { columns: { user: 'STRING' }, projectionRange: 'NOW-1DAYS,NOW' } }, /projectionRange applies to granularity day or hour/],
      [{ partitionBy: 'user', glue: { columns: { user: 'STRING' }, partitionValues: ['a,b'] } }, /must be one or more non-empty values without commas/],
    ];
    for (const [options, message] of cases) {
      expect(() => PipelineSink.parquet(undefined, 'out', options)).toThrow(InvalidOptionError);
      expect(() => PipelineSink.parquet(undefined, 'out', options)).toThrow(message);
    }
  });
});
