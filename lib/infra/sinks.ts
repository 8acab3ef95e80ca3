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
 *     sink: PipelineSink.parquet(bucket, 'totals', { partitionBy: 'window.start', granularity: 'day',
 *                                glue: { columns: outputColumnTypes(plan) } })
 *                                                        Parquet objects plus a sink log, and a Glue
 *                                                        table over them for Athena
 *     sink: PipelineSink.dynamodb(table, 'totals-v1')    an item per row, batch-ID guarded
 */
import { CfnOutput, Stack, type aws_dynamodb as dynamodb, aws_glue as glue, aws_iam as iam, type aws_s3 as s3 } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { ddlOf, hiveTypeOf, parseDdlType } from '../engine/ddl';
import { InvalidOptionError } from '../engine/errors';
import { csvColumnsRefusal, csvSinkFormatOf } from '../engine/formats/csv-writer';
import { outputColumnTypes } from '../engine/run/runtime';
import type { OutputColumnType } from '../engine/ports';
import type { DataType } from '../engine/schema';
import { GRANTED_ACTIONS, cleanPrefix, grantS3, invalid, type PipelineDefaults, type S3Place } from './binding';

export { outputColumnTypes } from '../engine/run/runtime';

/** What a bound sink gives the pipeline. */
export interface BoundSink {
  /** SLUICE_SINK_URI. */
  readonly uri: string;
  /** The output location, for an S3 sink. */
  readonly output?: S3Place;
  /** The table, for a DynamoDB sink. */
  readonly table?: dynamodb.ITable;
  /** The Glue table over a Parquet sink's prefix, when `glue` was asked for. */
  readonly glueTable?: glue.CfnTable;
  /** The Glue database the construct created for it (absent with `createDatabase: false`). */
  readonly glueDatabase?: glue.CfnDatabase;
}

export interface FileSinkOptions {
  /** The output column (a struct field with a dot, e.g. `window.start`) whose value names each object's folder. @default no partitioning */
  readonly partitionBy?: string;
  /** How a timestamp partition value becomes the folder: as it is, its day or its hour. @default 'value' */
  readonly granularity?: 'value' | 'day' | 'hour';
}

export interface CsvSinkOptions extends FileSinkOptions {
  /** Each object starts with a record of the column names (Spark's `header`). @default false */
  readonly header?: boolean;
  /** Spark's CSV writer options by name (sep, quoteAll, nullValue, timestampFormat, ...; docs/sinks.md). @default Spark's defaults */
  readonly options?: Readonly<Record<string, string>>;
}

export interface ParquetSinkOptions extends FileSinkOptions {
  /**
   * Also create a Glue Data Catalog table over the prefix (and its database), with partition
   * projection, so Athena queries the output with no crawler. The Lambda gets no Glue permission.
   * @default no Glue table
   */
  readonly glue?: GlueTableOptions;
}

export interface GlueTableOptions {
  /**
   * The query's output columns and their types, in order: `outputColumnTypes(plan)` derives them
   * from the query the Lambda runs (the construct only knows its entry file), with their full
   * types (a DECIMAL's precision and scale, nested fields); or written out, each a type in Spark
   * DDL or WINDOW, e.g. `{ window: 'WINDOW', user: 'STRING', total: 'DECIMAL(20,2)' }`. Each
   * becomes its Hive type in the table (`decimal(20,2)`, `array<struct<sku:string>>`); the sink's
   * `batch_id` column is added.
   */
  readonly columns: Readonly<Record<string, OutputColumnType | string>>;
  /** The database's name (lowercase letters, digits, _). @default the pipeline name, lowercase, with _ for other characters */
  readonly database?: string;
  /** Create the database; false: it exists, and only the table is created in it. @default true */
  readonly createDatabase?: boolean;
  /** The table's name (lowercase letters, digits, _). @default 'output' */
  readonly table?: string;
  /**
   * The partitions Athena projects, for granularity day or hour: Athena's `projection.<key>.range`,
   * in the partition's format or relative to NOW. Rows outside it are not read.
   * @default 'NOW-1YEARS,NOW'
   */
  readonly projectionRange?: string;
  /**
   * For granularity value: the partition values there are (an `enum` projection). Without them
   * the projection is `injected`, and every query must filter the partition key with `=`.
   * @default an injected projection
   */
  readonly partitionValues?: readonly string[];
}

