import { AS_OF } from './common';
import { applyAccountEvent, DORMANCY_SWEEP, evaluateCondition, markDormant, type JsonObject } from './lib';
import { steadyEvent, type SteadyLoadSpec } from './steady-load';

/** The seeded state, the steady load folded in, and then the sweep: what every mode must end with. */
export function expectedState(
  seed: Map<string, JsonObject>,
  spec: SteadyLoadSpec,
  loadEvents: number,
): Map<string, JsonObject> {
  const state = loadedState(seed, spec, loadEvents);
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
  const state = new Map(seed);
  for (let i = 0; i < loadEvents; i++) {
    const { key, event } = steadyEvent(spec, i);
    const next = applyAccountEvent(key, event, state.get(key));
    if (next === null) state.delete(key);
    else state.set(key, next);
  }
  return state;
}
