/**
 * Where an AvailableNowPipeline reads: one class per kind, chosen by a static factory, each of
 * which binds itself to the pipeline (as aws-cdk's `KinesisEventSource.bind` does): it creates
 * what it owns, grants the function's role exactly what the adapter sends, and returns the URI the
 * handler reads (SLUICE_SOURCE_URI).
 *
 *     source: PipelineSource.s3()                          landing/<pipelineName> in the pipeline bucket
 *     source: PipelineSource.s3(bucket, 'landing/orders')  your bucket
 *     source: PipelineSource.s3(bucket, 'landing/orders', { discovery: 'notifications' })
 *                                                          S3 event notifications through an SQS
 *                                                          queue it creates, instead of LISTs
 *     source: PipelineSource.kinesis(stream)               your stream
 *     source: PipelineSource.newKinesisStream()            a created on-demand stream
 */
import { Duration, Stack, aws_iam as iam, aws_kinesis as kinesis, aws_s3 as s3, aws_s3_notifications as s3n, aws_sqs as sqs } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { GRANTED_ACTIONS, cleanPrefix, grantS3, invalid, wholeNumber, type PipelineDefaults, type S3Place } from './binding';
import { acknowledge } from './nag';

/** What a bound source gives the pipeline. */
export interface BoundSource {
  /** SLUICE_SOURCE_URI: `s3://<bucket>/<prefix>` or `kinesis://<stream name>`. */
  readonly uri: string;
  /** The landing location, for an S3 source. */
  readonly landing?: S3Place;
  /** The stream, for a Kinesis source. */
  readonly stream?: kinesis.IStream;
  /** Notification mode: the queue S3 notifies (SLUICE_NOTIFICATION_QUEUE_URL) and its dead-letter queue. */
  readonly notifications?: { readonly queue: sqs.IQueue; readonly deadLetterQueue: sqs.IQueue };
}

/** How an S3 source finds new files. */
export interface S3SourceOptions {
  /**
   * `list`: ListObjectsV2 of the prefix. `notifications`: S3 event notifications (ObjectCreated
   * under the prefix) to an SQS queue the construct creates, with its dead-letter queue, the
   * bucket's notification, the grants and an alarm; for prefixes too large to list
   * (docs/sources.md, "Notification mode"). Not with `parallelism`.
   * @default 'list'
   */
  readonly discovery?: 'list' | 'notifications';
  /**
   * Notification mode: receives of a message before the queue moves it to its dead-letter queue
   * (2 to 1000). A message is received once by every run until the batch that read its file
   * commits, and a malformed one by every run: keep this above the runs a file may wait.
   * @default 10
   */
  readonly maxReceiveCount?: number;
  /**
   * What the query's `.option('cleanSource', ...)` does with a file after its batch committed
   * (Spark's option): `delete` grants s3:DeleteObject on the landing prefix; `archive` also
   * s3:PutObject under `sourceArchiveDir`. The query's option decides what happens; this prop only
   * grants it (without it, a clean is refused by IAM, logged and retried, and never fails a run).
   * @default 'off'
   */
  readonly cleanSource?: 'off' | 'archive' | 'delete';
  /** Where `cleanSource: 'archive'` moves files (the query's `sourceArchiveDir`): required with it. */
  readonly sourceArchiveDir?: S3Place;
}

export interface NewKinesisStreamOptions {
  /** How long the stream keeps records, 24 to 8760; keep it well above the schedule interval. @default 24 */
  readonly retentionHours?: number;
}

export abstract class PipelineSource {
  /** Files that producers drop under `prefix` of `bucket`, each read once in any key order (Spark's file source). */
  static s3(bucket?: s3.IBucket, prefix?: string, options: S3SourceOptions = {}): PipelineSource {
    const discovery = options.discovery ?? 'list';
    if (discovery !== 'list' && discovery !== 'notifications') {
      invalid('PipelineSource.s3', `discovery ${JSON.stringify(discovery)} is not a discovery mode: use 'list' (the default) or 'notifications'`, {
        discovery,
      });
    }
    if (options.maxReceiveCount !== undefined && discovery !== 'notifications') {
      invalid('PipelineSource.s3', `maxReceiveCount applies to discovery: 'notifications' only: add it, or leave maxReceiveCount out`, {
        maxReceiveCount: options.maxReceiveCount,
      });
    }
    const maxReceiveCount = wholeNumber(
      'PipelineSource.s3',
      'maxReceiveCount',
      options.maxReceiveCount ?? DEFAULT_MAX_RECEIVE_COUNT,
      2,
      1000,
      'SQS redrives after 1 to 1000 receives, and a message is received once per run until its file is committed',
    );
    const clean = options.cleanSource ?? 'off';
    if (clean !== 'off' && clean !== 'archive' && clean !== 'delete') {
      invalid(
        'PipelineSource.s3',
        `cleanSource ${JSON.stringify(clean)} is not Spark's: use 'off' (the default), 'archive' (with sourceArchiveDir) or 'delete'`,
        {
          cleanSource: clean,
        },
      );
    }
    if ((clean === 'archive') !== (options.sourceArchiveDir !== undefined)) {
      invalid(
        'PipelineSource.s3',
        clean === 'archive'
          ? "cleanSource: 'archive' needs sourceArchiveDir (the bucket and prefix the query's sourceArchiveDir names), to grant s3:PutObject there"
          : "sourceArchiveDir applies to cleanSource: 'archive' only: add it, or leave sourceArchiveDir out",
        { cleanSource: clean },
      );
    }
    const archive =
      options.sourceArchiveDir === undefined
        ? undefined
        : { bucket: options.sourceArchiveDir.bucket, prefix: cleanPrefix('PipelineSource.s3', 'sourceArchiveDir.prefix', options.sourceArchiveDir.prefix) };
    return new S3Source(
      bucket,
      prefix === undefined ? undefined : cleanPrefix('PipelineSource.s3', 'prefix', prefix),
      discovery === 'notifications' ? { maxReceiveCount } : undefined,
      clean === 'off' ? undefined : { archive },
    );
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
   * the URI. `input`: the number of another input, joined or unioned (2, 3, ...; the `inputs`
   * prop), which names what it creates and its default prefix apart from the first source's.
   */
  abstract bind(scope: Construct, role: iam.IRole, pipeline: PipelineDefaults, input?: number): BoundSource;
}

const DEFAULT_MAX_RECEIVE_COUNT = 10;
/** The id aws-cdk-lib gives the stack's singleton that applies bucket notifications (BucketNotificationsHandler.singleton). */
const BUCKET_NOTIFICATIONS_HANDLER = 'BucketNotificationsHandler050a0587b7544547bf325f094a3db834';
/** How much longer than the Lambda timeout a received notification stays invisible. */
const VISIBILITY_MARGIN_SECONDS = 60;

class S3Source extends PipelineSource {
  readonly kind = 's3';

