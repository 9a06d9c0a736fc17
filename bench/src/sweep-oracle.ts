import { AS_OF } from './common';
import {
  applyAccountEvent,
  DORMANCY_SWEEP,
  evaluateCondition,
  markDormant,
  type JsonObject,
  type KeyedEvent,
} from './lib';
import { steadyEvent, type SteadyLoadSpec } from './steady-load';

/** The seeded state, the steady load folded in, and then the sweep: what every mode must end with. */
export function expectedState(
  seed: Map<string, JsonObject>,
  spec: SteadyLoadSpec,
  loadEvents: number,
): Map<string, JsonObject> {
  return sweptState(loadedState(seed, spec, loadEvents));
}

/** `state` with the sweep (mark dormant as of AS_OF) applied to every entity it matches; changes `state`. */
export function sweptState(state: Map<string, JsonObject>): Map<string, JsonObject> {
  for (const [key, value] of state) {
    if (!evaluateCondition(DORMANCY_SWEEP.condition, value, { asOf: AS_OF })) continue;
    const outcome = markDormant(value, {}, { asOf: AS_OF });
    if (outcome.kind === 'update') state.set(key, outcome.value);
  }
  return state;
}

/** The seeded state with the first `loadEvents` events of the steady load folded in (no sweep). */
export function loadedState(
  seed: Map<string, JsonObject>,
  spec: SteadyLoadSpec,
  loadEvents: number,
): Map<string, JsonObject> {
  return foldedState(
    seed,
    (function* () {
      for (let i = 0; i < loadEvents; i++) yield steadyEvent(spec, i);
    })(),
  );
}

/** The seeded state with `events` folded in, in their order (per key: the order the processor sees them). */
export function foldedState(seed: Map<string, JsonObject>, events: Iterable<KeyedEvent>): Map<string, JsonObject> {
  const state = new Map(seed);
  for (const { key, event } of events) {
    const next = applyAccountEvent(key, event, state.get(key));
    if (next === null) state.delete(key);
    else state.set(key, next);
  }
  return state;
}