/** The query key of a DynamoDB sink: what dynamodb://<table>/<queryKey> accepts. */
const QUERY_KEY = /^[^#/]{1,200}$/;

export abstract class PipelineSink {
  /** One JSON-lines object per batch, `<prefix>/batch-<N>.jsonl`, with deterministic keys. */
  static s3(bucket?: s3.IBucket, prefix?: string): PipelineSink {
    return new S3Sink(bucket, prefix === undefined ? undefined : cleanPrefix('PipelineSink.s3', 'prefix', prefix), undefined, undefined);
  }

  /** JSON-lines objects under `<prefix>/[<column>=<value>/]part-<N>-<n>.jsonl`, then `<prefix>/_sink_log/<N>` listing them. */
  static files(bucket?: s3.IBucket, prefix?: string, options: FileSinkOptions = {}): PipelineSink {
    const where = 'PipelineSink.files';
    const params = fileSinkParams(where, options);
    if (params.length === 0) params.push(['log', '']);
    return new S3Sink(
      bucket,
      prefix === undefined ? undefined : cleanPrefix(where, 'prefix', prefix),
      new URLSearchParams(params).toString().replace(/=$/, ''),
      undefined,
    );
  }

  /**
   * Parquet objects (SNAPPY; Spark's types; a `batch_id` column) under
   * `<prefix>/[<column>=<value>/]part-<N>-<n>.parquet`, then `<prefix>/_sink_log/<N>` listing
   * them; with `glue`, a Glue database and table over them for Athena.
   */
  static parquet(bucket?: s3.IBucket, prefix?: string, options: ParquetSinkOptions = {}): PipelineSink {
    const where = 'PipelineSink.parquet';
    const params = fileSinkParams(where, options);
    const query = new URLSearchParams([['format', 'parquet'], ...params]).toString();
    const cleaned = prefix === undefined ? undefined : cleanPrefix(where, 'prefix', prefix);
    return new S3Sink(bucket, cleaned, query, options.glue === undefined ? undefined : checkGlue(where, options));
  }

  /**
   * CSV objects (each row as Spark's CSV writer writes it; with `header`, the column names first)
   * under `<prefix>/[<column>=<value>/]part-<N>-<n>.csv`, then `<prefix>/_sink_log/<N>` listing them.
   */
  static csv(bucket?: s3.IBucket, prefix?: string, options: CsvSinkOptions = {}): PipelineSink {
    const where = 'PipelineSink.csv';
    const params = fileSinkParams(where, options);
    const head: Array<[string, string]> = options.header
      ? [
          ['format', 'csv'],
          ['header', 'true'],
        ]
      : [['format', 'csv']];
    // a bad option fails the synth, not the first run
    try {
      csvSinkFormatOf(options.options);
    } catch (e) {
      if (e instanceof InvalidOptionError) invalid(where, e.message);
      throw e;
    }
    const query = new URLSearchParams([...head, ...Object.entries(options.options ?? {}), ...params]).toString();
    return new S3Sink(bucket, prefix === undefined ? undefined : cleanPrefix(where, 'prefix', prefix), query, undefined);
  }

  /** An item per output row in your table, keyed by the output's key columns; `queryKey` keeps queries sharing a table apart. @default queryKey the checkpoint's query id (so two pipelines never share rows by accident) */
  static dynamodb(table: dynamodb.ITable, queryKey?: string): PipelineSink {
    const where = 'PipelineSink.dynamodb';
    if (!table)
      invalid(where, "needs the table the sink writes (its layout belongs to the query): pass it, e.g. dynamodb.Table.fromTableName(this, 'Sink', 'totals')");
    if (queryKey !== undefined && !QUERY_KEY.test(queryKey))
      invalid(where, `queryKey ${JSON.stringify(queryKey)} must be 1 to 200 characters without '/' or '#', e.g. "totals-v1"`);
    return new DynamoDbSink(table, queryKey);
  }

  /** The sink's kind. */
  abstract readonly kind: 's3' | 'dynamodb';

  /** Grants `role` what the sink's adapter sends and returns the URI. */
  abstract bind(scope: Construct, role: iam.IRole, pipeline: PipelineDefaults): BoundSink;
}

class S3Sink extends PipelineSink {
  readonly kind = 's3';

  /** `query` present: the file sink with its log (the URI's query string); `glue`: a Parquet sink's table. */
  constructor(
    private readonly bucket: s3.IBucket | undefined,
    private readonly prefix: string | undefined,
    private readonly query: string | undefined,
    private readonly glue: CheckedGlue | undefined,
  ) {
    super();
  }

  bind(scope: Construct, role: iam.IRole, pipeline: PipelineDefaults): BoundSink {
    // a CSV sink and a query whose output it cannot write: the synth fails, not the first run
    if (pipeline.plan !== undefined && new URLSearchParams(this.query ?? '').get('format') === 'csv') {
      const types = outputColumnTypes(pipeline.plan);
      const refusal = csvColumnsRefusal(Object.keys(types), types, pipeline.plan.name);
      if (refusal !== null) invalid('PipelineSink.csv', refusal);
    }
    const output = { bucket: this.bucket ?? pipeline.pipelineBucket(), prefix: this.prefix ?? `output/${pipeline.pipelineName}` };
    // The S3 sinks only PUT (write-once, deterministic keys). Athena's readers are granted by
    // their own roles: the function gets nothing of Glue.
    grantS3(role, { ...output, objectActions: GRANTED_ACTIONS.sinkObjects, list: false, kms: ['kms:Decrypt', 'kms:GenerateDataKey'] });
    const uri = `s3://${output.bucket.bucketName}/${output.prefix}${this.query === undefined ? '' : `?${this.query}`}`;
    return { uri, output, ...(this.glue ? glueTableOver(scope, output, this.glue, pipeline) : {}) };
  }
}

class DynamoDbSink extends PipelineSink {
  readonly kind = 'dynamodb';

  constructor(
    private readonly table: dynamodb.ITable,
    private readonly queryKey: string | undefined,
  ) {
    super();
  }

  bind(_scope: Construct, role: iam.IRole): BoundSink {
    role.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'SinkTable', actions: [...GRANTED_ACTIONS.sinkTable], resources: [this.table.tableArn] }));
    this.table.encryptionKey?.grantEncryptDecrypt(role);
    return { uri: `dynamodb://${this.table.tableName}${this.queryKey === undefined ? '' : `/${this.queryKey}`}`, table: this.table };
  }
}

