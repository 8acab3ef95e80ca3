/**
 * Prints the seed of the in-memory twins' shuffled orders (set by global-setup.ts for the whole
 * run) after a run with failures, so that `SLUICE_TWIN_SEED=<seed> npx jest <file>` reproduces
 * the order the failing test saw.
 */
class TwinSeedReporter {
  onRunComplete(_contexts, results) {
    if (results.numFailedTests > 0 || results.numFailedTestSuites > 0) {
      process.stderr.write(
        `\nin-memory twins ran with SLUICE_TWIN_SEED=${process.env.SLUICE_TWIN_SEED}: set it to reproduce the order of their entries (and of the local SQS's deliveries)\n`,
      );
    }
  }
}
module.exports = TwinSeedReporter;
