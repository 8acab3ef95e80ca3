/**
 * Where an AvailableNowPipeline writes: one class per sink, chosen by a static factory, each of
 * which binds itself to the pipeline: it grants the function's role exactly what the sink's
 * adapter sends and returns the URI the handler reads (SLUICE_SINK_URI, parsed by parseSinkUri in
 * lib/aws/pipeline.ts).
 *
 *     sink: PipelineSink.s3()                            batch-<N>.jsonl under output/<pipelineName> in the pipeline bucket
 *     sink: PipelineSink.s3(bucket, 'totals')            the same in your bucket
 *     sink: PipelineSink.files(bucket, 'totals', { partitionBy: 'window.start', granularity: 'day' })
 *                                                        partitioned objects plus a sink log
 *     sink: PipelineSink.dynamodb(table, 'totals-v1')    an item per row, batch-ID guarded
 */
import { aws_dynamodb as dynamodb, aws_iam as iam, aws_s3 as s3 } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { GRANTED_ACTIONS, cleanPrefix, grantS3, invalid, type PipelineDefaults, type S3Place } from './binding';

/** What a bound sink gives the pipeline. */
export interface BoundSink {
  /** SLUICE_SINK_URI. */
  readonly uri: string;
  /** The output location, for an S3 sink. */
  readonly output?: S3Place;
  /** The table, for a DynamoDB sink. */
  readonly table?: dynamodb.ITable;
}

export interface FileSinkOptions {
  /** The output column (a struct field with a dot, e.g. `window.start`) whose value names each object's folder. @default no partitioning */
  readonly partitionBy?: string;
  /** How a timestamp partition value becomes the folder: as it is, its day or its hour. @default 'value' */
  readonly granularity?: 'value' | 'day' | 'hour';
}

/** The query key of a DynamoDB sink: what dynamodb://<table>/<queryKey> accepts. */
const QUERY_KEY = /^[^#/]{1,200}$/;

export abstract class PipelineSink {
  /** One JSON-lines object per batch, `<prefix>/batch-<N>.jsonl`, with deterministic keys. */
  static s3(bucket?: s3.IBucket, prefix?: string): PipelineSink {
    return new S3Sink(bucket, prefix === undefined ? undefined : cleanPrefix('PipelineSink.s3', 'prefix', prefix), undefined);
  }

  /** JSON-lines objects under `<prefix>/[<column>=<value>/]part-<N>-<n>.jsonl`, then `<prefix>/_sink_log/<N>` listing them. */
  static files(bucket?: s3.IBucket, prefix?: string, options: FileSinkOptions = {}): PipelineSink {
    const where = 'PipelineSink.files';
    if (options.partitionBy !== undefined && options.partitionBy.trim() === '') {
      invalid(where, `partitionBy ${JSON.stringify(options.partitionBy)} must name an output column, e.g. "window.start", or be left out for no partitioning`);
    }
    if (options.granularity !== undefined && !['value', 'day', 'hour'].includes(options.granularity)) {
      invalid(where, `granularity ${JSON.stringify(options.granularity)} must be 'value', 'day' or 'hour'`);
    }
    const params = new URLSearchParams();
    if (options.partitionBy === undefined && options.granularity === undefined) params.set('log', '');
    if (options.partitionBy !== undefined) params.set('partitionBy', options.partitionBy);
    if (options.granularity !== undefined) params.set('granularity', options.granularity);
    return new S3Sink(bucket, prefix === undefined ? undefined : cleanPrefix(where, 'prefix', prefix), params.toString().replace(/=$/, ''));
  }

  /** An item per output row in your table, keyed by the output's key columns; `queryKey` keeps queries sharing a table apart. @default queryKey the checkpoint's query id (so two pipelines never share rows by accident) */
  static dynamodb(table: dynamodb.ITable, queryKey?: string): PipelineSink {
    const where = 'PipelineSink.dynamodb';
    if (!table) invalid(where, "needs the table the sink writes (its layout belongs to the query): pass it, e.g. dynamodb.Table.fromTableName(this, 'Sink', 'totals')");
    if (queryKey !== undefined && !QUERY_KEY.test(queryKey)) invalid(where, `queryKey ${JSON.stringify(queryKey)} must be 1 to 200 characters without '/' or '#', e.g. "totals-v1"`);
    return new DynamoDbSink(table, queryKey);
  }

  /** The sink's kind. */
  abstract readonly kind: 's3' | 'dynamodb';

  /** Grants `role` what the sink's adapter sends and returns the URI. */
  abstract bind(scope: Construct, role: iam.IRole, pipeline: PipelineDefaults): BoundSink;
}

class S3Sink extends PipelineSink {
  readonly kind = 's3';

  /** `query` present: the file sink with its log (the URI's query string). */
  constructor(private readonly bucket: s3.IBucket | undefined, private readonly prefix: string | undefined, private readonly query: string | undefined) {
    super();
  }

  bind(_scope: Construct, role: iam.IRole, pipeline: PipelineDefaults): BoundSink {
    const output = { bucket: this.bucket ?? pipeline.pipelineBucket(), prefix: this.prefix ?? `output/${pipeline.pipelineName}` };
    // Both S3 sinks only PUT: deterministic keys make a replay overwrite its own objects.
    grantS3(role, { ...output, objectActions: GRANTED_ACTIONS.sinkObjects, list: false, kms: ['kms:GenerateDataKey'] });
    return { uri: `s3://${output.bucket.bucketName}/${output.prefix}${this.query === undefined ? '' : `?${this.query}`}`, output };
  }
}

class DynamoDbSink extends PipelineSink {
  readonly kind = 'dynamodb';

  constructor(private readonly table: dynamodb.ITable, private readonly queryKey: string | undefined) {
    super();
  }

  bind(_scope: Construct, role: iam.IRole): BoundSink {
    role.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'SinkTable', actions: [...GRANTED_ACTIONS.sinkTable], resources: [this.table.tableArn] }));
    this.table.encryptionKey?.grantEncryptDecrypt(role);
    return { uri: `dynamodb://${this.table.tableName}${this.queryKey === undefined ? '' : `/${this.queryKey}`}`, table: this.table };
  }
}
