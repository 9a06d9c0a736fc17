import { CommandPacer, type CommandPacerOptions, type LatencyReading } from '../src/scans/command-pacer';

// The pacer as a unit: an injected clock and latency signal, one reading a second as the scanner
// samples the processors. No timers, no Kafka.

class Plant {
  now = 0;
  reading: LatencyReading | undefined;
  /** A processor reading once a second: `p99` of what the current rate does to events. */
  read(p99Ms: number | null): void {
    this.now += 1_000;
    this.reading = { at: this.now, p99Ms };
  }
}

function pacer(plant: Plant, options: Partial<CommandPacerOptions> = {}): CommandPacer {
  return new CommandPacer({
    cap: 3_000,
    budget: { p99Ms: 300 },
    baselineP99Ms: null,
    signal: { latest: () => plant.reading },
    now: () => plant.now,
    ...options,
  });
}

/** Events take 100 ms until the processor has 2,000 commands/s to fold; past it, 0.5 ms more per command/s. */
const p99At = (rate: number) => 100 + Math.max(0, rate - 2_000) * 0.5;

describe('CommandPacer', () => {
  it('starts low and doubles at each reading within the budget, up to the cap and never above it', () => {
    const plant = new Plant();
    const p = pacer(plant);
    expect(p.update()).toBe(50);
    expect(p.state().limiter).toBe('ramp');
    const rates: number[] = [];
    for (let i = 0; i < 10; i++) {
      plant.read(120);
      rates.push(p.update());
      expect(p.update()).toBe(rates.at(-1)); // the same reading is acted on once
    }
    expect(rates).toEqual([100, 200, 400, 800, 1_600, 3_000, 3_000, 3_000, 3_000, 3_000]);
    expect(p.state()).toMatchObject({ rate: 3_000, limiter: 'cap', budgetP99Ms: 300, eventP99Ms: 120 });
  });

  it('converges under a steady budget: it holds the rate near what the budget allows, never above the cap', () => {
    const plant = new Plant();
    const p = pacer(plant, { cap: 10_000 }); // the budget allows 2,400/s: 100 + 400 × 0.5 = 300 ms
    const late: number[] = [];
    let breaches = 0;
    for (let i = 0; i < 180; i++) {
      const rate = p.update();
      expect(rate).toBeLessThanOrEqual(10_000);
      plant.read(p99At(rate)); // what this second's rate did to events
      if (i >= 60) {
        late.push(rate);
        if (p99At(rate) > 300) breaches++;
      }
    }
    const mean = late.reduce((a, b) => a + b, 0) / late.length;
    expect(mean).toBeGreaterThan(0.6 * 2_400);
    expect(mean).toBeLessThan(1.05 * 2_400);
    expect(Math.max(...late)).toBeLessThan(2_400 * 1.25); // one additive step past the budget at most
    expect(breaches / late.length).toBeLessThan(0.25);
    expect(p.state().limiter).toBe('budget');
  });

  it('backs off at the first reading over the budget, once per latency window while the breach lasts', () => {
    const plant = new Plant();
    const p = pacer(plant, { startRate: 2_000, windowMs: 3_000 });
    plant.read(250);
    expect(p.update()).toBe(3_000);
    plant.read(900); // the breach shows
    expect(p.update()).toBe(1_500);
    expect(p.state()).toMatchObject({ limiter: 'budget', eventP99Ms: 900 });
    plant.read(800); // the window still holds latencies from before the cut: no second cut
    expect(p.update()).toBe(1_500);
    plant.read(700);
    expect(p.update()).toBe(1_500);
    plant.read(600); // a window later, still over: cut again
    expect(p.update()).toBe(750);
    plant.read(200); // within the budget: additive increase of a tenth of the rate cut from
    expect(p.update()).toBe(900);
  });

  it('never goes below the floor, so a walk under a budget it cannot meet still progresses', () => {
    const plant = new Plant();
    const p = pacer(plant, { floor: 10, windowMs: 1_000 });
    for (let i = 0; i < 50; i++) {
      plant.read(5_000);
      expect(p.update()).toBeGreaterThanOrEqual(10);
    }
    expect(p.state().rate).toBe(10);
    expect(pacer(plant, { cap: 2, floor: 10 }).update()).toBe(2); // a cap below the floor is the floor
  });

  it('makes progress up to the cap when events are idle (no events committed in the window)', () => {
    const plant = new Plant();
    const p = pacer(plant);
    for (let i = 0; i < 8; i++) {
      plant.read(null);
      p.update();
    }
    expect(p.state()).toMatchObject({ rate: 3_000, limiter: 'cap', eventP99Ms: null });
  });

  it('makes progress up to the cap without any reading (no processor configured or answering), a step a second', () => {
    let now = 0;
    const p = new CommandPacer({
      cap: 1_000,
      budget: { ratio: 1.2 },
      baselineP99Ms: null,
      signal: { latest: () => undefined },
      now: () => now,
    });
    expect(p.update()).toBe(50);
    now += 500;
    expect(p.update()).toBe(50); // not yet a step
    now += 500;
    expect(p.update()).toBe(100);
    for (let i = 0; i < 5; i++) {
      now += 1_000;
      p.update();
    }
    expect(p.state()).toMatchObject({ rate: 1_000, limiter: 'cap', budgetP99Ms: null });
  });

  it('acts only on readings taken after the walk started', () => {
    const plant = new Plant();
    plant.read(5_000); // before the walk: what the processor felt without its commands
    const p = pacer(plant);
    expect(p.update()).toBe(50);
    expect(p.state()).toMatchObject({ limiter: 'ramp', eventP99Ms: null });
    plant.read(100);
    expect(p.update()).toBe(100);
  });

  it('a ratio budget is a multiple of the baseline; without one the first reading stands in', () => {
    const plant = new Plant();
    const withBaseline = pacer(plant, { budget: { ratio: 1.3 }, baselineP99Ms: 100, startRate: 1_000 });
    plant.read(140);
    expect(withBaseline.update()).toBe(500);
    expect(withBaseline.state()).toMatchObject({ budgetP99Ms: 130, baselineP99Ms: 100, limiter: 'budget' });

    const plant2 = new Plant();
    const without = pacer(plant2, { budget: { ratio: 1.5 }, startRate: 1_000 });
    plant2.read(200);
    expect(without.update()).toBe(2_000);
    expect(without.state()).toMatchObject({ budgetP99Ms: 300, baselineP99Ms: 200 });
  });

  it('with the budget off, only the cap and the lag limit it; the lag cuts like a breach', () => {
    const plant = new Plant();
    const p = pacer(plant, { budget: { off: true }, cap: Infinity, startRate: 1_000 });
    plant.read(10_000);
    expect(p.update()).toBe(2_000);
    p.congested();
    expect(p.state()).toMatchObject({ rate: 1_000, limiter: 'lag', budgetP99Ms: null });
    p.congested(); // still behind, within the same window: no second cut
    expect(p.state().rate).toBe(1_000);
    for (let i = 0; i < 100; i++) {
      plant.read(10_000);
      p.update();
    }
    expect(p.state().rate).toBeLessThanOrEqual(1_000_000); // an unlimited scan stops at the API's largest rate
  });

  it('cuts on a reading that says a processor is too busy to answer (overloaded), and ignores it without a budget', () => {
    const plant = new Plant();
    const p = pacer(plant, { cap: 100_000 });
    for (let i = 0; i < 5; i++) {
      plant.read(120);
      p.update();
    }
    expect(p.state()).toMatchObject({ rate: 1_600, limiter: 'ramp' });
    plant.now += 1_000;
    plant.reading = { at: plant.now, p99Ms: 120, overloaded: true }; // its p99 looks fine; another processor timed out
    expect(p.update()).toBe(800);
    expect(p.state().limiter).toBe('budget');

    const off = new Plant();
    const unbudgeted = pacer(off, { cap: 100_000, budget: { off: true } });
    off.read(120);
    unbudgeted.update();
    off.now += 1_000;
    off.reading = { at: off.now, p99Ms: null, overloaded: true };
    expect(unbudgeted.update()).toBe(200); // no budget: only the cap and the lag pause hold it
  });
});
