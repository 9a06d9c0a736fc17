// jest for `pnpm faults` and `pnpm soak` (cli.js): the integration project's transform and
// module mapping, without its shared broker (the fault stack starts its own) and matching only
// the *.cli.ts entries, which `bash scripts/test.sh` never runs.
const path = require('node:path');
const { projects } = require('../../jest.config.js');

const integration = projects.find((p) => p.displayName === 'integration');

module.exports = {
  rootDir: path.resolve(__dirname, '..', '..'),
  displayName: 'faults-cli',
  transform: integration.transform,
  moduleNameMapper: integration.moduleNameMapper,
  moduleFileExtensions: integration.moduleFileExtensions,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/faults/*.cli.ts'],
};
