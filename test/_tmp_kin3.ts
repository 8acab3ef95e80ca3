import { spawn } from 'node:child_process';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { KinesisClient, ListStreamsCommand } from '@aws-sdk/client-kinesis';
const main = require.resolve('kinesis-local/main.js');
async function once(args: string[]) {
  const t0 = Date.now();
  const child = spawn(process.execPath, args, { env: { ...process.env, KINESIS_MOCK_PLAIN_PORT: '14568', KINESIS_MOCK_TLS_PORT: '14567', KINESIS_MOCK_CERT_PATH: require.resolve('kinesis-local/server.json'), LOG_LEVEL: 'ERROR' }, stdio: ['ignore', 'ignore', 'inherit'] });
  const k = new KinesisClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:14568', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1, requestHandler: new NodeHttpHandler() });
  for (;;) { try { await k.send(new ListStreamsCommand({})); break; } catch { await new Promise((r) => setTimeout(r, 20)); } }
  const ms = Date.now() - t0; await new Promise((r) => setTimeout(r, 2000)); k.destroy(); child.kill('SIGKILL'); await new Promise((r) => child.once('exit', r)); return ms;
}
(async () => {
  for (const args of [[main], ['/tmp/exp/runner.js', main, '/tmp/exp/kin.cache'], [main], ['/tmp/exp/runner.js', main, '/tmp/exp/kin.cache']]) {
    const r = []; for (let i = 0; i < 3; i++) r.push(await once(args));
    console.log(args[0], r.join(' '));
  }
})();
