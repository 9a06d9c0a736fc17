import { RuleApplyError } from './errors';
import { cloneJson, copyObject, defineOwn, describeType, isJsonObject, ownValue, quote } from './json';
import { fieldPathProblem, lookupField, pathSegments } from './paths';
import type { FieldPath, JsonObject, JsonValue } from './types';

/**
 * A copy-on-write view of a value: each write copies the objects on its path (once) and shares
 * every untouched subtree, so the original is never mutated. All writes define own properties.
 */
export class Draft {
  readonly root: JsonObject;
  private readonly fresh = new WeakSet<object>();

  constructor(original: JsonObject) {
    this.root = this.own(copyObject(original));
  }

  set(field: FieldPath, value: JsonValue): void {
    const { parent, key } = this.parentOf(field, 'set');
    defineOwn(parent, key, cloneJson(value));
  }

  /** Removing a field that is not there is a no-op. */
  unset(field: FieldPath): void {
    checkPath(field);
    if (!lookupField(this.root, field).found) return;
    const { parent, key } = this.parentOf(field, 'unset');
    delete parent[key];
  }

  /** A missing field counts as 0; anything else that is not a number cannot be incremented. */
  increment(field: FieldPath, by: number): void {
    const { parent, key } = this.parentOf(field, 'increment');
    const current = ownValue(parent, key);
    if (current !== undefined && typeof current !== 'number') {
      throw new RuleApplyError(`cannot increment ${quote(field)}: it holds ${describeType(current)}, not a number`, {
        field,
      });
    }
    const next = (current ?? 0) + by;
    if (!Number.isFinite(next)) {
      throw new RuleApplyError(`cannot increment ${quote(field)}: the result is not a finite number`, { field });
    }
    defineOwn(parent, key, next);
  }

  /** The (copied) object holding the last segment of `field`, creating missing objects on the way. */
  private parentOf(field: FieldPath, verb: string): { parent: JsonObject; key: string } {
    checkPath(field);
    const segments = pathSegments(field);
    const key = segments.pop() as string;
    let parent = this.root;
    segments.forEach((segment, i) => {
      const child = ownValue(parent, segment);
      let next: JsonObject;
      if (child === undefined) next = this.own({});
      else if (isJsonObject(child)) next = this.fresh.has(child) ? child : this.own(copyObject(child));
      else {
        const at = segments.slice(0, i + 1).join('.');
        const message = `cannot ${verb} ${quote(field)}: ${quote(at)} holds ${describeType(child)}, not an object`;
        throw new RuleApplyError(message, { field });
      }
      defineOwn(parent, segment, next);
      parent = next;
    });
    return { parent, key };
  }

  private own<T extends object>(o: T): T {
    this.fresh.add(o);
    return o;
  }
}

/** Actions should arrive validated; this re-check keeps a reserved segment from ever being written. */
function checkPath(field: FieldPath): void {
  const problem = fieldPathProblem(field);
  if (problem !== undefined) throw new RuleApplyError(`invalid field path: ${problem}`, { field });
}
