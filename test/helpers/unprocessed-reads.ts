/**
 * A real DynamoDB client (on the test stack) whose BatchGetItem answers leave all but the first
 * requested key unprocessed, `times` times (Infinity: always), as DynamoDB does under throttling;
 * it counts the BatchGetItem requests sent, the keys asked for and the answers it altered.
 */
import type { BatchGetItemCommandInput, BatchGetItemCommandOutput, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createClients } from '../../lib/aws/clients';
import { testConnection } from './stack';

type Item = Record<string, { S?: string }>;

export function leavingKeysUnprocessed(times = 0): { client: DynamoDBClient; state: { left: number; batchGets: number; keys: number; altered: number } } {
  const client = createClients(testConnection()).dynamodb as DynamoDBClient;
  const state = { left: times, batchGets: 0, keys: 0, altered: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      if (context.commandName !== 'BatchGetItemCommand') return out;
      state.batchGets++;
      const [name, request] = Object.entries((args.input as BatchGetItemCommandInput).RequestItems!)[0];
      const keys = request.Keys!;
      state.keys += keys.length;
      if (state.left <= 0 || keys.length < 2) return out;
      state.left--;
      state.altered++;
      const output = out.output as BatchGetItemCommandOutput;
      const first = keys[0] as Item;
      // The item of the first key (a projection may leave a key attribute out of the items).
      const same = (item: Item) => Object.entries(first).every(([k, v]) => item[k] === undefined || item[k].S === v.S);
      output.Responses = { [name]: (output.Responses?.[name] ?? []).filter((item) => same(item as Item)) };
      output.UnprocessedKeys = { [name]: { ...request, Keys: keys.slice(1) } };
      return out;
    },
    { step: 'initialize', name: 'leaveKeysUnprocessed' },
  );
  return { client, state };
}
