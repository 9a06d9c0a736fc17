import { hasOwn } from './json';
import { resolveOperand } from './operand';
import { isFieldPath } from './paths';
import { hasLoneSurrogate } from './strings';
import type { Condition, EvalContext, JsonPrimitive, JsonValue } from './types';

/**
 * A SQLite WHERE expression that pre-filters rows before evaluateCondition re-checks them.
 * Sound: it never excludes a row the condition accepts. When `exact`, it accepts exactly those rows.
 */
export interface SqlPrefilter {
  sql: string;
  params: (string | number)[];
  exact: boolean;
}

type Leaf = Extract<Condition, { field: string }>;
type Sql = SqlPrefilter;

const TRUE: Sql = { sql: '1', params: [], exact: true };
const FALSE: Sql = { sql: '0', params: [], exact: true };
/** What a node compiles to when SQL cannot express it safely: let every row through. */
const UNKNOWN: Sql = { sql: '1', params: [], exact: false };

const COLUMN = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/;
const SQL_OP = { lt: '<', lte: '<=', gt: '>', gte: '>=', eq: '=' } as const;

// SQLite reads JSON numbers through its own decimal parser, which we observed to be off by an ulp
// for magnitudes beyond about 1e±80. Numbers within this range compare exactly; others are only
// type-checked (sound, not exact).
const EXACT_NUMBER_MIN = 1e-60;
const EXACT_NUMBER_MAX = 1e60;

/**
 * Compiles `cond` to a SQLite (JSON1) expression over `valueColumn`, a TEXT column holding the
 * record as JSON (as JSON.stringify writes it: no duplicate keys). Every node yields 0 or 1, never
 * NULL, so NOT stays correct. JSON paths are bound as parameters; only the column name is inlined.
 */
export function compileConditionToSql(
  cond: Condition,
  ctx: EvalContext,
  valueColumn = 'value',
  /** The JSON path of the value inside the column, e.g. `$.value` when the column holds a whole record. */
  root = '$',
): SqlPrefilter {
  if (!COLUMN.test(valueColumn)) {
    throw new RangeError(`valueColumn must be an SQL identifier such as "value" or "t.value", got "${valueColumn}"`);
  }
  if (!ROOT.test(root)) throw new RangeError(`root must be a JSON path such as "$" or "$.value", got "${root}"`);
  const { sql, params, exact } = new Compiler(valueColumn, root, ctx).node(cond);
  return { sql, params: [...params], exact }; // a fresh array: callers may append their own params
}