  constructor(
    private readonly bucket: s3.IBucket | undefined,
    private readonly prefix: string | undefined,
    /** Present: notification mode. */
    private readonly notifications?: { readonly maxReceiveCount: number },
    /** Present: cleanSource (delete, or archive to `archive`). */
    private readonly clean?: { readonly archive?: S3Place },
  ) {
    super();
  }

  bind(scope: Construct, role: iam.IRole, pipeline: PipelineDefaults, input?: number): BoundSource {
    const landing = {
      bucket: this.bucket ?? pipeline.pipelineBucket(),
      prefix: this.prefix ?? `landing/${pipeline.pipelineName}${input === undefined ? '' : `-input${input}`}`,
    };
    // S3LandingSource lists the prefix (or after its newest key), then GETs each new file; with
    // cleanSource it deletes each file after its batch committed, archive copies it first.
    const landingActions = this.clean ? [...GRANTED_ACTIONS.landingObjects, ...GRANTED_ACTIONS.cleanedObjects] : GRANTED_ACTIONS.landingObjects;
    grantS3(role, { ...landing, objectActions: landingActions, list: true, kms: ['kms:Decrypt'] });
    if (this.clean?.archive)
      grantS3(role, { ...this.clean.archive, objectActions: GRANTED_ACTIONS.archiveObjects, list: false, kms: ['kms:GenerateDataKey', 'kms:Decrypt'] });
    const uri = `s3://${landing.bucket.bucketName}/${landing.prefix}`;
    if (!this.notifications) return { uri, landing };
    if (input !== undefined) {
      invalid(
        scope,
        `input ${input} is an S3 source with discovery: 'notifications', which only the main source (the \`source\` prop) supports: give the other inputs (joined or unioned) discovery: 'list'`,
      );
    }
    if (pipeline.partitioned) {
      invalid(
        scope,
        "discovery: 'notifications' does not run with `parallelism`: a partitioned run discovers files in its plan task and commits in another, and the queue's receipt handles do not pass between them. Use discovery: 'list', or leave out parallelism",
      );
    }
    return { uri, landing, notifications: this.createQueues(scope, role, landing, pipeline.lambdaTimeoutSeconds, this.notifications.maxReceiveCount) };
  }

  /**
   *   bucket ──ObjectCreated, prefix/──▶ queue (SSE-SQS, TLS only, visibility > Lambda timeout)
   *                                        └─ after maxReceiveCount receives ──▶ dead-letter queue (14 days)
   *   role: GetQueueAttributes, ReceiveMessage, DeleteMessage, ChangeMessageVisibility on the queue only
   */
  private createQueues(scope: Construct, role: iam.IRole, landing: S3Place, timeoutSeconds: number, maxReceiveCount: number) {
    const deadLetterQueue = new sqs.Queue(scope, 'LandingNotificationsDeadLetters', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    acknowledge(
      deadLetterQueue,
      ['AwsSolutions-SQS3'],
      'it is itself the dead-letter queue of the landing notifications (malformed messages, and files not committed after maxReceiveCount runs); an alarm watches it',
    );
    const queue = new sqs.Queue(scope, 'LandingNotifications', {
      // SSE-SQS: S3 can send to it (a queue under the AWS managed KMS key aws/sqs cannot receive S3 notifications).
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // A run holds what it received until its batches commit: longer than the run can last.
      visibilityTimeout: Duration.seconds(timeoutSeconds + VISIBILITY_MARGIN_SECONDS),
      retentionPeriod: Duration.days(14),
      deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount },
    });
    // The notification's own test message (s3:TestEvent) is deleted by the first run.
    landing.bucket.addEventNotification(s3.EventType.OBJECT_CREATED, new s3n.SqsDestination(queue), { prefix: `${landing.prefix}/` });
    // CDK's one handler per stack that writes the bucket's notification configuration at deploy time.
    const handlerRole = Stack.of(scope).node.tryFindChild(BUCKET_NOTIFICATIONS_HANDLER)?.node.tryFindChild('Role');
    if (handlerRole) {
      acknowledge(
        handlerRole,
        ['AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]'],
        "aws-cdk-lib's BucketNotificationsHandler (a deploy-time custom resource, one per stack) writes its logs with the AWS managed basic execution policy; sluice's own functions do not use it",
      );
    }
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({ sid: 'LandingNotifications', actions: [...GRANTED_ACTIONS.notificationQueue], resources: [queue.queueArn] }),
    );
    return { queue, deadLetterQueue };
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
