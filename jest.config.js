// Two projects so either can run alone: `unit` (pure logic, no containers) and
// `integration` (a real Kafka broker started once by Testcontainers in globalSetup).
const transform = { '^.+\\.tsx?$': ['@swc/jest', { jsc: { target: 'es2022' } }] };
// Tests import workspace packages from their TypeScript sources, no build needed (a package's
// `testing` entry point, as its package.json `exports` names it, from src/testing/; a service's
// `internal` one from src/internal.ts). The services come first: the packages' pattern matches them too.
const moduleNameMapper = {
  '^@state-relay/(processor|scanner)$': '<rootDir>/services/$1/src/index.ts',
  '^@state-relay/(processor|scanner)/internal$': '<rootDir>/services/$1/src/internal.ts',
  '^@state-relay/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts',
  '^@state-relay/([a-z-]+)/testing$': '<rootDir>/packages/$1/src/testing/index.ts',
};
const common = { transform, moduleNameMapper, testEnvironment: 'node', moduleFileExtensions: ['ts', 'js', 'json'] };

module.exports = {
  projects: [
    {
      ...common,
      displayName: 'unit',
      // Property tests are CPU-bound: jest's 5 s default is a wall-clock bound that a loaded
      // 2-core machine can miss (30 s, set in the file below: a project's testTimeout is not read).
      setupFilesAfterEnv: ['<rootDir>/packages/testkit/src/jest/unit-timeout.ts'],
      testMatch: ['<rootDir>/{packages,services}/*/test/**/*.test.ts', '<rootDir>/test/repo/*.test.ts'],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/{packages,services}/*/test/**/*.itest.ts', '<rootDir>/test/**/*.itest.ts'],
      globalSetup: '<rootDir>/packages/testkit/src/jest/global-setup.ts',
      globalTeardown: '<rootDir>/packages/testkit/src/jest/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/packages/testkit/src/jest/integration-timeout.ts'],
    },
  ],
};
