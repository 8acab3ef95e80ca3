/**
 * Jest: TypeScript through @swc/jest (no type checking here; `npm run typecheck` does that).
 * The global setup starts the embedded local AWS stack once per run (or uses AWS_ENDPOINT_URL)
 * and test files reach it through test/helpers/stack.ts.
 */
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  transform: {
    '^.+\\.(t|j)sx?$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'commonjs' },
        sourceMaps: 'inline',
      },
    ],
  },
  // hyparquet-writer (the Parquet sink's writer) and hyparquet ship only ES modules: transform them
  // to CommonJS like the project's own files (esbuild does the same for the Lambda bundle).
  transformIgnorePatterns: ['/node_modules/(?!(hyparquet|hyparquet-writer)/)'],
  // Also transformed by the transform above (Jest transforms global hooks with the project's).
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  testTimeout: 60000,
  // Prints the in-memory twins' order seed (SLUICE_TWIN_SEED) when a test failed.
  reporters: ['default', '<rootDir>/test/setup/twin-seed-reporter.js'],
};