// ---- the file sinks' options and the Glue table of a Parquet sink

type Granularity = NonNullable<FileSinkOptions['granularity']>;

/** The URI parameters of a file sink's options, checked. */
function fileSinkParams(where: string, options: FileSinkOptions): Array<[string, string]> {
  if (options.partitionBy !== undefined && options.partitionBy.trim() === '') {
    invalid(where, `partitionBy ${JSON.stringify(options.partitionBy)} must name an output column, e.g. "window.start", or be left out for no partitioning`);
  }
  if (options.granularity !== undefined && !['value', 'day', 'hour'].includes(options.granularity)) {
    invalid(where, `granularity ${JSON.stringify(options.granularity)} must be 'value', 'day' or 'hour'`);
  }
  const params: Array<[string, string]> = [];
  if (options.partitionBy !== undefined) params.push(['partitionBy', options.partitionBy]);
  if (options.granularity !== undefined) params.push(['granularity', options.granularity]);
  return params;
}

/** The sink's own column, as lib/aws/s3/parquet-sink.ts BATCH_ID_COLUMN names it (a test holds them equal; importing it would load the Parquet writer into the CDK app). */
const BATCH_ID_COLUMN = 'batch_id';
const GLUE_NAME = /^[a-z0-9_]{1,255}$/;
const COLUMN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Athena's (Hive's) type of a WINDOW column; every other type's is hiveTypeOf's (lib/engine/ddl.ts). */
const WINDOW_HIVE_TYPE = 'struct<start:timestamp,end:timestamp>';

/** The full type of a glue.columns entry: a type, or its Spark DDL text; WINDOW as it is. */
function glueColumnType(where: string, name: string, type: OutputColumnType | string): OutputColumnType {
  if (type === 'WINDOW' || typeof type !== 'string') {
    if (type === 'WINDOW' || (typeof type === 'object' && type !== null && typeof type.type === 'string')) return type;
    invalid(where, `glue.columns gives ${name} the type ${JSON.stringify(type)}, which is neither WINDOW nor a type: pass outputColumnTypes(plan)`);
  }
  try {
    return parseDdlType(type);
  } catch (e) {
    return invalid(
      where,
      `glue.columns gives ${name} the type ${JSON.stringify(type)}, which is not WINDOW or a Spark DDL type (${(e as Error).message}): pass outputColumnTypes(plan), or a type such as "DECIMAL(10,2)"`,
    );
  }
}

