/**
 * A query's namespace in the state table, and the partition keys it owns there. Kept apart from
 * the adapters so that the AvailableNowPipeline construct (lib/infra) computes, at synth, the same
 * namespace the Lambda uses at run time, and scopes the role's DynamoDB actions on the state table
 * to it (an IAM `dynamodb:LeadingKeys` condition):
 *
 *     namespace   <queryName>@<checkpoint bucket>/<checkpoint prefix>
 *     lease       lease#<namespace>          / lease      (lib/aws/dynamodb/lease.ts)
 *     state       <namespace>#<op>#p<P>...   / ...        (lib/aws/dynamodb/state-layout.ts: head,
 *                                                           manifest, pages, the legacy directory)
 *
 * Every item a pipeline reads or writes in the state table has one of these partition keys; the
 * DynamoDB sink's items and chunk markers live in the sink table, and its transaction reaches the
 * state table only through the lease's ConditionCheck. Nothing scans the state table.
 */

/** The lease item's partition key starts with this, then the lease key (the namespace). */
export const LEASE_PK_PREFIX = 'lease#';

/** The lease key and state namespace of a query: its name and its checkpoint location. */
export function stateNamespace(queryName: string, checkpoint: { readonly bucket: string; readonly prefix: string }): string {
  return `${queryName}@${checkpoint.bucket}/${checkpoint.prefix}`;
}

/**
 * The partition keys of the namespace's items, as IAM StringLike patterns: the lease's exactly,
 * and every state key (which continues the namespace with '#', a character a namespace never
 * holds, so `q@b/checkpoints/a` does not reach `q@b/checkpoints/ab`).
 */
export function stateKeyPatterns(namespace: string): [lease: string, state: string] {
  return [`${LEASE_PK_PREFIX}${namespace}`, `${namespace}#*`];
}
