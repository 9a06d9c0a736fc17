import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { DURATION_PATTERN, FieldPathSchema } from '@state-relay/rules';
import { checkSync } from 'recheck';
import ts from 'typescript';

// Every regular expression in the production sources (packages/*/src, services/*/src) is checked
// for super-linear backtracking (ReDoS) with recheck: regex literals, `RegExp(...)`, and JSON-schema
// `pattern`s (ajv runs those on request bodies). One that is unsafe fails here unless it runs only
// on trusted input, said below with the reason.
const ROOT = join(__dirname, '../..');

/** Expressions built at run time, keyed `file#expression`: their value, checked like a literal. */
const BUILT_AT_RUN_TIME: Record<string, () => string> = {
  [`packages/rules/src/schema.ts#\`^(?!(?:.*\\\\.)?\${RESERVED}(?:\\\\.|$))\${SEGMENT}(?:\\\\.\${SEGMENT}){0,\${RULE_LIMITS.maxPathSegments - 1}}$\``]:
    () => FieldPathSchema.pattern!,
  'packages/rules/src/schema.ts#FieldPathSchema.pattern': () => FieldPathSchema.pattern!,
  // Written once in duration.ts (checked there as a literal), imported by the $ago schema.
  'packages/rules/src/schema.ts#DURATION_PATTERN': () => DURATION_PATTERN,
};

/** Expressions that may stay as they are, keyed `file#expression`: why their input is trusted. */
const TRUSTED_INPUT_ONLY: Record<string, string> = {
  'packages/kafka-runtime/src/kafkajs/error-shapes.ts#/producer.*(fenced|epoch)/i':
    "kafkajs's and the broker's error messages, never a client's input",
  'services/scanner/src/http/routes/status-page.ts#new RegExp(`<${tag}[^>]*>([\\\\s\\\\S]*?)</${tag}>`)':
    'the status page HTML shipped in the repo, read once at start',
};

interface FoundRegex {
  key: string;
  where: string;
  source?: string;
  flags: string;
}

function sourceFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(path);
    }
  };
  for (const top of ['packages', 'services']) {
    for (const pkg of readdirSync(join(ROOT, top))) {
      const src = join(ROOT, top, pkg, 'src');
      if (existsSync(src)) walk(src);
    }
  }
  return files.sort();
}

/** Each regex of a file: its source when written out (or a same-file string constant), else undefined. */
function regexesOf(file: string): FoundRegex[] {
  const rel = relative(ROOT, file);
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const constants = new Map<string, string>();
  const found: FoundRegex[] = [];
  const add = (node: ts.Node, expr: ts.Node, source: string | undefined, flags: string) => {
    const line = sf.getLineAndCharacterOfPosition(node.getStart()).line + 1;
    found.push({ key: `${rel}#${expr.getText()}`, where: `${rel}:${line}`, source, flags });
  };
  const text = (e: ts.Expression | undefined) =>
    e === undefined
      ? undefined
      : ts.isStringLiteralLike(e)
        ? e.text
        : ts.isIdentifier(e)
          ? constants.get(e.text)
          : undefined;
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
      const value = text(node.initializer);
      if (value !== undefined) constants.set(node.name.text, value);
    }
    if (ts.isRegularExpressionLiteral(node)) {
      const slash = node.text.lastIndexOf('/');
      add(node, node, node.text.slice(1, slash), node.text.slice(slash + 1));
    } else if (
      (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'RegExp'
    ) {
      add(node, node, text(node.arguments?.[0]), text(node.arguments?.[1]) ?? '');
    } else if (ts.isPropertyAssignment(node) && node.name.getText() === 'pattern') {
      add(node, node.initializer, text(node.initializer), 'u'); // ajv compiles patterns with the u flag
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/**
 * recheck's verdict: 'safe', or what is wrong (vulnerable with its complexity, or unknown). Its
 * timeout is wall-clock: at load 100 on 2 cores a 30 s budget ran out on a schema pattern that takes
 * well under a second on a quiet machine ("unknown: timeout"), so it gets 150 s.
 */
function verdict(source: string, flags: string): string {
  const result = checkSync(source, flags.replace(/[gy]/g, ''), { timeout: 150_000, randomSeed: 20 });
  if (result.status === 'safe') return 'safe';
  if (result.status === 'vulnerable') return `vulnerable (${result.complexity.type}), e.g. ${result.attack.pattern}`;
  return `unknown: ${result.error.kind}`;
}

const found = sourceFiles().flatMap(regexesOf);

describe('regular expressions in production code', () => {
  it('are found by the scan, in each form', () => {
    expect(found.length).toBeGreaterThan(30);
    expect(found.map((f) => f.key)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^packages\/service-kit\/src\/config\/env-vars\.ts#KAFKA_NAME$/),
        expect.stringMatching(/^services\/scanner\/src\/http\/routes\/status-page\.ts#new RegExp/),
        expect.stringMatching(/^packages\/schedule\/src\/cron\.ts#\//),
      ]),
    );
  });

  it('the checker flags the kinds of expression this test exists for', () => {
    expect(verdict('^Bearer[ \\t]+([^\\s].*?)[ \\t]*$', 'i')).toMatch(/^vulnerable \(polynomial\)/);
    expect(verdict('\\/+$', '')).toMatch(/^vulnerable \(polynomial\)/);
    expect(verdict('^(a+)+$', '')).toMatch(/^vulnerable \(exponential\)/);
  });

  it.each(found.map((f) => [f.where, f] as const))(
    '%s: no super-linear backtracking',
    (_where, { key, source, flags }) => {
      if (key in TRUSTED_INPUT_ONLY) return;
      const value = source ?? BUILT_AT_RUN_TIME[key]?.();
      if (value === undefined)
        throw new Error(
          `${key}: built at run time; add its value to BUILT_AT_RUN_TIME (or a reason to TRUSTED_INPUT_ONLY)`,
        );
      expect(`${key}: ${verdict(value, flags)}`).toBe(`${key}: safe`);
    },
    180_000,
  );

  it('every allow-list entry still names an expression in the code', () => {
    const keys = new Set(found.map((f) => f.key));
    for (const key of [...Object.keys(TRUSTED_INPUT_ONLY), ...Object.keys(BUILT_AT_RUN_TIME)])
      expect([key, keys.has(key)]).toEqual([key, true]);
  });
});