/** The struct field names of a type that Athena cannot name (at any depth), for the refusal. */
function badFieldNames(t: DataType): string[] {
  if (t.type === 'ARRAY') return badFieldNames(t.element!);
  if (t.type === 'MAP') return badFieldNames(t.value!);
  if (t.type === 'STRUCT') return t.fields!.flatMap((f) => [...(COLUMN_NAME.test(f.name) ? [] : [f.name]), ...badFieldNames(f)]);
  return [];
}

/** How each granularity's folder value reads as a date projection (Java's DateTimeFormatter patterns). */
const DATE_PROJECTION: Record<Exclude<Granularity, 'value'>, { format: string; unit: string }> = {
  day: { format: 'yyyy-MM-dd', unit: 'DAYS' },
  hour: { format: "yyyy-MM-dd'T'HH", unit: 'HOURS' },
};

interface CheckedGlue {
  readonly options: GlueTableOptions;
  readonly partitionBy?: string;
  readonly granularity: Granularity;
  readonly columns: Array<{ name: string; type: string }>;
}

function checkGlue(where: string, options: ParquetSinkOptions): CheckedGlue {
  const g = options.glue!;
  const entries = Object.entries(g.columns ?? {});
  if (entries.length === 0) {
    invalid(
      where,
      'glue.columns must list the query\'s output columns and their types: pass outputColumnTypes(plan) for the query the Lambda runs, e.g. { window: "WINDOW", total: "DOUBLE" }',
    );
  }
  const types = new Map<string, OutputColumnType>();
  for (const [name, given] of entries) {
    if (!COLUMN_NAME.test(name))
      invalid(
        where,
        `glue.columns names a column ${JSON.stringify(name)}, which Athena cannot name: use letters, digits and _ (rename it in the query with withColumn/select)`,
      );
    const type = glueColumnType(where, name, given);
    const bad = type === 'WINDOW' ? [] : badFieldNames(type);
    if (bad.length > 0)
      invalid(
        where,
        `glue.columns gives ${name} a struct field ${JSON.stringify(bad[0])}, which Athena cannot name: use letters, digits and _ in struct field names`,
      );
    types.set(name, type);
  }
  if (entries.some(([name]) => name.toLowerCase() === BATCH_ID_COLUMN)) {
    invalid(where, `glue.columns has a column ${BATCH_ID_COLUMN}, which the Parquet sink adds itself: rename the query's column`);
  }
  const lower = new Set<string>();
  for (const [name] of entries) {
    if (lower.has(name.toLowerCase()))
      invalid(where, `glue.columns has two columns named ${JSON.stringify(name.toLowerCase())} in lowercase, and Athena's names are lowercase: rename one`);
    lower.add(name.toLowerCase());
  }
  if (options.partitionBy !== undefined) {
    const [top, field] = options.partitionBy.split('.');
    const type = types.get(top);
    if (type === undefined)
      invalid(
        where,
        `partitionBy ${JSON.stringify(options.partitionBy)} names none of glue.columns (${entries.map(([n]) => n).join(', ')}): partition by one of them`,
      );
    if (field !== undefined && (type !== 'WINDOW' || !['start', 'end'].includes(field))) {
      invalid(
        where,
        `partitionBy ${JSON.stringify(options.partitionBy)} names a field of ${top} (${type === 'WINDOW' ? type : ddlOf(type)}), which has none: a WINDOW column has start and end`,
      );
    }
  }
  for (const name of [g.database, g.table]) {
    if (name !== undefined && !GLUE_NAME.test(name))
      invalid(where, `glue database and table names must be 1 to 255 lowercase letters, digits or _ (Athena's rule), not ${JSON.stringify(name)}`);
  }
  const granularity = options.granularity ?? 'value';
  if (g.projectionRange !== undefined && granularity === 'value') {
    invalid(
      where,
      `glue.projectionRange applies to granularity day or hour, and this sink partitions by value: leave it out, or list the values in glue.partitionValues`,
    );
  }
  if (g.partitionValues !== undefined && (granularity !== 'value' || options.partitionBy === undefined)) {
    invalid(where, 'glue.partitionValues applies to partitionBy with granularity value: leave it out for day or hour, which Athena projects as dates');
  }
  if (g.partitionValues !== undefined && (g.partitionValues.length === 0 || g.partitionValues.some((v) => v === '' || v.includes(',')))) {
    invalid(
      where,
      `glue.partitionValues ${JSON.stringify(g.partitionValues)} must be one or more non-empty values without commas (Athena's enum projection): leave it out for an injected projection`,
    );
  }
  const columns = [...types].map(([name, type]) => ({ name: name.toLowerCase(), type: type === 'WINDOW' ? WINDOW_HIVE_TYPE : hiveTypeOf(type) }));
  columns.push({ name: BATCH_ID_COLUMN, type: 'bigint' });
  return { options: g, partitionBy: options.partitionBy, granularity, columns };
}

