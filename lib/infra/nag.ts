/**
 * Acknowledgments of cdk-nag's AwsSolutions findings (Validations.of(...).acknowledge, cdk-nag 3)
 * that are deliberate, each with its reason. test/infra/nag.test.ts runs the AwsSolutions pack on
 * every stack variant the tests build, so a new finding fails a test rather than being hidden.
 *
 * IAM5 (wildcard permissions) is acknowledged per finding, never for the whole rule: a finding's
 * id names the resource (`AwsSolutions-IAM5[Resource::<Bucket.Arn>/checkpoints/orders/*]`), so a
 * later `Resource: "*"` still fails.
 */
import { Stack, Validations, type aws_iam as iam } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** A resolved CloudFormation value as cdk-nag writes it in a finding id (its flattenCfnReference). */
function rendered(node: unknown): string {
  if (node === undefined) return '';
  if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
  const v = node as Record<string, unknown>;
  if (v['Fn::Join']) {
    const [sep, items] = v['Fn::Join'] as [string, unknown[]];
    return items.map(rendered).join(sep);
  }
  if (v['Fn::Sub']) return rendered(v['Fn::Sub']);
  if (v['Fn::GetAtt']) {
    const [resource, attribute] = v['Fn::GetAtt'] as [unknown, unknown];
    return `<${rendered(resource)}.${rendered(attribute)}>`;
  }
  if (v['Fn::ImportValue']) return rendered(v['Fn::ImportValue']);
  if (v.Ref) return `<${rendered(v.Ref)}>`;
  return JSON.stringify(node);
}

/**
 * Acknowledges, on `owner` (the role or policy the statements are attached to), IAM5 on each
 * wildcard resource of the Allow statements now in `policy` that `accept` says is deliberate.
 */
export function acknowledgeWildcards(owner: IConstruct, policy: iam.PolicyDocument | undefined, accept: (resource: string) => boolean, reason: string): void {
  if (!policy) return;
  const doc = Stack.of(owner).resolve(policy) as { Statement?: Array<{ Effect?: string; Resource?: unknown }> } | undefined;
  for (const st of doc?.Statement ?? []) {
    if (st.Effect !== 'Allow') continue;
    for (const resource of ([] as unknown[]).concat(st.Resource ?? []).map(rendered)) {
      if (resource.includes('*') && accept(resource)) Validations.of(owner).acknowledge({ id: `AwsSolutions-IAM5[Resource::${resource}]`, reason });
    }
  }
}

/**
 * An S3 object ARN with one wildcard, at its end, after a non-empty key prefix
 * (`arn:...:s3:::bucket/prefix/*`, `<Bucket.Arn>/prefix/*`, or a static table's `.../key*`).
 */
export const isPrefixScopedObjects = (resource: string): boolean =>
  resource.indexOf('*') === resource.length - 1 && /(:s3:::[^/]+|\.Arn>)\/[^*]+\*$/.test(resource) && !resource.includes(':dynamodb:');

/** The IAM5 acknowledgment of the prefix-scoped S3 object grants on a role (its default policy). */
export function acknowledgePrefixScopedObjects(role: iam.IRole): void {
  const policy = role.node.tryFindChild('DefaultPolicy') as iam.Policy | undefined;
  acknowledgeWildcards(
    role,
    policy?.document,
    isPrefixScopedObjects,
    "objects under one of the pipeline's own key prefixes: a wildcard after a fixed prefix is the narrowest grant S3 object keys allow",
  );
}

/** AwsSolutions-L1 (not the latest Node.js runtime) on a function of the pipeline. */
export function acknowledgeRuntime(fns: IConstruct | readonly IConstruct[]): void {
  acknowledge(
    fns,
    ['AwsSolutions-L1'],
    'pinned to nodejs22.x, the runtime the bundle targets (LAMBDA_BUNDLING.target) and the tests run against; moving it is a release decision, not a default to follow',
  );
}

/** Acknowledges `ids` on `scope` with one reason. */
export function acknowledge(scope: IConstruct | readonly IConstruct[], ids: readonly string[], reason: string): void {
  for (const s of ([] as IConstruct[]).concat(scope)) for (const id of ids) Validations.of(s).acknowledge({ id, reason });
}