const ROOT = /^\$(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

class Compiler {
  constructor(
    private readonly column: string,
    private readonly root: string,
    private readonly ctx: EvalContext,
  ) {}

  node(cond: Condition): Sql {
    if (hasOwn(cond, 'all')) return and((cond as { all: Condition[] }).all.map((c) => this.node(c)));
    if (hasOwn(cond, 'any')) return or((cond as { any: Condition[] }).any.map((c) => this.node(c)));
    if (hasOwn(cond, 'not')) return not(this.node((cond as { not: Condition }).not));
    return this.leaf(cond as Leaf);
  }

  private leaf(leaf: Leaf): Sql {
    if (!isFieldPath(leaf.field)) return UNKNOWN;
    const at = new FieldSql(this.column, `${this.root}.${leaf.field}`);
    switch (leaf.op) {
      case 'exists': {
        const present = at.typeIs("NOT IN ('', 'null')");
        return leaf.value === false ? not(present) : present;
      }
      case 'eq':
        return at.equals(resolveOperand(leaf.value, this.ctx));
      case 'ne':
        return not(at.equals(resolveOperand(leaf.value, this.ctx)));
      case 'lt':
      case 'lte':
      case 'gt':
      case 'gte':
        return at.compare(SQL_OP[leaf.op], resolveOperand(leaf.value, this.ctx));
      case 'in':
        return Array.isArray(leaf.value) ? or(primitiveGroups(leaf.value).map((g) => at.oneOf(g))) : FALSE;
      case 'prefix':
        return typeof leaf.value === 'string' ? at.startsWith(leaf.value) : FALSE;
      default:
        return FALSE;
    }
  }
}

/** SQL fragments about one JSON path in the value column. */
class FieldSql {
  constructor(
    private readonly column: string,
    private readonly path: string,
  ) {}

  /** json_type is NULL for a missing path; ifnull keeps every result 0/1. */
  typeIs(test: string): Sql {
    return { sql: `ifnull(json_type(${this.column}, ?), '') ${test}`, params: [this.path], exact: true };
  }

  /** `test` applied to the extracted value, guarded by the JSON type that gives it JS semantics. */
  private typed(type: 'text' | 'number', test: (x: string) => string, params: (string | number)[]): Sql {
    const guard = this.typeIs(type === 'text' ? "= 'text'" : "IN ('integer', 'real')");
    // CAST: an integer text such as 1152921504606847000 must round to the double JSON.parse gives.
    const x = type === 'text' ? `json_extract(${this.column}, ?)` : `CAST(json_extract(${this.column}, ?) AS REAL)`;
    return { sql: `(${guard.sql} AND ${test(x)})`, params: [this.path, this.path, ...params], exact: true };
  }

  equals(v: JsonValue): Sql {
    if (v === null) return this.typeIs("= 'null'");
    if (v === true) return this.typeIs("= 'true'");
    if (v === false) return this.typeIs("= 'false'");
    if (typeof v === 'string' || typeof v === 'number') return this.compare('=', v);
    // Deep equality of arrays/objects (key order aside) is not expressible simply: check the type only.
    return { ...this.typeIs(Array.isArray(v) ? "= 'array'" : "= 'object'"), exact: false };
  }

  compare(op: (typeof SQL_OP)[keyof typeof SQL_OP], v: JsonValue): Sql {
    if (typeof v === 'string') {
      return hasLoneSurrogate(v) ? this.typeOnly('text') : this.typed('text', (x) => `${x} ${op} ?`, [v]);
    }
    if (typeof v === 'number') {
      return exactNumber(v) ? this.typed('number', (x) => `${x} ${op} ?`, [v]) : this.typeOnly('number');
    }
    return FALSE; // ordering against anything else never holds (and = is handled by equals)
  }

  /** Sound fallback: any value of the right JSON type may match. */
  private typeOnly(type: 'text' | 'number'): Sql {
    return { ...this.typeIs(type === 'text' ? "= 'text'" : "IN ('integer', 'real')"), exact: false };
  }

  oneOf(group: PrimitiveGroup): Sql {
    switch (group.kind) {
      case 'literal':
        return this.typeIs(`IN (${group.types.map((t) => `'${t}'`).join(', ')})`);
      case 'text':
      case 'number': {
        const marks = group.values.map(() => '?').join(', ');
        if (!group.exact) return this.typeOnly(group.kind);
        return this.typed(group.kind, (x) => `${x} IN (${marks})`, group.values);
      }
    }
  }

  /**
   * Compares UTF-8 bytes: text functions stop at an embedded NUL, and byte order is code point order.
   * substr() of an empty blob is NULL, hence the ifnull and the separate empty prefix.
   */
  startsWith(prefix: string): Sql {
    if (prefix === '') return this.typeIs("= 'text'");
    if (hasLoneSurrogate(prefix)) return this.typeOnly('text');
    const test = (x: string) => `ifnull(substr(CAST(${x} AS BLOB), 1, length(CAST(? AS BLOB))) = CAST(? AS BLOB), 0)`;
    return this.typed('text', test, [prefix, prefix]);
  }
}

type PrimitiveGroup =
  | { kind: 'literal'; types: ('true' | 'false' | 'null')[] }
  | { kind: 'text'; values: string[]; exact: boolean }
  | { kind: 'number'; values: number[]; exact: boolean };

/** Splits an `in` list by JSON type; strict membership means a value only matches its own type. */
function primitiveGroups(list: JsonPrimitive[]): PrimitiveGroup[] {
  const strings = list.filter((v): v is string => typeof v === 'string');
  const numbers = list.filter((v): v is number => typeof v === 'number');
  const literals: ('true' | 'false' | 'null')[] = [];
  if (list.includes(true)) literals.push('true');
  if (list.includes(false)) literals.push('false');
  if (list.includes(null)) literals.push('null');
  const groups: PrimitiveGroup[] = [];
  if (literals.length > 0) groups.push({ kind: 'literal', types: literals });
  if (strings.length > 0) groups.push({ kind: 'text', values: strings, exact: !strings.some(hasLoneSurrogate) });
  if (numbers.length > 0) groups.push({ kind: 'number', values: numbers, exact: numbers.every(exactNumber) });
  return groups;
}

function exactNumber(v: number): boolean {
  const magnitude = Math.abs(v);
  return v === 0 || (magnitude >= EXACT_NUMBER_MIN && magnitude <= EXACT_NUMBER_MAX);
}

// Combinators. Soundness: AND/OR of supersets is a superset of the AND/OR; NOT of a superset is
// not, so NOT over an inexact node lets every row through.

function and(parts: Sql[]): Sql {
  const exact = parts.every((p) => p.exact);
  if (parts.some((p) => p.sql === '0')) return FALSE; // '0' is only ever produced exact
  return join(
    parts.filter((p) => p.sql !== '1'),
    'AND',
    { sql: '1', params: [], exact },
  );
}

function or(parts: Sql[]): Sql {
  const exact = parts.every((p) => p.exact);
  if (parts.some((p) => p.sql === '1' && p.exact)) return TRUE;
  if (parts.some((p) => p.sql === '1')) return UNKNOWN;
  return join(
    parts.filter((p) => p.sql !== '0'),
    'OR',
    { sql: '0', params: [], exact },
  );
}

function join(parts: Sql[], op: 'AND' | 'OR', empty: Sql): Sql {
  const exact = empty.exact;
  if (parts.length === 0) return empty;
  if (parts.length === 1) return { ...(parts[0] as Sql), exact };
  return {
    sql: balanced(
      parts.map((p) => p.sql),
      op,
    ),
    params: parts.flatMap((p) => p.params),
    exact,
  };
}

/**
 * `(a OP b OP c …)` as a balanced tree of parenthesised pairs. SQLite parses a flat chain into a
 * left-deep tree, one level per operand, and refuses an expression deeper than 1,000 levels
 * (SQLITE_MAX_EXPR_DEPTH): an `any` of 996 leaves, which the validator accepts, failed every
 * scan. Balanced, n operands take about log2(n) levels. The operands keep their order, so the
 * parameters (flattened in that order) still line up.
 */
function balanced(sqls: string[], op: 'AND' | 'OR'): string {
  if (sqls.length <= 2) return `(${sqls.join(` ${op} `)})`;
  const half = Math.ceil(sqls.length / 2);
  return `(${balanced(sqls.slice(0, half), op)} ${op} ${balanced(sqls.slice(half), op)})`;
}

function not(part: Sql): Sql {
  if (!part.exact) return UNKNOWN;
  if (part.sql === '1') return FALSE;
  if (part.sql === '0') return TRUE;
  return { sql: `NOT (${part.sql})`, params: part.params, exact: true };
}