/**
 * The Glue database and table over a Parquet sink's prefix. Partitions are projected, not
 * crawled: Athena computes the folders a query needs from the table's parameters
 * (`storage.location.template`), so no crawler or MSCK REPAIR runs as batches add folders.
 *
 *     s3://<bucket>/<prefix>/window_start=2026-10-01/part-….parquet
 *                            └ partition key window_start (string), projection type date,
 *                              format yyyy-MM-dd, range NOW-1YEARS,NOW, interval 1 DAYS
 */
function glueTableOver(scope: Construct, output: S3Place, g: CheckedGlue, pipeline: PipelineDefaults): Pick<BoundSink, 'glueTable' | 'glueDatabase'> {
  const stack = Stack.of(scope);
  const databaseName =
    g.options.database ??
    (pipeline.pipelineName
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, '_')
      .replace(/^_+|_+$/g, '') ||
      'sluice');
  const tableName = g.options.table ?? 'output';
  const location = `s3://${output.bucket.bucketName}/${output.prefix}/`;
  const parameters: Record<string, string> = { EXTERNAL: 'TRUE', classification: 'parquet', 'parquet.compression': 'SNAPPY' };
  const partitionKeys: glue.CfnTable.ColumnProperty[] = [];
  let filter = '';
  if (g.partitionBy !== undefined) {
    const folder = g.partitionBy.replace('.', '_');
    // A data column of the same name would clash with the key: the key takes a suffix, and the
    // template still points at the folder the sink writes.
    const key = g.columns.some((c) => c.name === folder.toLowerCase()) ? `${folder.toLowerCase()}_partition` : folder.toLowerCase();
    partitionKeys.push({ name: key, type: 'string', comment: `the ${g.granularity} of ${g.partitionBy} (the sink's folder ${folder}=...)` });
    parameters['projection.enabled'] = 'true';
    parameters['storage.location.template'] = `${location}${folder}=\${${key}}/`;
    if (g.granularity === 'value') {
      if (g.options.partitionValues) {
        parameters[`projection.${key}.type`] = 'enum';
        parameters[`projection.${key}.values`] = g.options.partitionValues.join(',');
      } else {
        parameters[`projection.${key}.type`] = 'injected';
        filter = ` WHERE ${key} = '<a ${g.partitionBy} value>'`;
      }
    } else {
      const p = DATE_PROJECTION[g.granularity];
      parameters[`projection.${key}.type`] = 'date';
      parameters[`projection.${key}.format`] = p.format;
      parameters[`projection.${key}.range`] = g.options.projectionRange ?? 'NOW-1YEARS,NOW';
      parameters[`projection.${key}.interval`] = '1';
      parameters[`projection.${key}.interval.unit`] = p.unit;
    }
  }
  const database =
    g.options.createDatabase === false
      ? undefined
      : new glue.CfnDatabase(scope, 'SinkDatabase', {
          catalogId: stack.account,
          databaseInput: { name: databaseName, description: `sluice pipeline ${pipeline.pipelineName}` },
        });
  const table = new glue.CfnTable(scope, 'SinkTable', {
    catalogId: stack.account,
    databaseName,
    tableInput: {
      name: tableName,
      description: `sluice Parquet sink ${location} (objects of a batch are final once _sink_log/<N> lists them)`,
      tableType: 'EXTERNAL_TABLE',
      parameters,
      partitionKeys,
      storageDescriptor: {
        location,
        columns: g.columns,
        inputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat',
        outputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat',
        serdeInfo: { serializationLibrary: 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe', parameters: { 'serialization.format': '1' } },
        compressed: true,
      },
    },
  });
  if (database) table.addResourceDependency(database);
  new CfnOutput(scope, 'AthenaQuery', {
    description: 'An Athena query over the Parquet sink (the Glue table the pipeline created)',
    value: `SELECT * FROM "${databaseName}"."${tableName}"${filter} ORDER BY ${BATCH_ID_COLUMN} DESC LIMIT 100`,
  });
  return { glueTable: table, ...(database ? { glueDatabase: database } : {}) };
}
