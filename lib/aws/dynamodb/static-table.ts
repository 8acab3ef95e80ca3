/**
 * A DynamoDB table as the static side of a stream-static join
 * (`staticTable.dynamodb(name, { key, schema })`): looked up by key, not scanned.
 *
 *   a chunk's distinct keys ─▶ minus those this run already asked for (the per-run cache)
 *     ─▶ groups of 100 ─▶ BatchGetItem, `parallelism` at a time
 *        └ UnprocessedKeys ─▶ asked for again through withRetry (lib/aws/request/retry.ts)
 *     ─▶ each item's attributes mapped to the schema's columns (a missing one is null)
 *
 * A key with no item is cached as absent: it is not asked for again in the run. The next run
 * starts with an empty cache, so it sees the table as it is then (Spark reads a static
 * DataFrame again in each batch; sluice once per run).
 */
import { type AttributeValue, BatchGetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { InvalidOptionError, SluiceError } from '../../engine/errors';
import type { Row, StaticTableReader } from '../../engine/ports';
import { LosslessNumber } from 'lossless-json';
import type { Schema } from '../../engine/schema';
import { coerceRecord } from '../../engine/json-record';
import { isRetriable, toSluiceError } from '../request/errors';
import { RetryableResult, type RetryOptions, type RetryPolicy, retryPolicy, withRetry } from '../request/retry';
import { mapLimit } from '../request/concurrency';
import { BATCH_GET_MAX, checkClient, checkTableName, type Item } from './requests';

export interface DynamoDbStaticTableOptions extends RetryOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** The table's key attributes: [partition] or [partition, sort]. */
  readonly key: readonly string[];
  readonly schema: Schema;
  /** BatchGetItem requests in flight at once. @default 4 */
  readonly parallelism?: number;
  /** Strongly consistent reads. @default false (a reference table changes seldom) */
  readonly consistentRead?: boolean;
}

export interface DynamoDbStaticTableStats {
  /** BatchGetItem requests sent, retries of unprocessed keys included. */
  readonly batchGets: number;
  /** Distinct keys asked for. */
  readonly keysRequested: number;
  /** Keys answered from the run's cache. */
  readonly cacheHits: number;
  readonly itemsFound: number;
}

export class DynamoDbStaticTable implements StaticTableReader {
  readonly description: string;
  private readonly policy: RetryPolicy;
  private readonly parallelism: number;
  /** Key text to the row found, or null when the table has no such item. */
  private readonly cache = new Map<string, Row | null>();
  private readonly counts = { batchGets: 0, keysRequested: 0, cacheHits: 0, itemsFound: 0 };

  constructor(private readonly opts: DynamoDbStaticTableOptions) {
    checkClient(opts.client, 'DynamoDbStaticTable');
    checkTableName(opts.tableName, 'DynamoDbStaticTable tableName');
    this.description = `dynamodb://${opts.tableName}`;
    this.policy = retryPolicy(opts, 'DynamoDbStaticTable');
    this.parallelism = opts.parallelism ?? 4;
    if (!Number.isInteger(this.parallelism) || this.parallelism < 1 || this.parallelism > 64) {
      throw new InvalidOptionError(`DynamoDbStaticTable parallelism ${opts.parallelism} must be an integer from 1 to 64: leave it out for 4`);
    }
  }

  stats(): DynamoDbStaticTableStats {
    return { ...this.counts };
  }

  /** The items of `keys` (values in `key` order) as rows; keys without an item are left out. */
  async lookup(keys: ReadonlyArray<readonly unknown[]>): Promise<Row[]> {
    const wanted = new Map<string, Item>();
    const out: Row[] = [];
    for (const values of keys) {
      const text = JSON.stringify(values);
      if (this.cache.has(text)) {
        this.counts.cacheHits++;
        const row = this.cache.get(text);
        if (row) out.push(row);
      } else if (values.some((v) => v === '')) {
        // DynamoDB keys are never empty strings: no item can match, and asking would be refused.
        this.cache.set(text, null);
      } else if (!wanted.has(text)) wanted.set(text, this.keyItem(values));
    }
    const texts = [...wanted.keys()];
    this.counts.keysRequested += texts.length;
    const groups: string[][] = [];
    for (let i = 0; i < texts.length; i += BATCH_GET_MAX) groups.push(texts.slice(i, i + BATCH_GET_MAX));
    const found = new Map<string, Row>();
    await mapLimit(groups, this.parallelism, async (group) => {
      for (const item of await this.batchGet(group.map((t) => wanted.get(t)!))) {
        const row = this.toRow(item);
        found.set(JSON.stringify(this.opts.key.map((k) => row[k])), row);
      }
    });
    for (const t of texts) {
      const row = found.get(t) ?? null;
      this.cache.set(t, row);
      if (row) out.push(row);
    }
    this.counts.itemsFound += found.size;
    return out;
  }

