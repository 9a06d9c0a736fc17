import { createHash } from 'node:crypto';
import { TaskStore, type JsonObject } from './lib';

/** The committed state of a stopped processor: every task store in its state directory. */
export function readStores(stateDir: string, partitions: number): Map<string, JsonObject> {
  const state = new Map<string, JsonObject>();
  for (let task = 0; task < partitions; task++) {
    const store = TaskStore.open({ dir: stateDir, task });
    try {
      let after: string | null = null;
      for (;;) {
        const page = store.keysAfter(after, 10_000);
        for (const [key, entity] of page) state.set(key, entity.value);
        if (page.length < 10_000) break;
        after = page[page.length - 1]![0];
      }
    } finally {
      store.close();
    }
  }
  return state;
}

export interface StateCheck {
  ok: boolean;
  keys: number;
  expectedKeys: number;
  /** Keys whose value differs from the oracle, or that are missing or extra. */
  mismatched: number;
  examples: string[];
  dormant: number;
  expectedDormant: number;
  /** sha256 over the sorted keys and values: equal digests, equal states. */
  digest: string;
}

/**
 * Compares a state with the expected one, value by value (key order inside objects ignored). With
 * `orElse` (a sweep cut part-way: `expected` swept, `orElse` not), each key may equal either.
 */
export function checkState(
  actual: Map<string, JsonObject>,
  expected: Map<string, JsonObject>,
  orElse?: Map<string, JsonObject>,
): StateCheck {
  let mismatched = 0;
  const examples: string[] = [];
  const note = (key: string, why: string) => {
    mismatched++;
    if (examples.length < 5) examples.push(`${key}: ${why}`);
  };
  for (const [key, value] of expected) {
    const got = actual.get(key);
    if (got === undefined) note(key, 'missing');
    else if (canonical(got) !== canonical(value)) {
      const other = orElse?.get(key);
      if (other === undefined || canonical(got) !== canonical(other))
        note(key, `got ${canonical(got)}, expected ${canonical(value)}`);
    }
  }
  for (const key of actual.keys()) if (!expected.has(key)) note(key, 'unexpected key');
  const dormant = (m: Map<string, JsonObject>) => [...m.values()].filter((v) => v['status'] === 'dormant').length;
  return {
    ok: mismatched === 0,
    keys: actual.size,
    expectedKeys: expected.size,
    mismatched,
    examples,
    dormant: dormant(actual),
    expectedDormant: dormant(expected),
    digest: digest(actual),
  };
}

function digest(state: Map<string, JsonObject>): string {
  const hash = createHash('sha256');
  for (const key of [...state.keys()].sort()) hash.update(`${key}\u0000${canonical(state.get(key)!)}\n`);
  return hash.digest('hex').slice(0, 16);
}

/** JSON with object keys sorted. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return `{${Object.keys(obj)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(obj[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}
