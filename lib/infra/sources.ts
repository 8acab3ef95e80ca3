/**
 * Where an AvailableNowPipeline reads: one class per kind, chosen by a static factory, each of
 * which binds itself to the pipeline (as aws-cdk's `KinesisEventSource.bind` does): it creates
 * what it owns, grants the function's role exactly what the adapter sends, and returns the URI the
 * handler reads (SLUICE_SOURCE_URI).
 *
 *     source: PipelineSource.s3()                          landing/<pipelineName> in the pipeline bucket
 *     source: PipelineSource.s3(bucket, 'landing/orders')  your bucket
 *     source: PipelineSource.kinesis(stream)               your stream
 *     source: PipelineSource.newKinesisStream()            a created on-demand stream
 */
import { Duration, aws_iam as iam, aws_kinesis as kinesis, type aws_s3 as s3 } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { GRANTED_ACTIONS, cleanPrefix, grantS3, invalid, wholeNumber, type PipelineDefaults, type S3Place } from './binding';

/** What a bound source gives the pipeline. */
export interface BoundSource {
  /** SLUICE_SOURCE_URI: `s3://<bucket>/<prefix>` or `kinesis://<stream name>`. */
  readonly uri: string;
  /** The landing location, for an S3 source. */
  readonly landing?: S3Place;
  /** The stream, for a Kinesis source. */
  readonly stream?: kinesis.IStream;
}

export interface NewKinesisStreamOptions {
  /** How long the stream keeps records, 24 to 8760; keep it well above the schedule interval. @default 24 */
  readonly retentionHours?: number;
}

export abstract class PipelineSource {
  /** JSON-lines files that producers drop under `prefix` of `bucket`, read in key order. */
  static s3(bucket?: s3.IBucket, prefix?: string): PipelineSource {
    return new S3Source(bucket, prefix === undefined ? undefined : cleanPrefix('PipelineSource.s3', 'prefix', prefix));
  }

  /** Records of your Kinesis stream. */
  static kinesis(stream: kinesis.IStream): PipelineSource {
    if (!stream)
      invalid(
        'PipelineSource.kinesis',
        'needs the stream to read: pass it, e.g. kinesis.Stream.fromStreamArn(this, "Orders", arn), or use PipelineSource.newKinesisStream()',
      );
    return new KinesisSource(stream);
  }

  /** Records of a stream the pipeline creates: on demand, encrypted with the AWS managed key. */
  static newKinesisStream(options: NewKinesisStreamOptions = {}): PipelineSource {
    const hours = wholeNumber(
      'PipelineSource.newKinesisStream',
      'retentionHours',
      options.retentionHours ?? 24,
      24,
      8760,
      'Kinesis keeps records 24 to 8760 hours',
    );
    return new KinesisSource(undefined, hours);
  }

  /** The source's kind, as the handler's URI names it. */
  abstract readonly kind: 's3' | 'kinesis';

  /**
   * Creates what the source owns under `scope`, grants `role` what the adapter sends, and returns
   * the URI. `input`: the number of a stream-stream join's other input (2, 3, ...; the `inputs`
   * prop), which names what it creates and its default prefix apart from the first source's.
   */
  abstract bind(scope: Construct, role: iam.IRole, pipeline: PipelineDefaults, input?: number): BoundSource;
}

class S3Source extends PipelineSource {
  readonly kind = 's3';

  constructor(
    private readonly bucket: s3.IBucket | undefined,
    private readonly prefix: string | undefined,
  ) {
    super();
  }

  bind(_scope: Construct, role: iam.IRole, pipeline: PipelineDefaults, input?: number): BoundSource {
    const landing = {
      bucket: this.bucket ?? pipeline.pipelineBucket(),
      prefix: this.prefix ?? `landing/${pipeline.pipelineName}${input === undefined ? '' : `-input${input}`}`,
    };
    // S3LandingSource lists after the last key it read, then GETs each new file.
    grantS3(role, { ...landing, objectActions: GRANTED_ACTIONS.landingObjects, list: true, kms: ['kms:Decrypt'] });
    return { uri: `s3://${landing.bucket.bucketName}/${landing.prefix}`, landing };
  }
}

class KinesisSource extends PipelineSource {
  readonly kind = 'kinesis';

  /** `stream` absent: a stream is created, keeping records `retentionHours`. */
  constructor(
    private readonly stream: kinesis.IStream | undefined,
    private readonly retentionHours = 24,
  ) {
    super();
  }

  bind(scope: Construct, role: iam.IRole, pipeline: PipelineDefaults, input?: number): BoundSource {
    const name = input === undefined ? 'SourceStream' : `InputStream${input}`;
    const stream =
      this.stream ??
      new kinesis.Stream(scope, name, {
        streamMode: kinesis.StreamMode.ON_DEMAND,
        encryption: kinesis.StreamEncryption.MANAGED,
        retentionPeriod: Duration.hours(this.retentionHours),
        removalPolicy: pipeline.removalPolicy,
      });
    role.addToPrincipalPolicy(new iam.PolicyStatement({ sid: name, actions: [...GRANTED_ACTIONS.stream], resources: [stream.streamArn] }));
    stream.encryptionKey?.grantDecrypt(role);
    return { uri: `kinesis://${stream.streamName}`, stream };
  }
}
