/**
 * The AWS SDK commands a Lambda bundle sends, as IAM actions: the project's own files esbuild puts
 * in the bundle, and in each, every `new XCommand(` whose X is imported from an AWS SDK client.
 * Infra tests compare them with what the construct grants, so a new call cannot ship ungranted.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildSync } from 'esbuild';
import { LAMBDA_BUNDLING } from '../../lib/infra/lambda-bundling';

const ROOT = path.resolve(__dirname, '..', '..');

/** SDK operations whose IAM action has another name. */
const SPECIAL: Record<string, string> = {
  's3:ListObjectsV2': 's3:ListBucket',
  's3:ListObjects': 's3:ListBucket',
  's3:DeleteObjects': 's3:DeleteObject',
  's3:HeadObject': 's3:GetObject',
  's3:HeadBucket': 's3:ListBucket',
  // the parts of a multipart upload are authorized as the PutObject they make
  's3:CreateMultipartUpload': 's3:PutObject',
  's3:UploadPart': 's3:PutObject',
  's3:CompleteMultipartUpload': 's3:PutObject',
  // a copy is authorized as a GET of the source (granted on the landing prefix) and a PUT of the copy
  's3:CopyObject': 's3:PutObject',
  // TransactWriteItems is evaluated per entry; the fence is a ConditionCheck on the lease item.
  'dynamodb:TransactWriteItems': 'dynamodb:ConditionCheckItem',
  // SQS's batch requests are authorized as the single actions they batch.
  'sqs:DeleteMessageBatch': 'sqs:DeleteMessage',
  'sqs:ChangeMessageVisibilityBatch': 'sqs:ChangeMessageVisibility',
};
const LIB_DYNAMODB: Record<string, string> = {
  Get: 'GetItem',
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  BatchGet: 'BatchGetItem',
  BatchWrite: 'BatchWriteItem',
  TransactWrite: 'TransactWriteItems',
  Query: 'Query',
  Scan: 'Scan',
};
/** SDK client packages whose IAM service prefix differs. */
const IAM_SERVICE: Record<string, string> = { sfn: 'states' };

/** The project's own files esbuild puts in the bundle of `entry`. */
export function bundledFiles(entry: string): string[] {
  const out = buildSync({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    target: LAMBDA_BUNDLING.target,
    external: [...LAMBDA_BUNDLING.externalModules],
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return Object.keys(out.metafile!.inputs)
    .filter((f) => !f.includes('node_modules'))
    .map((f) => path.resolve(ROOT, f));
}

/** `<iam service>:<Action>` for each `new XCommand(` in `file` whose X is imported from an AWS SDK client. */
export function commandsSent(file: string): string[] {
  const src = fs.readFileSync(file, 'utf8');
  const importedFrom = new Map<string, string>();
  for (const m of src.matchAll(/import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*'@aws-sdk\/(client|lib)-([a-z0-9-]+)'/g)) {
    for (const name of m[1].split(',').map(
      (n) =>
        n
          .trim()
          .replace(/^type\s+/, '')
          .split(/\s+as\s+/)
          .pop()!,
    )) {
      importedFrom.set(name, m[2] === 'lib' ? `lib-${m[3]}` : m[3]);
    }
  }
  const sent: string[] = [];
  for (const m of src.matchAll(/new\s+([A-Za-z0-9]+)Command\s*\(/g)) {
    const pkg = importedFrom.get(`${m[1]}Command`);
    if (!pkg) continue;
    const action = pkg === 'lib-dynamodb' ? `dynamodb:${LIB_DYNAMODB[m[1]] ?? m[1]}` : `${IAM_SERVICE[pkg] ?? pkg}:${m[1]}`;
    sent.push(SPECIAL[action] ?? action);
  }
  return sent;
}
