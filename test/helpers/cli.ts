/**
 * Runs the CLI's main() in this process against the test stack, as a user's shell would: the
 * connection goes in through the environment variables the CLI reads (AWS_ENDPOINT_URL_*,
 * credentials, region), restored afterwards; stdout and stderr are captured.
 */
import { main } from '../../bin/cli';
import type { AwsConnection } from '../../lib/aws/config';

const KEYS = [
  'AWS_ENDPOINT_URL',
  'AWS_ENDPOINT_URL_S3',
  'AWS_ENDPOINT_URL_DYNAMODB',
  'AWS_ENDPOINT_URL_KINESIS',
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
