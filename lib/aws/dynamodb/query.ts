/** Reading a whole partition of a DynamoDB table. */
import { QueryCommand, type AttributeValue, type DynamoDBClient, type QueryCommandOutput } from '@aws-sdk/client-dynamodb';

type Item = Record<string, AttributeValue>;

/**
 * Every item of partition `pk`, page by page, with strongly consistent reads. `send` runs each
 * request (the caller's retries and request accounting go around it); `onItem` takes the items in
 * sort-key order.
 */
export async function forEachPartitionItem(
  client: DynamoDBClient,
  tableName: string,
  pk: string,
  send: (request: () => Promise<QueryCommandOutput>) => Promise<QueryCommandOutput>,
  onItem: (item: Item) => void,
): Promise<void> {
  let start: Item | undefined;
  do {
    const exclusiveStart = start;
    const res = await send(() =>
      client.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': { S: pk } },
          ConsistentRead: true,
          ExclusiveStartKey: exclusiveStart,
        }),
      ),
    );
    for (const item of res.Items ?? []) onItem(item);
    start = res.LastEvaluatedKey;
  } while (start);
}
