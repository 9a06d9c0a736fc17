import { readFileSync } from 'node:fs';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import Ajv from 'ajv';
import envSchema from 'env-schema';
import { ConfigError } from '../errors';
import { tokenStrengthProblem } from './checks';
import { FILE_OF_KEYWORD, PROBLEM_KEYWORD, TOKEN_KEYWORD } from './env-vars';

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
}

/**
 * Cross-variable checks, run after every variable was read. A variable whose own value was bad
 * holds its default here (nothing, if it has none), so these checks still run and every problem
 * is reported at once.
 */
export type EnvRefinement<S extends TObject> = (values: Partial<Static<S>>, problems: string[]) => void;

/**
 * Reads the variables of `schema` from `env` with env-schema: surrounding whitespace is dropped,
 * an empty value counts as unset, a list is split at commas. Throws a ConfigError listing every
 * bad value, each by its variable's name, in the schema's order, then the refinement's problems.
 */
export function loadEnv<S extends TObject>(schema: S, env: NodeJS.ProcessEnv, refine?: EnvRefinement<S>): Static<S> {
  const names = Object.keys(schema.properties);
  const problems: Array<{ at: number; message: string }> = [];
  const data = readVariables(schema, env, (name, message) => problems.push({ at: names.indexOf(name), message }));
  let values: Partial<Static<S>>;
  try {
    values = validate(schema, data);
  } catch (err) {
    const errors = (err as { errors?: AjvError[] }).errors;
    if (!Array.isArray(errors)) throw err;
    const bad = new Set<string>();
    const seen = new Set<string>();
    for (const e of errors) {
      const name = e.keyword === 'required' ? String(e.params.missingProperty) : e.instancePath.split('/')[1]!;
      const at = `${name}${e.instancePath.slice(name.length + 1)}`;
      if (seen.has(at)) continue; // ajv reports every failing keyword of one value
      seen.add(at);
      bad.add(name);
      problems.push({ at: names.indexOf(name), message: describe(schema, name, e, data) });
    }
    // The second pass reads the good values only, so the refinement sees them as the service would.
    const good = Object.fromEntries(Object.entries(data).filter(([name]) => !bad.has(name)));
    values = validate(schema, good, { lenient: true });
  }
  // A token of the right length may still be public or guessable; a bad one was dropped above.
  for (const [name, variable] of Object.entries(schema.properties)) {
    const value = (values as Record<string, unknown>)[name];
    if ((variable as TSchema)[TOKEN_KEYWORD] !== true || typeof value !== 'string') continue;
    const problem = tokenStrengthProblem(value);
    if (problem !== undefined) problems.push({ at: names.indexOf(name), message: `${name} ${problem}` });
  }
  problems.sort((a, b) => a.at - b.at);
  const messages = problems.map((p) => p.message);
  refine?.(values, messages);
  if (messages.length > 0) throw new ConfigError(messages);
  return values as Static<S>;
}

// env-schema's own options, plus the problem keyword. One instance (made on first use), and one
// schema object per service schema, so ajv compiles each once: a fresh instance per call, what
// env-schema's customOptions does, costs ~150 ms.
let ajv: Ajv | undefined;
const prepared = new WeakMap<TObject, { strict: TObject; lenient: TObject }>();

function validate<S extends TObject>(schema: S, data: Record<string, unknown>, { lenient = false } = {}): Static<S> {
  let copies = prepared.get(schema);
  if (copies === undefined) {
    // Copies: env-schema sets additionalProperties on the schema it is given.
    copies = { strict: { ...schema }, lenient: { ...schema, required: [] } };
    prepared.set(schema, copies);
  }
  return envSchema<Static<S>>({
    schema: lenient ? copies.lenient : copies.strict,
    data,
    env: false, // only what the caller passed: tests hand in an env of their own
    ajv: (ajv ??= new Ajv({
      allErrors: true,
      removeAdditional: true,
      useDefaults: true,
      coerceTypes: true,
      allowUnionTypes: true,
      keywords: [
        { keyword: PROBLEM_KEYWORD, schemaType: 'string' },
        { keyword: FILE_OF_KEYWORD, schemaType: 'string' },
        { keyword: TOKEN_KEYWORD, schemaType: 'boolean' },
      ],
    })),
  });
}

/**
 * The schema's variables as found in `env`: trimmed, empty ones left out, lists split; a `NAME_FILE`
 * variable (EnvVar.fileOf) gives NAME the content of its file. A file that cannot be read, or NAME
 * set too, is reported by the variables' names and the path, never the content.
 */
function readVariables(
  schema: TObject,
  env: NodeJS.ProcessEnv,
  problem: (name: string, message: string) => void,
): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const [name, variable] of Object.entries(schema.properties)) {
    const raw = env[name]?.trim();
    if (!raw) continue;
    data[name] = (variable as TSchema).type === 'array' ? splitList(raw) : raw;
    const of = (variable as TSchema)[FILE_OF_KEYWORD] as string | undefined;
    if (of === undefined) continue;
    if (env[of]?.trim()) {
      problem(name, `${of} and ${name} are both set: set one of them`);
      continue;
    }
    try {
      const content = readFileSync(raw, 'utf8').trim();
      if (content) data[of] = content;
      else problem(name, `${name} names an empty file: ${raw}`);
    } catch (err) {
      problem(name, `${name}: cannot read ${raw} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
  }
  return data;
}

function splitList(raw: string): string[] {
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

function describe(schema: TObject, name: string, e: AjvError, data: Record<string, unknown>): string {
  if (e.keyword === 'required' || e.keyword === 'minItems') return `${name} is required`;
  const variable = schema.properties[name] as TSchema | undefined;
  const item = e.instancePath.split('/')[2];
  const value = String(item === undefined ? data[name] : (data[name] as string[])[Number(item)]);
  const problem = (variable?.[PROBLEM_KEYWORD] as string | undefined) ?? 'is not valid';
  return `${name} ${problem.replaceAll('{value}', () => value).replaceAll('{length}', () => String(value.length))}`;
}
