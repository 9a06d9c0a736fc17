/** A CPU profile as the inspector's Profiler.stop returns it (and as a .cpuprofile file holds it). */
export interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    hitCount?: number;
    children?: number[];
  }>;
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export const STAGES = ['decode', 'validate', 'fold', 'read', 'encode', 'write', 'commit', 'gc'] as const;
export type Stage = (typeof STAGES)[number];

/**
 * Where a function's time goes (with everything it calls, unless an outer frame already named a
 * stage). The fold stage is what is left of a fold slice; `commit` what is left of a unit's commit.
 */
const STAGE_OF: Array<[Stage, RegExp, RegExp]> = [
  ['decode', /^(decodeCommand|decodeEvent)$/, /contracts\/dist\//],
  ['validate', /^(validateCondition|validateAction|validatedRules)$/, /(rules|processor)\/dist\//],
  ['read', /^get$/, /store\/dist\/task-store\.js$/],
  ['encode', /^encodeStoredEntity$/, /contracts\/dist\//],
  ['write', /^commit$/, /store\/dist\/task-store\.js$/],
];
/** The harness's own frames: a fold slice (stage fold) and a unit's commit (stage commit). */
const DRIVERS: Record<string, Stage> = { replayFoldSlice: 'fold', replayCommit: 'commit' };

/**
 * Microseconds of a profile per stage: each sample's time goes to the outermost stage function on
 * its stack below the harness's frame (a TaskStore read transaction's BEGIN and COMMIT, the self
 * time of TaskStore.reading, count as `read`); garbage collection as `gc`. Samples outside the
 * harness's frames (the profiler, timers) are left out.
 */
export function stageTimes(profile: CpuProfile): Record<Stage, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    // timeDeltas[i + 1] is the time until the next sample: the time spent where sample i was.
    const dt = deltas[i + 1] ?? 0;
    self.set(samples[i]!, (self.get(samples[i]!) ?? 0) + dt);
  }
  const out = Object.fromEntries(STAGES.map((s) => [s, 0])) as Record<Stage, number>;
  const root = profile.nodes[0]!;
  const stack: Array<[number, Stage | undefined, Stage | undefined]> = [[root.id, undefined, undefined]];
  while (stack.length > 0) {
    const [id, driverStage, outer] = stack.pop()!;
    const node = byId.get(id)!;
    const { functionName, url } = node.callFrame;
    let driver = driverStage;
    let stage = outer;
    if (functionName === '(garbage collector)') {
      out.gc += self.get(id) ?? 0;
      continue;
    }
    if (url.endsWith('replay/replay.js') && DRIVERS[functionName]) driver = DRIVERS[functionName];
    const reading = functionName === 'reading' && url.endsWith('task-store.js');
    if (driver && !stage && !reading) {
      for (const [name, fn, where] of STAGE_OF) {
        if (fn.test(functionName) && where.test(url)) {
          stage = name;
          break;
        }
      }
    }
    if (driver) out[reading && !stage ? 'read' : (stage ?? driver)] += self.get(id) ?? 0;
    for (const child of node.children ?? []) stack.push([child, driver, stage]);
  }
  return out;
}
