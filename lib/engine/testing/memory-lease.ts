/** The Lease twin (the twins' common rules: twins.ts). */
import { LeaseLostError } from '../errors';
import type { Lease, LeaseHandle } from '../ports';

export class InMemoryLease implements Lease {
  private holder: LeaseHandle | null = null;
  private token = 0;
  constructor(private readonly now: () => number = Date.now) {}
  async acquire(owner: string, durationMs: number) {
    if (this.holder && this.holder.expiresAtMs >= this.now() && this.holder.owner !== owner) return null;
    this.holder = { owner, token: ++this.token, expiresAtMs: this.now() + durationMs };
    return this.holder;
  }
  async renew(h: LeaseHandle, durationMs: number) {
    if (!this.holder || this.holder.owner !== h.owner || this.holder.token !== h.token) {
      throw new LeaseLostError(`lease of ${h.owner} (token ${h.token}) was lost: another run took over; stop without further effects`);
    }
    this.holder = { ...h, expiresAtMs: this.now() + durationMs };
    return this.holder;
  }
  async release(h: LeaseHandle) {
    if (this.holder && this.holder.owner === h.owner && this.holder.token === h.token) this.holder = null;
  }
}
