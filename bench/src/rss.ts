import { readFileSync, writeFileSync } from 'node:fs';

/** A process's peak resident memory over one phase of the run. */
export interface PhasePeak {
  /** The peak: VmHWM when it counts from the phase's start, else the highest sampled VmRSS. */
  bytes: number;
  /** Highest VmRSS seen by sampling (every `everyMs`). */
  sampledBytes: number;
  /** How `bytes` was taken: VmHWM since the process started (it started with the phase), since a reset at the phase's start, or sampled. */
  method: 'hwm-since-start' | 'hwm-since-reset' | 'sampled';
  samples: number;
}

/**
 * Peak RSS of some processes during one phase, from /proc/<pid>/status: VmRSS sampled every
 * `everyMs`, and VmHWM, the kernel's exact high-water mark. For a process that was running
 * before the phase, the mark is reset at its start (writing 5 to /proc/<pid>/clear_refs), so
 * the figure is the phase's own; where the reset is refused, the sampled peak is reported.
 */
export class PhaseRss {
  private readonly sampled = new Map<string, { max: number; n: number }>();
  private readonly method = new Map<string, PhasePeak['method']>();
  private readonly timer: NodeJS.Timeout;

  /** `fresh`: processes spawned at the phase's start, whose VmHWM already counts from there. */
  constructor(
    private readonly pids: Record<string, number>,
    fresh: string[] = [],
    everyMs = 100,
  ) {
    for (const name of Object.keys(pids)) {
      this.method.set(
        name,
        fresh.includes(name) ? 'hwm-since-start' : resetHwm(pids[name]!) ? 'hwm-since-reset' : 'sampled',
      );
      this.sampled.set(name, { max: 0, n: 0 });
    }
    this.sample();
    this.timer = setInterval(() => this.sample(), everyMs);
  }

  private sample(): void {
    for (const [name, pid] of Object.entries(this.pids)) {
      const rss = statusKb(pid, 'VmRSS');
      if (rss === undefined) continue;
      const s = this.sampled.get(name)!;
      s.max = Math.max(s.max, rss * 1024);
      s.n++;
    }
  }

  /** Stops sampling; call while the processes are still alive (VmHWM dies with them). */
  finish(): Record<string, PhasePeak> {
    this.sample();
    clearInterval(this.timer);
    const out: Record<string, PhasePeak> = {};
    for (const [name, pid] of Object.entries(this.pids)) {
      const s = this.sampled.get(name)!;
      let method = this.method.get(name)!;
      const hwm = method === 'sampled' ? undefined : statusKb(pid, 'VmHWM');
      if (hwm === undefined) method = 'sampled';
      out[name] = {
        bytes: hwm === undefined ? s.max : Math.max(hwm * 1024, s.max),
        sampledBytes: s.max,
        method,
        samples: s.n,
      };
    }
    return out;
  }
}

function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const kb = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb);
  } catch {
    return undefined;
  }
}

/** Resets the peak RSS of a process of ours (Linux ≥ 4.0: "5" to clear_refs); false where refused. */
function resetHwm(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}
