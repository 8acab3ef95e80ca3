/**
 * Runs the CLI's main() in this process against the test stack, as a user's shell would: the
 * connection goes in through the environment variables the CLI reads (AWS_ENDPOINT_URL_*,
 * credentials, region), restored afterwards; stdout and stderr are captured. And what the tests
 * that run it share: the query modules, the input folders and the resources they run on.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../bin/cli';
import { type AwsClients, connectionFromEnv, createClients } from '../../lib/aws/clients';
import type { AwsConnection } from '../../lib/aws/config';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { testConnection, uniqueName } from './stack';

const KEYS = [
  'AWS_ENDPOINT_URL',
  'AWS_ENDPOINT_URL_S3',
  'AWS_ENDPOINT_URL_DYNAMODB',
  'AWS_ENDPOINT_URL_KINESIS',
  'AWS_ENDPOINT_URL_SQS',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_REGION',
] as const;

/** The environment that makes the CLI reach `conn`; `service` picks the credentials (s3rver has its own). */
export function cliEnv(conn: AwsConnection, service: 's3' | 'kinesis' | 'dynamodb'): Record<(typeof KEYS)[number], string | undefined> {
  const creds = service === 's3' ? (conn.s3Credentials ?? conn.credentials) : conn.credentials;
  return {
    AWS_ENDPOINT_URL: undefined,
    AWS_ENDPOINT_URL_S3: conn.endpoints?.s3,
    AWS_ENDPOINT_URL_DYNAMODB: conn.endpoints?.dynamodb,
    AWS_ENDPOINT_URL_KINESIS: conn.endpoints?.kinesis,
    AWS_ENDPOINT_URL_SQS: conn.endpoints?.sqs,
    AWS_ACCESS_KEY_ID: creds?.accessKeyId,
    AWS_SECRET_ACCESS_KEY: creds?.secretAccessKey,
    AWS_REGION: conn.region,
  };
}

export async function runCli(args: string[], env: Partial<Record<string, string | undefined>>): Promise<{ code: number; stdout: string; stderr: string }> {
  const saved = new Map(Object.keys(env).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  let stdout = '';
  let stderr = '';
  const out = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  const err = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  const log = jest.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void (stdout += `${a.join(' ')}\n`));
  const error = jest.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void (stderr += `${a.join(' ')}\n`));
  try {
    const code = await main(args);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
    log.mockRestore();
    error.mockRestore();
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** SDK clients on the test stack as the CLI sees it (DynamoDB Local keeps one namespace per access key). */
export function cliClients(): AwsClients {
  return createClients(connectionFromEnv(cliEnv(testConnection(), 's3'))!);
}

/**
 * A new bucket and state table (`<prefix>-…`, `<prefix>-state-…`) on the test stack as the CLI
 * sees it; `also` makes more with the same clients.
 */
export async function cliResources(prefix: string, also?: (clients: AwsClients) => Promise<unknown>): Promise<{ bucket: string; table: string }> {
  const bucket = uniqueName(prefix);
  const table = uniqueName(`${prefix}-state`);
  const clients = cliClients();
  try {
    await Promise.all([ensureBucket(clients.s3, bucket), ensureStateTable(clients.dynamodb, table), also?.(clients)]);
  } finally {
    clients.destroy();
  }
  return { bucket, table };
}

const QUERY_API = join(__dirname, '..', '..', 'lib', 'engine', 'query');

/**
 * Writes a query module for `sluice run` at `path`: `body` has `readStream` and the query
 * functions `window`, `sum` and `count` in scope, and sets `exports.default` to a plan.
 */
export function writeQuery(path: string, body: string): string {
  writeFileSync(
    path,
    `const { readStream } = require(${JSON.stringify(join(QUERY_API, 'reader.ts'))});
const { window, sum, count, max } = require(${JSON.stringify(join(QUERY_API, 'functions.ts'))});
${body}`,
  );
  return path;
}

/**
 * A temporary folder for the test file's queries and inputs, made before its tests and removed
 * after them (call it at the top of the file).
 */
export function tempFolder(prefix: string): { path(name: string): string; folder(name: string, files: Record<string, readonly object[]>): string } {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return {
    path: (name) => join(dir, name),
    /** Writes `files` (name → rows, a JSON line each) into a new folder and returns its path. */
    folder(name, files) {
      const path = join(dir, name);
      mkdirSync(path, { recursive: true });
      for (const [file, rows] of Object.entries(files)) writeFileSync(join(path, file), rows.map((r) => JSON.stringify(r)).join('\n'));
      return path;
    },
  };
}

/** What `sluice run` is given besides the query; a list repeats the flag. */
export interface RunArgs {
  readonly source: string | readonly string[];
  readonly input?: string | readonly string[];
  readonly checkpoint?: string;
  readonly sink?: string;
  readonly stateTable?: string;
  /** --json */
  readonly json?: boolean;
  /** Flags after the others. */
  readonly more?: readonly string[];
}

/** The command line of `sluice run <query>` with these flags. */
export function runArgs(query: string, a: RunArgs): string[] {
  const repeat = (flag: string, v: string | readonly string[] | undefined) =>
    v === undefined ? [] : (typeof v === 'string' ? [v] : v).flatMap((x) => [flag, x]);
  return [
    'run',
    query,
    ...repeat('--source', a.source),
    ...repeat('--input', a.input),
    ...repeat('--checkpoint', a.checkpoint),
    ...repeat('--sink', a.sink),
    ...repeat('--state-table', a.stateTable),
    ...(a.json ? ['--json'] : []),
    ...(a.more ?? []),
  ];
}
