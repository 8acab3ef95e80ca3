/**
 * PipelineSink.csv: the sink URI the handler gets (format=csv, header), which parses into the CSV
 * sink, and the URI checks: header is a parameter of format=csv only, true or false.
 */
import { App, Stack, aws_s3 as s3 } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AvailableNowPipeline, type CsvSinkOptions, PipelineSink } from '../../lib/infra/available-now-pipeline';
import { describeSink, parseSinkUri } from '../../lib/aws/pipeline';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { InvalidOptionError } from '../../lib/engine/errors';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { count, sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';

function sinkUriOf(options: CsvSinkOptions, query: { plan?: QueryPlan; entry?: string } = {}): string {
  // Without CDK's built-in CloudFormation validation: it only prints its findings (no test here
  // reads them), and its WebAssembly engine costs seconds of CPU per file.
  const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test', { env: { account: '123456789012', region: 'eu-west-1' } });
  const bucket = s3.Bucket.fromBucketName(stack, 'Out', 'sink-bucket');
  new AvailableNowPipeline(stack, 'Pipeline', {
    sink: PipelineSink.csv(bucket, 'totals', options),
    ...(query.plan ? { query: query.plan } : {}),
    ...(query.entry ? { entry: query.entry } : {}),
  });
  const fns = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function'));
  const v = fns[0].Properties.Environment.Variables.SLUICE_SINK_URI;
  if (typeof v === 'string') return v;
  const [sep, parts] = (v as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
  return parts.map((p) => (typeof p === 'string' ? p : JSON.stringify(p))).join(sep);
}

describe('PipelineSink.csv', () => {
  it('hands the handler a CSV sink URI, with the header and the partitioning asked for', () => {
    const uri = sinkUriOf({ header: true, partitionBy: 'day' });
    expect(uri).toBe('s3://sink-bucket/totals?format=csv&header=true&partitionBy=day');
    expect(parseSinkUri(uri)).toEqual({ kind: 's3-files', format: 'csv', header: true, bucket: 'sink-bucket', prefix: 'totals', partitionBy: 'day' });
    expect(describeSink(parseSinkUri(uri))).toBe('s3://sink-bucket/totals (CSV files + sink log)');
    expect(sinkUriOf({})).toBe('s3://sink-bucket/totals?format=csv');
  });

  it("puts Spark's writer options in the URI, and refuses a bad one at synth", () => {
    const uri = sinkUriOf({ options: { sep: '|', quoteAll: 'true' } });
    expect(uri).toBe('s3://sink-bucket/totals?format=csv&sep=%7C&quoteAll=true');
    expect(parseSinkUri(uri)).toMatchObject({ format: 'csv', csvOptions: { sep: '|', quoteAll: 'true' } });
    expect(() => sinkUriOf({ options: { seperator: ';' } })).toThrow(/PipelineSink.csv the CSV sink has no option seperator/);
  });

  it('refuses header on another format, or a header that is not true or false', () => {
    expect(() => parseSinkUri('s3://my-bucket/out?format=parquet&header=true')).toThrow(InvalidOptionError);
    expect(() => parseSinkUri('s3://my-bucket/out?header=true')).toThrow(/header=true is a parameter of format=csv/);
    expect(() => parseSinkUri('s3://my-bucket/out?format=csv&header=yes')).toThrow(/true or false/);
  });

  it('refuses at synth a query whose output has a nested column, given as the plan or as a .sql entry; a flat one passes', () => {
    const totals = () =>
      readStream
        .format('json')
        .schema('user STRING, amount DOUBLE, event_time TIMESTAMP')
        .load()
        .withWatermark('event_time', '10 minutes')
        .groupBy(window('event_time', '10 minutes'), 'user')
        .agg(sum('amount').as('total'), count().as('events'));
    const refusal =
      /^PipelineSink\.csv \[UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE\] The CSV datasource doesn't support the column `window` of the type "STRUCT<start: TIMESTAMP, end: TIMESTAMP>" \(query totals\): select its fields as columns/;
    const nested = totals().writeStream.outputMode('append').queryName('totals').plan();
    expect(() => sinkUriOf({}, { plan: nested })).toThrow(refusal);
    const flat = totals().select('window.start', 'window.end', 'user', 'total', 'events').writeStream.outputMode('append').queryName('totals').plan();
    expect(sinkUriOf({ header: true }, { plan: flat })).toBe('s3://sink-bucket/totals?format=csv&header=true');

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-csv-synth-'));
    try {
      const sql = (select: string) =>
        `SET queryName = totals;\nSELECT ${select}, user, sum(amount) AS total FROM STREAM read_files(format => 'json', schema => 'user STRING, amount DOUBLE, event_time TIMESTAMP') WATERMARK event_time DELAY OF INTERVAL 10 MINUTES GROUP BY window(event_time, '10 minutes'), user`;
      fs.writeFileSync(path.join(dir, 'nested.sql'), sql("window(event_time, '10 minutes') AS window"));
      fs.writeFileSync(path.join(dir, 'flat.sql'), sql('window.start AS window_start, window.end AS window_end'));
      expect(() => sinkUriOf({}, { entry: path.join(dir, 'nested.sql') })).toThrow(refusal);
      expect(sinkUriOf({}, { entry: path.join(dir, 'flat.sql') })).toBe('s3://sink-bucket/totals?format=csv');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
