/**
 * One seed for the in-memory twins' shuffled orders in every worker (lib/engine/testing/twins.ts),
 * set in Jest's main process before any test file (workers inherit the environment); a seed
 * given in SLUICE_TWIN_SEED is kept. test/setup/twin-seed-reporter.js prints it when a test
 * fails, to reproduce the run.
 *
 * The unit project's global setup: it starts nothing else (no emulator, no Java).
 */
export function setTwinSeed(): void {
  if (!process.env.SLUICE_TWIN_SEED) process.env.SLUICE_TWIN_SEED = String(Math.floor(Math.random() * 2 ** 32));
}

export default async function globalSetup(): Promise<void> {
  setTwinSeed();
}
