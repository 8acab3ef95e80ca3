/**
 * Reading a synthesized template in infra tests: IAM statements flattened to short strings, so
 * that a test can compare them to the list it expects.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { InvalidOptionError } from '../../lib/engine/errors';

export interface FlatStatement {
  readonly actions: string[];
  readonly resources: string[];
  readonly condition?: unknown;
}

/** Intrinsics as short strings: {Fn::GetAtt:[X,Arn]} -> "X.Arn", {Ref:X} -> "X", joins concatenated. */
export function flat(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  if (v['Fn::GetAtt']) return (v['Fn::GetAtt'] as string[]).join('.');
  if (v.Ref) return String(v.Ref);
  if (v['Fn::Join']) {
    const [sep, parts] = v['Fn::Join'] as [string, unknown[]];
    return parts.map(flat).join(sep);
  }
  if (v['Fn::Select'] || v['Fn::Split']) return `{${JSON.stringify(v)}}`;
  return JSON.stringify(v);
}

const asList = <T>(x: T | T[] | undefined): T[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);

/** Every statement of every IAM policy in the template (inline role policies included). */
export function statements(template: Template): FlatStatement[] {
  return statementsOf(template, () => true);
}

/** The statements of the policies attached to the role with logical id `roleId` (its inline policies and the AWS::IAM::Policy resources naming it). */
export function roleStatements(template: Template, roleId: string): FlatStatement[] {
  return statementsOf(template, (roles) => roles.includes(roleId), roleId);
}

function statementsOf(template: Template, attachedTo: (roles: string[]) => boolean, inlineOf?: string): FlatStatement[] {
  const docs: Array<{ Statement: unknown[] }> = [];
  for (const p of Object.values(template.findResources('AWS::IAM::Policy'))) {
    const roles = asList(p.Properties.Roles as unknown[]).map(flat);
    if (attachedTo(roles)) docs.push(p.Properties.PolicyDocument);
  }
  for (const [id, r] of Object.entries(template.findResources('AWS::IAM::Role'))) {
    if (inlineOf !== undefined && id !== inlineOf) continue;
    for (const p of asList(r.Properties.Policies)) docs.push((p as { PolicyDocument: { Statement: unknown[] } }).PolicyDocument);
  }
  return docs.flatMap((d) =>
    (d.Statement as Array<Record<string, unknown>>).map((s) => ({
      actions: asList(s.Action as string | string[])
        .slice()
        .sort(),
      resources: asList(s.Resource).map(flat).sort(),
      ...(s.Condition ? { condition: flatCondition(s.Condition as Record<string, Record<string, unknown>>) } : {}),
    })),
  );
}

/** A statement's Condition with each value flattened (a bucket name's Ref inside a LeadingKeys pattern, say). */
function flatCondition(condition: Record<string, Record<string, unknown>>): Record<string, Record<string, unknown>> {
  const values = (v: unknown) => (Array.isArray(v) ? v.map(flat) : flat(v));
  return Object.fromEntries(Object.entries(condition).map(([op, keys]) => [op, Object.fromEntries(Object.entries(keys).map(([k, v]) => [k, values(v)]))]));
}

/**
 * The message of the InvalidOptionError that `build` throws at synth time (a construct refusing
 * its props), or a failure when it builds: each infra test file passes its own synth.
 */
export function rejectionOf(build: () => unknown): string {
  try {
    build();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidOptionError);
    return (e as Error).message;
  }
  throw new Error('expected the pipeline to be rejected at synth time');
}
