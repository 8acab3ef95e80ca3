/**
 * PipelineSink.csv: the sink URI the handler gets (format=csv, header), which parses into the CSV
 * sink, and the URI checks: header is a parameter of format=csv only, true or false.
 */
import { App, Stack, aws_s3 as s3 } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AvailableNowPipeline, type CsvSinkOptions, PipelineSink } from '../../lib/infra/available-now-pipeline';
import { describeSink, parseSinkUri } from '../../lib/aws/pipeline';
import { InvalidOptionError } from '../../lib/engine/errors';

function sinkUriOf(options: CsvSinkOptions): string {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test', { env: { account: '123456789012', region: 'eu-west-1' } });
  const bucket = s3.Bucket.fromBucketName(stack, 'Out', 'sink-bucket');
  new AvailableNowPipeline(stack, 'Pipeline', { sink: PipelineSink.csv(bucket, 'totals', options) });
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
});
