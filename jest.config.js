/**
 * Jest: TypeScript through @swc/jest (no type checking here; `npm run typecheck` does that).
 *
 * Two projects (`npm run test:unit`, `npm run test:integration`; `npm test` runs both):
 * - unit: the engine on in-memory ports, the CLI's command lines, the CDK assertions. Its global
 *   setup only sets the in-memory twins' seed: no emulator, no Java.
 * - integration: the adapters, the conformance cases and the packed package on the embedded local
 *   AWS stack. Its global setup starts the stack once per run (or uses AWS_ENDPOINT_URL) and its
 *   test files reach it through test/helpers/stack.ts. Jest runs a project's global setup only
 *   when the run includes a test file of that project, so `--selectProjects unit` starts nothing.
 */
const common = {
  testEnvironment: 'node',
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
  // A user's module that imports the package by name (a FORMAT-4 case's processor module) gets
  // this package's entry points, as lib/local/package-name.ts resolves them outside Jest.
  moduleNameMapper: { '^sluice$': '<rootDir>/lib/api/query.ts', '^sluice/(query|lambda|cdk|local)$': '<rootDir>/lib/api/$1.ts' },
};

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    {
      ...common,
      displayName: 'unit',
      roots: ['<rootDir>/test/unit', '<rootDir>/test/infra'],
      // Also transformed by the transform above (Jest transforms global hooks with the project's).
      globalSetup: '<rootDir>/test/setup/twin-seed.ts',
    },
    {
      ...common,
      displayName: 'integration',
      roots: ['<rootDir>/test/integration', '<rootDir>/test/conformance', '<rootDir>/test/package'],
      globalSetup: '<rootDir>/test/setup/global-setup.ts',
      globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
    },
  ],
  testTimeout: 60000,
  // Prints the in-memory twins' order seed (SLUICE_TWIN_SEED) when a test failed.
  reporters: ['default', '<rootDir>/test/setup/twin-seed-reporter.js'],
};
