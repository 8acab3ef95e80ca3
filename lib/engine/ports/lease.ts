export interface LeaseHandle {
  readonly owner: string;
  /** Monotonic fencing token: larger for every new holder. */
  readonly token: number;
  readonly expiresAtMs: number;
}

export interface Lease {
  /**
   * Take the lease for `durationMs`, or return null when another live run holds it. The same
   * owner may take it again while it holds it (a retry of the run: a plan task that failed after
   * taking it), with a new token, so that what the failed attempt may still write is fenced out.
   */
  acquire(owner: string, durationMs: number): Promise<LeaseHandle | null>;
  /** Extend a held lease; throws LeaseLostError when it is no longer ours. */
  renew(handle: LeaseHandle, durationMs: number): Promise<LeaseHandle>;
  release(handle: LeaseHandle): Promise<void>;
}