  private keyItem(values: readonly unknown[]): Item {
    const item: Item = {};
    this.opts.key.forEach((k, i) => {
      const v = values[i];
      const type = this.opts.schema.columns.find((c) => c.name === k)!.type;
      item[k] = type === 'STRING' ? { S: String(v) } : { N: String(v) };
    });
    return item;
  }

  /** One BatchGetItem of up to 100 keys, unprocessed keys asked for again with backoff. */
  private async batchGet(keys: Item[]): Promise<Item[]> {
    const items: Item[] = [];
    let left = keys;
    const what = `DynamoDB BatchGetItem on static table ${this.opts.tableName}`;
    await withRetry(
      this.policy,
      (e) => isRetriable('dynamodb', e),
      async () => {
        this.counts.batchGets++;
        const res = await this.opts.client.send(
          new BatchGetItemCommand({ RequestItems: { [this.opts.tableName]: { Keys: left, ConsistentRead: this.opts.consistentRead ?? false } } }),
        );
        for (const it of res.Responses?.[this.opts.tableName] ?? []) items.push(it);
        left = res.UnprocessedKeys?.[this.opts.tableName]?.Keys ?? [];
        if (left.length > 0) throw new RetryableResult(`left ${left.length} keys unprocessed`, { table: this.opts.tableName });
      },
      {
        fail: ({ error, attempts }) =>
          error instanceof RetryableResult
            ? new SluiceError(
                `${what} ${error.message} after ${attempts} attempts: raise the table's read capacity (or use on-demand); the batch replays safely`,
                { retriable: true, details: { table: this.opts.tableName, attempts } },
              )
            : toSluiceError(
                error,
                'dynamodb',
                what,
                `check that table ${this.opts.tableName} exists with the key ${this.opts.key.join(', ')} and that the role may dynamodb:BatchGetItem on it`,
                attempts,
              ),
      },
    );
    return items;
  }

  /** An item as a row of the schema: each column from its attribute, null when absent. */
  private toRow(item: Item): Row {
    const record: Record<string, unknown> = {};
    for (const c of this.opts.schema.columns) record[c.name] = item[c.name] === undefined ? null : attributeValue(item[c.name]);
    const res = coerceRecord(this.opts.schema, record);
    if (!res.ok) {
      const key = this.opts.key.map((k) => `${k}=${JSON.stringify(attributeValue(item[k]))}`).join(', ');
      throw new SluiceError(`static table ${this.opts.tableName} item ${key}: ${res.reason}: fix the item or the schema given to staticTable.dynamodb`, {
        retriable: false,
        details: { table: this.opts.tableName },
      });
    }
    return res.row;
  }
}

/**
 * An attribute value as JSON (numbers as numbers, sets as lists, binary as base64). A number a
 * double does not hold (a BIGINT beyond 2^53, a DECIMAL of many digits: DynamoDB keeps 38 digits)
 * is its text as a lossless-json number, which the schema reads exactly.
 */
function attributeValue(v: AttributeValue | undefined): unknown {
  if (!v) return null;
  if (v.S !== undefined) return v.S;
  if (v.N !== undefined) return exactNumber(v.N);
  if (v.BOOL !== undefined) return v.BOOL;
  if (v.NULL) return null;
  if (v.SS) return [...v.SS];
  if (v.NS) return v.NS.map(Number);
  if (v.L) return v.L.map(attributeValue);
  if (v.M) return Object.fromEntries(Object.entries(v.M).map(([k, x]) => [k, attributeValue(x)]));
  if (v.B) return Buffer.from(v.B).toString('base64');
  if (v.BS) return v.BS.map((b) => Buffer.from(b).toString('base64'));
  return null;
}

/** A DynamoDB number: a double when it holds the text's value exactly, else the text as a lossless-json number. */
function exactNumber(text: string): number | LosslessNumber {
  const n = Number(text);
  return String(n) === canonicalNumber(text) ? n : new LosslessNumber(text);
}

/** A number's text without a plus sign, leading zeros or trailing fraction zeros (DynamoDB's N as String(Number(N)) writes it). */
function canonicalNumber(text: string): string {
  let t = text.trim().replace(/^\+/, '');
  if (/^-?[0-9]+\.[0-9]*$/.test(t)) t = t.replace(/\.?0+$/, '');
  return t.replace(/^(-?)0+(?=[0-9])/, '$1');
}
