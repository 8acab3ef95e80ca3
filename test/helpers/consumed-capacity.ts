/**
 * What DynamoDB bills, as DynamoDB reports it: a client of the test connection with an SDK
 * middleware that asks every command for `ReturnConsumedCapacity: 'TOTAL'` (the code under test
 * never sets it) and sums the `ConsumedCapacity` of every answer, by command.
 */
import type { ConsumedCapacity, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDynamoDbClient } from '../../lib/aws/clients';
import { testConnection } from './stack';

/** Commands billed in write units; every other command is billed in read units. */
const WRITE_COMMANDS = new Set(['PutItemCommand', 'BatchWriteItemCommand', 'DeleteItemCommand', 'UpdateItemCommand', 'TransactWriteItemsCommand']);

interface Units {
  read: number;
  write: number;
}

export interface CapacityMeter {
  /** A DynamoDB client on the test connection whose every command is metered. */
  readonly client: DynamoDBClient;
  /** Units consumed since the last reset, in total and by command name (`PutItem`, ...). */
  total(): Units;
  byCommand(): Record<string, Units>;
  /** Units consumed while `work` runs. */
  during(work: () => Promise<unknown>): Promise<Units & { byCommand: Record<string, Units> }>;
  reset(): void;
}

export function capacityMeter(): CapacityMeter {
  const client = createDynamoDbClient(testConnection());
  let counts: Record<string, Units> = {};
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { ReturnConsumedCapacity?: string };
      input.ReturnConsumedCapacity ??= 'TOTAL';
      const result = await next(args);
      const consumed = (result.output as { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] }).ConsumedCapacity;
      const name = context.commandName ?? 'unknown';
      const units = consumedUnits(consumed);
      const into = (counts[name.replace(/Command$/, '')] ??= { read: 0, write: 0 });
      if (WRITE_COMMANDS.has(name)) into.write += units;
      else into.read += units;
      return result;
    },
    { step: 'initialize', name: 'sluiceTestConsumedCapacity' },
  );
  const total = (): Units => Object.values(counts).reduce((a, u) => ({ read: a.read + u.read, write: a.write + u.write }), { read: 0, write: 0 });
  return {
    client,
    total,
    byCommand: () => structuredClone(counts),
    async during(work) {
      const before = structuredClone(counts);
      await work();
      const byCommand: Record<string, Units> = {};
      for (const [name, u] of Object.entries(counts)) {
        const was = before[name] ?? { read: 0, write: 0 };
        if (u.read !== was.read || u.write !== was.write) byCommand[name] = { read: u.read - was.read, write: u.write - was.write };
      }
      const sum = Object.values(byCommand).reduce((a, u) => ({ read: a.read + u.read, write: a.write + u.write }), { read: 0, write: 0 });
      return { ...sum, byCommand };
    },
    reset() {
      counts = {};
    },
  };
}

function consumedUnits(consumed: ConsumedCapacity | ConsumedCapacity[] | undefined): number {
  if (consumed === undefined) return 0;
  const list = Array.isArray(consumed) ? consumed : [consumed];
  return list.reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
}
