/**
 * The naive sink of the Spark-practice matrix: every row is appended as a new DynamoDB item under
 * a random key, with no batch-ID guard. A replay of a batch whose write committed appends its rows
 * again: the duplicates the guarded sinks exist to prevent. Test-only, never wire it in.
 *
 *     run 1:  offsets/0 ─▶ append rows (uuid keys) ─▶ ✗ crash after the sink write
 *     run 2:  offsets/0 (replay) ─▶ append the same rows again under new uuids  ◀─ duplicates
 */
import { randomUUID } from 'node:crypto';
import {
  BatchWriteItemCommand,
  type BatchWriteItemCommandOutput,
  type DynamoDBClient,
  QueryCommand,
  type QueryCommandOutput,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import type { OutputRow, Sink, SinkContext } from '../../lib/engine/ports';
import { fromAttr, toAttr } from '../../lib/aws/dynamodb/sink-items';

export class NaiveAppendSink implements Sink {
  readonly description: string;

  constructor(private readonly opts: { client: DynamoDBClient; tableName: string; queryKey: string }) {
    this.description = `naive dynamodb://${opts.tableName}/${opts.queryKey}`;
  }

  async addBatch(_batchId: number, rows: OutputRow[], _ctx: SinkContext): Promise<void> {
    const puts: WriteRequest[] = rows.map((row) => ({
      PutRequest: { Item: { pk: { S: `naive#${this.opts.queryKey}` }, sk: { S: randomUUID() }, row: toAttr(row, 'row') } },
    }));
    for (let i = 0; i < puts.length; i += 25) {
      let req: WriteRequest[] | undefined = puts.slice(i, i + 25);
      while (req && req.length > 0) {
        const res: BatchWriteItemCommandOutput = await this.opts.client.send(new BatchWriteItemCommand({ RequestItems: { [this.opts.tableName]: req } }));
        req = res.UnprocessedItems?.[this.opts.tableName];
      }
    }
  }

  async readAll(): Promise<OutputRow[]> {
    const out: OutputRow[] = [];
    let start: QueryCommandOutput['LastEvaluatedKey'];
    do {
      const res: QueryCommandOutput = await this.opts.client.send(
        new QueryCommand({
          TableName: this.opts.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': { S: `naive#${this.opts.queryKey}` } },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      for (const it of res.Items ?? []) out.push(fromAttr(it.row) as OutputRow);
      start = res.LastEvaluatedKey;
    } while (start);
    return out;
  }
}
