/**
 * The conformance runner writes a case's landing files through the engine's S3 request layer, so a
 * connection the endpoint drops (a keep-alive socket reset as it is reused, as a loaded CI machine
 * met once with s3rver) is sent again instead of failing the case. A TCP proxy in front of the
 * test stack's S3 resets the first connections that carry a landing file's PUT.
 */
import { readFileSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { parseCase } from '../../lib/conformance/case';
import { compareCase } from '../../lib/conformance/results';
import { prepareConformance, runCase } from '../../lib/conformance/runner';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createClients } from '../../lib/aws/clients';
import { resendOnConnectionErrors, testConnection, uniqueName } from '../helpers/stack';

jest.setTimeout(120_000);

const bucket = uniqueName('resets');
const table = uniqueName('resets-state');
const CASE = 'sluice-sliding-window-update.json';

/** Forwards to `target`; a client connection whose data is a PUT of a landing file is reset, `resets` times in all. */
async function resettingProxy(target: URL, resets: number): Promise<{ url: string; resetCount: () => number; close: () => Promise<void> }> {
  let done = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
    sockets.add(upstream);
    client.on('data', (chunk: Buffer) => {
      const head = chunk.subarray(0, 512).toString('latin1');
      if (done < resets && head.startsWith('PUT ') && head.split('\r\n', 1)[0].includes('/landing/')) {
        done++;
        upstream.destroy();
        client.resetAndDestroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', () => res()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    resetCount: () => done,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((res) => server.close(() => res()));
    },
  };
}

beforeAll(async () => {
  await prepareConformance(testConnection(), bucket, table);
});

describe('when the S3 endpoint resets connections that carry a landing file', () => {
  it('the runner sends the file again and the case still matches its expectations', async () => {
    const conn = testConnection();
    const s3 = conn.endpoints?.s3;
    if (!s3) throw new Error('this test needs the local stack (an S3 endpoint to put the proxy in front of)');
    const proxy = await resettingProxy(new URL(s3), 2);
    try {
      const c = parseCase(readFileSync(join(__dirname, '../conformance/cases', CASE), 'utf8'), CASE);
      const result = await runCase(c, { connection: { ...conn, endpoints: { ...conn.endpoints, s3: proxy.url } }, bucket, stateTable: table });
      expect(proxy.resetCount()).toBe(2);
      expect(compareCase(c, result)).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});

describe("when the S3 endpoint resets a test's own PUT", () => {
  it('testClients() sends it again (a plain client of one attempt fails)', async () => {
    const conn = testConnection();
    const proxy = await resettingProxy(new URL(conn.endpoints!.s3!), 3);
    const proxied = { ...conn, endpoints: { ...conn.endpoints, s3: proxy.url } };
    const plain = createClients(proxied);
    const resending = createClients(proxied);
    resendOnConnectionErrors(resending.s3);
    try {
      const put = (c: typeof plain, key: string) => c.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'x' }));
      await expect(put(plain, 'landing/plain.json')).rejects.toThrow();
      expect(proxy.resetCount()).toBe(1);
      await put(resending, 'landing/resent.json');
      expect(proxy.resetCount()).toBe(3);
      const got = await resending.s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'landing/resent.json' }));
      expect(await got.Body!.transformToString()).toBe('x');
    } finally {
      plain.destroy();
      resending.destroy();
      await proxy.close();
    }
  });
});
