/**
 * The in-process emulators (s3rver, the local SQS) leave an idle keep-alive connection open for
 * the client to reuse: Node's server would close it after 5 s, and a client reusing it in that
 * instant got `read ECONNRESET` (CI met it once, on a test's own PutObject to s3rver).
 */
import { Agent, request } from 'node:http';
import { testConnection } from '../helpers/stack';

jest.setTimeout(30_000);

interface Answer {
  readonly reusedSocket: boolean;
  readonly keepAliveHeader: string | undefined;
  readonly connection: string | undefined;
}

/** A GET of `url` over `agent`, read to its end. */
function get(agent: Agent, url: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, method: 'GET' }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({ reusedSocket: req.reusedSocket, keepAliveHeader: res.headers['keep-alive']?.toString(), connection: res.headers.connection?.toString() }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(['s3', 'sqs'] as const)('the local stack’s %s', (service) => {
  it('keeps an idle keep-alive connection past Node’s 5-second server timeout, and announces no timeout', async () => {
    const endpoint = testConnection().endpoints?.[service];
    if (!endpoint) throw new Error(`this test needs the local stack's ${service} endpoint`);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await get(agent, `${endpoint}/`);
      expect(first.connection).toBe('keep-alive');
      // Node's agent closes a socket a second before a server's announced timeout
      expect(first.keepAliveHeader).toBeUndefined();
      await sleep(5_500);
      const second = await get(agent, `${endpoint}/`);
      expect(second.reusedSocket).toBe(true);
    } finally {
      agent.destroy();
    }
  });
});
