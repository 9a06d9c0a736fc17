// Architecture rules, checked in CI (`pnpm lint:deps`, one check of scripts/test.sh): no import
// cycles in production code, packages never import services, services never import each other,
// production code never imports test, bench or testkit code, the services' internal entry points
// serve only tests, the bench and tools, and a workspace package imports only what its
// package.json lists. Production code: packages/*/src and services/*/src.
const { readdirSync, readFileSync, existsSync } = require('node:fs');
const { join } = require('node:path');

const PRODUCTION = '^(packages|services)/[^/]+/src/';
const TEST_HELPERS = '^packages/testkit/|^packages/[^/]+/src/testing/';

/** Each workspace project (pnpm-workspace.yaml's `packages` globs): its folder, name and workspace dependencies. */
function workspaceProjects() {
  const yaml = readFileSync(join(__dirname, 'pnpm-workspace.yaml'), 'utf8');
  const globs = [...(/^packages:\n((?:[ \t]+- .+\n)+)/m.exec(yaml)?.[1] ?? '').matchAll(/- (\S+)/g)].map((m) => m[1]);
  const dirs = globs.flatMap((glob) =>
    glob.endsWith('/*')
      ? readdirSync(join(__dirname, glob.slice(0, -2)), { withFileTypes: true })
          .filter((d) => d.isDirectory())
          .map((d) => `${glob.slice(0, -2)}/${d.name}`)
      : [glob],
  );
  return dirs
    .filter((dir) => existsSync(join(__dirname, dir, 'package.json')))
    .map((dir) => {
      const manifest = JSON.parse(readFileSync(join(__dirname, dir, 'package.json'), 'utf8'));
      const deps = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies });
      return { dir, name: manifest.name, deps };
    });
}

/**
 * One rule per project: an import by name (`@state-relay/x`, resolved to x's sources through
 * tsconfig.depcruise.json's paths) must be of the project itself or listed in its package.json,
 * or in the root's (testkit, for every project's tests; production-not-to-testkit keeps it there).
 */
function declaredWorkspaceDependencies() {
  const projects = workspaceProjects();
  const dirOf = new Map(projects.map((p) => [p.name, p.dir]));
  const root = JSON.parse(readFileSync(join(__dirname, 'package.json'), 'utf8'));
  const rootDeps = Object.keys({ ...root.dependencies, ...root.devDependencies });
  return projects.map(({ dir, name, deps }) => {
    const allowed = [dir, ...[...deps, ...rootDeps].map((d) => dirOf.get(d)).filter(Boolean)];
    return {
      name: 'no-undeclared-workspace-package',
      severity: 'error',
      comment: `${name} imports a workspace package that ${dir}/package.json does not list: add it there`,
      from: { path: `^${dir}/` },
      to: { dependencyTypes: ['aliased-tsconfig-paths'], pathNot: `^(${allowed.join('|')})/` },
    };
  });
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Production code imports itself back through this dependency: break the cycle',
      from: { path: PRODUCTION },
      to: { circular: true },
    },
    {
      name: 'packages-not-to-services',
      severity: 'error',
      comment: 'A package never imports a service: services wire packages, not the other way round',
      from: { path: '^packages/' },
      to: { path: '^services/' },
    },
    {
      name: 'services-not-to-each-other',
      severity: 'error',
      comment: 'A service never imports another service: what both need belongs in a package',
      from: { path: '^services/([^/]+)/src/' },
      to: { path: '^services/', pathNot: '^services/$1/' },
    },
    {
      name: 'production-not-to-tests-or-bench',
      severity: 'error',
      comment: 'Production code never imports test or benchmark code',
      from: { path: PRODUCTION },
      to: { path: '^(bench|test)/|^[^/]+/[^/]+/test/' },
    },
    {
      name: 'production-not-to-testkit',
      severity: 'error',
      comment: 'Production code never imports the test helpers (testkit, a package\'s "testing" entry point)',
      from: { path: PRODUCTION, pathNot: TEST_HELPERS },
      to: { path: TEST_HELPERS },
    },
    {
      name: 'internal-only-from-tests-bench-tools',
      severity: 'error',
      comment:
        "A service's internal entry point (@state-relay/<service>/internal) is for tests, the bench and tools, not a stable API",
      from: { pathNot: '^(bench|test|tools)/|^services/[^/]+/test/' },
      to: { path: '^services/[^/]+/src/internal\\.ts$' },
    },
    {
      name: 'workspace-imports-to-sources',
      severity: 'error',
      comment: 'A workspace package resolved to its built output: add its entry point to tsconfig.depcruise.json',
      from: {},
      to: { path: '(^|/)node_modules/@state-relay/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'This import resolves to no file: a typo, or an npm package missing from package.json',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-non-package-json',
      severity: 'error',
      comment: 'This npm package is in no package.json between the importing file and the root: add it',
      from: {},
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'production-not-to-dev-dependencies',
      severity: 'error',
      comment: 'Production code imports a devDependency, which a deployment does not install',
      from: { path: PRODUCTION },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['npm', 'type-only'] },
    },
    ...declaredWorkspaceDependencies(),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // The build output is not cruised; an import that still resolves into it is an error (above).
    exclude: { path: '^(bench|(packages|services|tools)/[^/]+)/dist/' },
    // Symlinks kept: an npm package resolves to the importing project's node_modules, whose
    // package.json must list it; a workspace package tsconfig.depcruise.json misses shows as such.
    preserveSymlinks: true,
    // Type-only imports count: a cycle through types is still a cycle.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.depcruise.json' },
    // A package's tests may use the root's devDependencies (jest, fast-check, testkit).
    combinedDependencies: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['types', 'require', 'node', 'default'] },
    progress: { type: 'none' },
  },
};
