/**
 * What test files use to reach the AWS endpoints of this Jest run: the embedded local stack
 * started by test/setup/global-setup.ts, or LocalStack when AWS_ENDPOINT_URL is set.
 */
import { randomBytes } from 'node:crypto';
import { type AwsClients, connectionFromEnv, createClients } from '../../lib/aws/clients';
import type { AwsConnection } from '../../lib/aws/config';
import { isRetriable } from '../../lib/aws/request/errors';

/** Holds the connection as JSON, set by the global setup. */
export const TEST_STACK_ENV = 'SLUICE_TEST_STACK';

let connection: AwsConnection | undefined;
let clients: AwsClients | undefined;

/** The connection of this test run (the same for every call in a test file). */
export function testConnection(): AwsConnection {
  if (!connection) {
    const published = process.env[TEST_STACK_ENV];
    const fromEnv = published ? (JSON.parse(published) as AwsConnection) : connectionFromEnv(process.env);
    if (!fromEnv) {
      throw new Error(
        `no AWS endpoint for tests: run the tests through Jest (its global setup starts the local stack and sets ${TEST_STACK_ENV}), or set AWS_ENDPOINT_URL (LocalStack)`,
      );
    }
    connection = fromEnv;
  }
  return connection;
}

/**
 * SDK clients on the test connection, shared within a test file (built on first use). Their S3
 * client sends a request again (up to 3 attempts) when the connection fails (s3rver, in the Jest
 * process, now and then resets a kept-alive socket: `read ECONNRESET`): the clients make one
 * attempt by design (the engine's request layer retries), and a test's own PUT of its input
 * failing that way fails the test for nothing it checks (it failed CI once). An error S3 answers
 * (NoSuchKey, 412, a 500) is never sent again.
 */
export function testClients(): AwsClients {
  if (clients === undefined) {
    clients = createClients(testConnection());
    resendOnConnectionErrors(clients.s3);
  }
  return clients;
}

/** Has `client` send a request again, up to 3 attempts, when its connection fails before S3 answers. */
export function resendOnConnectionErrors(client: AwsClients['s3']): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await next(args);
        } catch (e) {
          const answered = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode !== undefined;
          if (attempt >= 3 || answered || !isRetriable('s3', e)) throw e;
        }
      }
    },
    { step: 'initialize', name: 'testResendOnConnectionErrors' },
  );
}

let counter = 0;

/**
 * A name no other test (in any worker, in any run against a long-lived LocalStack) uses: valid
 * as an S3 bucket, DynamoDB table and Kinesis stream name (lowercase letters, digits and
 * hyphens, 3 to 63 characters, starting and ending with a letter or digit).
 */
export function uniqueName(prefix: string): string {
  const suffix = `${randomBytes(4).toString('hex')}${(counter++).toString(36)}`;
  const head = prefix
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .slice(0, 63 - 1 - suffix.length)
    .replace(/^-+|-+$/g, '');
  return head ? `${head}-${suffix}` : suffix;
}

/**
 * A start for a test's clock: a whole minute of the real time. Items get a TTL from the store's
 * clock (tombstones, sink markers), and DynamoDB Local deletes items whose TTL has passed at
 * moments of its own: a clock set in the past would let it delete them in the middle of a test.
 */
export function clockStart(): number {
  return Math.floor(Date.now() / 60_000) * 60_000;
}

/** The lease duration a pipeline runs with unless told otherwise (PipelineConfig.leaseDurationMs). */
const DEFAULT_LEASE_MS = 15 * 60_000;

/**
 * A clock for runs that crash. A crashed run keeps its lease, as a killed Lambda does, so the next
 * run finds it held until it expires: `waitOutLease()` moves this clock past the expiry (real
 * time plus every expiry waited out; never backwards, and never into the past of DynamoDB Local's
 * TTL). Pass `clock` to every run of the query (buildExecutor's extras.clock).
 */
export function leaseClock(leaseMs = DEFAULT_LEASE_MS) {
  let passedMs = 0;
  return {
    clock: { now: () => Date.now() + passedMs },
    waitOutLease(): void {
      passedMs += leaseMs + 1000;
    },
  };
}

/**
 * What DynamoDB TTL does at a moment of its own: deletes every item of `table` whose `ttl`
 * (epoch seconds) is before `atMs` (optionally only items whose pk starts with `pkPrefix`).
 * Returns how many went.
 */
export async function expireTtlItems(table: string, atMs: number, pkPrefix = ''): Promise<number> {
  const { ScanCommand, DeleteItemCommand } = await import('@aws-sdk/client-dynamodb');
  const { dynamodb } = testClients();
  let deleted = 0;
  let start: Record<string, import('@aws-sdk/client-dynamodb').AttributeValue> | undefined;
  do {
    const res = await dynamodb.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start, ConsistentRead: true }));
    for (const item of res.Items ?? []) {
      if (item.pk.S!.startsWith(pkPrefix) && item.ttl?.N !== undefined && Number(item.ttl.N) < atMs / 1000) {
        await dynamodb.send(new DeleteItemCommand({ TableName: table, Key: { pk: item.pk, sk: item.sk } }));
        deleted++;
      }
    }
    start = res.LastEvaluatedKey;
  } while (start);
  return deleted;
}
