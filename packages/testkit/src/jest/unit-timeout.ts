// jest reads `testTimeout` from the top-level config only: in the run of every project at once
// (scripts/test.sh) the unit project's 30 s did not apply, and hooks got 5 s, which a loaded
// 2-core machine missed (CI, load 55). Property tests are CPU-bound; a hang still fails.
jest.setTimeout(30_000);
