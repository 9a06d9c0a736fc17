import type { LatencyBudget } from './latency-budget';

/**
 * What holds a walk's command rate where it is: `ramp` (starting: doubling while the budget
 * holds), `budget` (the events' p99 reached the budget; the rate backs off and then probes up),
 * `lag` (the processor fell behind on commands: backed off, the safety net), `cap` (the scan's
 * `rate`, or for an unlimited scan the pacer's ceiling: nothing else limits it).
 */
export const PACE_LIMITERS = ['ramp', 'budget', 'lag', 'cap'] as const;
export type PaceLimiter = (typeof PACE_LIMITERS)[number];

/** One reading of the processors' event commit latency. */
export interface LatencyReading {
  /** When it was taken, on the pacer's clock: a reading is acted on once. */
  at: number;
  /** The worst event commit p99 of the processors read, ms; null when none committed an event in its window. */
  p99Ms: number | null;
  /** A processor's status read timed out (too busy to answer): over any budget, whatever p99Ms says. */
  overloaded?: boolean;
}

export interface LatencySignal {
  /** The newest reading; undefined when there is none recent (no processor configured or answering). */
  latest(): LatencyReading | undefined;
}

/** The rate a pacer allows now, what limits it, and the budget it holds to. */
export interface PaceState {
  rate: number;
  limiter: PaceLimiter;
  /** The p99 the events may reach (ms); null without a budget, or for a ratio before any baseline. */
  budgetP99Ms: number | null;
  baselineP99Ms: number | null;
  /** The last reading's p99; null before one, or with no events committed. */
  eventP99Ms: number | null;
}

export interface CommandPacerOptions {
  /** The scan's `rate`: never exceeded. Infinity (an unlimited scan) stops at MAX_PACED_RATE. */
  cap: number;
  budget: LatencyBudget;
  /** The event p99 before the scan started, for a ratio budget; null: the first reading stands in. */
  baselineP99Ms: number | null;
  signal: LatencySignal;
  now: () => number;
  /** Where the walk starts; default 50/s (or the cap if lower). */
  startRate?: number;
  /** Never below this (or the cap if lower), so the walk always progresses; default 10/s. */
  floor?: number;
  /**
   * The span of the processors' latency window: after a decrease, readings taken within it still
   * hold latencies from before it and do not cut again. Default 3 s (the processor's window).
   */
  windowMs?: number;
  /** Without readings (no events, no processor answering), the rate steps up this often; default 1 s. */
  stepMs?: number;
  /** A breach multiplies the rate by this; default 0.5. */
  decrease?: number;
}

/** An unlimited scan's ceiling: the API's largest `rate`. */
export const MAX_PACED_RATE = 1_000_000;
/** After a cut, each step adds this share of the rate before the cut (back there in about 5 steps). */
const INCREASE_SHARE = 0.1;

/**
 * AIMD pacing of a walk's commands by the events' commit latency (issue 32): the rate starts low and
 * doubles at each reading while the budget holds (`ramp`); a reading over the budget halves it, once
 * per latency window; after that each reading within the budget adds a tenth of the rate the cut
 * came from. No events, or no readings at all, count as the budget holding, so an idle system is
 * swept up to the cap; a processor whose status read timed out (too busy to answer) counts as a
 * breach. Pure: the clock and the latency signal are injected, nothing here waits.
 */
export class CommandPacer {
  private current: number;
  private limiter: PaceLimiter = 'ramp';
  private ramping = true;
  private step: number;
  private baseline: number | null;
  private lastReadingAt = -Infinity;
  private lastStepAt: number;
  private lastCutAt = -Infinity;
  private lastP99: number | null = null;
  private readonly cap: number;
  private readonly floor: number;

  constructor(private readonly options: CommandPacerOptions) {
    if (!(options.cap > 0)) throw new RangeError(`cap must be positive, got ${options.cap}`);
    this.cap = Math.min(options.cap, MAX_PACED_RATE);
    this.floor = Math.min(this.cap, options.floor ?? 10);
    this.current = Math.max(this.floor, Math.min(this.cap, options.startRate ?? 50));
    this.step = this.floor;
    this.baseline = options.baselineP99Ms;
    this.lastStepAt = options.now();
    // A reading taken before the walk says nothing about what its commands do.
    this.lastReadingAt = options.signal.latest()?.at ?? -Infinity;
    if (this.current >= this.cap) this.limiter = 'cap';
  }

  /** Takes in the latest reading (each once; without readings, one step per stepMs) and returns the rate. */
  update(): number {
    const t = this.options.now();
    const reading = this.options.signal.latest();
    if (reading !== undefined) {
      if (reading.at > this.lastReadingAt) {
        this.lastReadingAt = reading.at;
        this.onReading(reading, t);
      }
    } else if (t - this.lastStepAt >= (this.options.stepMs ?? 1_000)) {
      this.lastP99 = null;
      this.increase(t);
    }
    return this.current;
  }

  /** The processor fell behind on commands (the walk is pausing for it): cut, as for a breach. */
  congested(): void {
    const t = this.options.now();
    if (t - this.lastCutAt >= this.windowMs) this.cut(t);
    this.limiter = 'lag';
  }

  state(): PaceState {
    return {
      rate: this.current,
      limiter: this.limiter,
      budgetP99Ms: this.budgetMs(),
      baselineP99Ms: this.baseline,
      eventP99Ms: this.lastP99,
    };
  }

  private get windowMs(): number {
    return this.options.windowMs ?? 3_000;
  }

  private onReading({ p99Ms: p99, overloaded }: LatencyReading, t: number): void {
    this.lastP99 = p99;
    if (p99 !== null && this.baseline === null && this.options.budget.ratio !== undefined) this.baseline = p99;
    const budget = this.budgetMs();
    // A processor too busy to answer is the breach the budget exists for (unless there is no budget).
    const breached = this.options.budget.off
      ? false
      : overloaded === true || (p99 !== null && budget !== null && p99 > budget);
    if (!breached) return this.increase(t);
    this.limiter = 'budget';
    if (t - this.lastCutAt >= this.windowMs) this.cut(t);
  }

  private budgetMs(): number | null {
    const { budget } = this.options;
    if (budget.p99Ms !== undefined) return budget.p99Ms;
    if (budget.ratio !== undefined && this.baseline !== null) return budget.ratio * this.baseline;
    return null;
  }

  private increase(t: number): void {
    this.lastStepAt = t;
    this.current = Math.min(this.cap, this.ramping ? this.current * 2 : this.current + this.step);
    this.limiter = this.current >= this.cap ? 'cap' : this.ramping ? 'ramp' : this.limiter === 'lag' ? 'lag' : 'budget';
  }

  private cut(t: number): void {
    this.ramping = false;
    this.lastCutAt = t;
    this.lastStepAt = t;
    this.step = Math.max(this.floor, this.current * INCREASE_SHARE);
    this.current = Math.max(this.floor, this.current * (this.options.decrease ?? 0.5));
  }
}
