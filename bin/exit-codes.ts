/** The CLI's exit codes (bin/cli.ts documents them; a module of its own so that help loads nothing else). */
export const EXIT_CODES = {
  ok: 0,
  failed: 1,
  usage: 2,
  leaseHeld: 3,
} as const;
