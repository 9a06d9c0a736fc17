import { TypeCompiler } from '@sinclair/typebox/compiler';
import { createProcessorMetrics } from '../../processor/src/metrics';
import { CommitLatencyWindow } from '../../processor/src/status/commit-latency-window';
import { processorStatus } from '../../processor/src/status/processor-status';
import { RestoreProgress } from '../../processor/src/status/restore-progress';
import { EventLatencySignal } from '../src/processors/event-latency';
import { ProcessorSampler } from '../src/processors/processor-sampler';
import { ProcessorSeries } from '../src/processors/processor-series';
import { ProcessorStatusSchema, type ProcessorStatus } from '../src/processors/processor-status';

// The scanner's view of the processors for the status page: each instance's GET /status read
// once a second, kept as a bounded series, charted as rates; a processor down is "unreachable".

function status(over: Partial<ProcessorStatus> = {}, counts = { applied: 0, events: 0, dead: 0 }): ProcessorStatus {
  return {
    at: '2026-12-01T00:00:00.000Z',
    instanceId: 'a1',
    ready: true,
    tasks: [{ task: 0, state: 'RUNNING' }],
    restores: { inProgress: [], last: [] },
    commitLatency: { windowSeconds: 10, count: 5, p50Ms: 12, p99Ms: 80 },
    commands: { applied: counts.applied, condition_false: 1 },
    events: { changed: counts.events },
    deadLetters: { total: counts.dead, byCode: counts.dead ? { NOT_JSON: counts.dead } : {} },
    consumerLag: [{ topic: 'events', partition: 0, lag: 0 }],
    ...over,
  };
}

/** A reading taken at `at` ms, by both the scanner's and the processor's clock. */
function reading(
  s: ProcessorSeries,
  at: number,
  over: Partial<ProcessorStatus> = {},
  counts?: Parameters<typeof status>[1],
) {
  s.add(at, status({ at: new Date(at).toISOString(), ...over }, counts));
}

describe('a processor series', () => {
  it('charts commands, applied commands and events per second between readings, with the latency then', () => {
    const s = new ProcessorSeries();
    reading(s, 0, {}, { applied: 0, events: 0, dead: 0 });
    reading(s, 1_000, {}, { applied: 30, events: 100, dead: 0 });
    reading(
      s,
      3_000,
      { commitLatency: { windowSeconds: 10, count: 0, p50Ms: null, p99Ms: null } },
      { applied: 50, events: 100, dead: 0 },
    );
    expect(s.points()).toEqual([
      {
        at: '1970-01-01T00:00:01.000Z',
        commitLatencyP50Ms: 12,
        commitLatencyP99Ms: 80,
        commandsPerSecond: 30,
        appliedPerSecond: 30,
        eventsPerSecond: 100,
      },
      {
        at: '1970-01-01T00:00:03.000Z',
        commitLatencyP50Ms: null,
        commitLatencyP99Ms: null,
        commandsPerSecond: 10,
        appliedPerSecond: 10,
        eventsPerSecond: 0,
      },
    ]);
  });

  it('never charts a negative rate when the processor restarted (its counts start again at 0)', () => {
    const s = new ProcessorSeries();
    reading(s, 0, {}, { applied: 500, events: 900, dead: 0 });
    reading(s, 1_000, {}, { applied: 4, events: 7, dead: 0 });
    expect(s.points()[0]).toMatchObject({ appliedPerSecond: 4, eventsPerSecond: 7 });
  });

  it('measures each rate over at least 500 ms of the processor’s clock, so a delayed reading makes no spike', () => {
    const s = new ProcessorSeries();
    reading(s, 0, {}, { applied: 0, events: 0, dead: 0 });
    // The scanner got the next reading 900 ms late, the one after it only 100 ms later.
    s.add(1_900, status({ at: new Date(1_000).toISOString() }, { applied: 30, events: 0, dead: 0 }));
    s.add(2_000, status({ at: new Date(1_100).toISOString() }, { applied: 50, events: 0, dead: 0 }));
    expect(s.points().map((p) => [p.at, p.appliedPerSecond])).toEqual([
      ['1970-01-01T00:00:01.900Z', 30], // 30 over the processor's 1 s
      ['1970-01-01T00:00:02.000Z', 45.5], // 50 over 1.1 s, not 20 over 0.1 s
    ]);
  });

  it('keeps a bounded number of readings, the newest', () => {
    const s = new ProcessorSeries(5);
    for (let i = 0; i < 20; i++) reading(s, i * 1_000, {}, { applied: i, events: 0, dead: 0 });
    const points = s.points();
    expect(points).toHaveLength(4);
    expect(points.at(-1)!.at).toBe(new Date(19_000).toISOString());
  });

  it('counts the dead letters of the last minute from the readings', () => {
    const s = new ProcessorSeries();
    expect(s.deadLettersLastMinute(0)).toBeNull();
    for (const [at, dead] of [
      [0, 2],
      [10_000, 2],
      [20_000, 5],
      [40_000, 5],
      [70_000, 6],
    ] as const)
      reading(s, at, {}, { applied: 0, events: 0, dead });
    expect(s.deadLettersLastMinute(70_000)).toBe(4); // from the reading at 10 s, where the minute starts
    expect(s.deadLettersLastMinute(85_000)).toBe(1); // from 20 s: 5 → 6
  });
});

/** A fetch answering per URL: a status, an HTTP status, a hang (until aborted) or a refused connection. */
function fakeFetch(answers: Record<string, () => unknown>): typeof fetch {
  return (async (input: URL, init?: RequestInit) => {
    const answer = answers[String(input)]?.();
    if (answer === 'hang')
      return new Promise((_, reject) =>
        init!.signal!.addEventListener('abort', () => reject(init!.signal!.reason as Error)),
      );
    if (answer === 'refused') throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
    if (typeof answer === 'number') return new Response('{}', { status: answer });
    return Response.json(answer);
  }) as typeof fetch;
}

describe('the processor sampler', () => {
  it('reads every processor with the token, and shows each reachable or why not, without throwing', async () => {
    let now = 1_000;
    const seen: string[] = [];
    const answers: Record<string, () => unknown> = {
      'http://p1:8080/status': () =>
        status({ at: new Date(now).toISOString() }, { applied: now / 100, events: 0, dead: 0 }),
      'http://p2:8080/prefix/status': () => 401,
      'http://p3:8080/status': () => 'hang',
      'http://p4:8080/status': () => 'refused',
      'http://p5:8080/status': () => ({ hello: 'world' }),
    };
    const base = fakeFetch(answers);
    const sampler = new ProcessorSampler({
      urls: ['http://p1:8080', 'http://p2:8080/prefix', 'http://p3:8080', 'http://p4:8080', 'http://p5:8080'],
      token: 'processor-token-0123456789',
      timeoutMs: 50,
      now: () => now,
      fetch: (async (input: URL, init?: RequestInit) => {
        seen.push(new Headers(init?.headers).get('authorization')!);
        return base(input, init);
      }) as typeof fetch,
    });
    expect(sampler.view().map((p) => [p.reachable, p.checkedAt])).toEqual(Array(5).fill([false, null]));
    await sampler.tick();
    now = 2_000;
    await sampler.tick();
    expect(seen.every((h) => h === 'Bearer processor-token-0123456789')).toBe(true);
    const view = sampler.view();
    expect(view.map((p) => [p.url, p.reachable, p.error])).toEqual([
      ['http://p1:8080', true, null],
      ['http://p2:8080/prefix', false, 'HTTP 401'],
      ['http://p3:8080', false, 'timeout'],
      ['http://p4:8080', false, 'connection refused'],
      ['http://p5:8080', false, 'not a processor status (GET /status answered something else)'],
    ]);
    expect(view[0]!.status!.instanceId).toBe('a1');
    expect(view[0]!.points).toEqual([expect.objectContaining({ appliedPerSecond: 10, commitLatencyP99Ms: 80 })]);
    expect(view[0]!.lastSeenAt).toBe(new Date(2_000).toISOString());
    expect(view[3]!).toMatchObject({ status: null, lastSeenAt: null, points: [] });
  });

  it('shows a processor that went down as unreachable, keeping its series', async () => {
    let up = true;
    let now = 0;
    const sampler = new ProcessorSampler({
      urls: ['http://p1:8080'],
      token: 'processor-token-0123456789',
      now: () => now,
      fetch: fakeFetch({
        'http://p1:8080/status': () => (up ? status({ at: new Date(now).toISOString() }) : 'refused'),
      }),
    });
    await sampler.tick();
    now = 1_000;
    await sampler.tick();
    up = false;
    now = 2_000;
    await sampler.tick();
    const [p] = sampler.view();
    expect(p).toMatchObject({ reachable: false, error: 'connection refused', status: null });
    expect(p!.lastSeenAt).toBe(new Date(1_000).toISOString());
    expect(p!.points).toHaveLength(1);
  });

  it('never reads the same processor twice at once', async () => {
    let calls = 0;
    let release = () => {};
    const sampler = new ProcessorSampler({
      urls: ['http://p1:8080'],
      token: 'processor-token-0123456789',
      fetch: (async () => {
        calls++;
        await new Promise<void>((res) => (release = res));
        return Response.json(status());
      }) as unknown as typeof fetch,
    });
    const first = sampler.tick();
    await sampler.tick(); // skipped: the first is still reading
    release();
    await first;
    expect(calls).toBe(1);
  });
});

describe('the processor status contract', () => {
  it('what the processor answers is what the scanner reads', async () => {
    const metrics = createProcessorMetrics();
    metrics.commands.inc({ outcome: 'applied' }, 3);
    metrics.deadLetters.inc({ code: 'NOT_JSON' });
    const restores = new RestoreProgress();
    restores.begin(0, null, 10n);
    const answered = await processorStatus({
      instanceId: 'a1',
      ready: true,
      tasks: { owned: [0], stateOf: () => 'RESTORING' },
      restores,
      commitLatency: new CommitLatencyWindow(),
      metrics,
      inputLag: async () => [{ topic: 'events', partition: 0, lag: 4 }],
    });
    const check = TypeCompiler.Compile(ProcessorStatusSchema);
    expect([...check.Errors(JSON.parse(JSON.stringify(answered)))]).toEqual([]);
  });
});

describe('the event latency signal a walk is paced by', () => {
  const eventLatency = (p99Ms: number | null) => ({
    windowSeconds: 3,
    count: p99Ms === null ? 0 : 50,
    p50Ms: p99Ms,
    p99Ms,
  });

  it('is the worst processor’s event p99 as of the last tick, leaving out the unreachable and the older ones', async () => {
    let now = 10_000;
    const p99: Record<string, number | null | 'refused' | undefined> = {
      p1: 120,
      p2: 340,
      p3: 'refused',
      p4: undefined,
    };
    const answer = (name: string) => () => {
      const v = p99[name];
      if (v === 'refused') return 'refused';
      // p4 is a processor from before eventCommitLatency: it answers without it.
      return status({
        at: new Date(now).toISOString(),
        ...(v === undefined ? {} : { eventCommitLatency: eventLatency(v) }),
      });
    };
    const sampler = new ProcessorSampler({
      urls: ['http://p1:8080', 'http://p2:8080', 'http://p3:8080', 'http://p4:8080'],
      token: 'processor-token-0123456789',
      now: () => now,
      fetch: fakeFetch({
        'http://p1:8080/status': answer('p1'),
        'http://p2:8080/status': answer('p2'),
        'http://p3:8080/status': answer('p3'),
        'http://p4:8080/status': answer('p4'),
      }),
    });
    const signal = new EventLatencySignal(sampler, { now: () => now });
    expect(signal.latest()).toBeUndefined(); // before the first tick
    await sampler.tick();
    expect(signal.latest()).toEqual({ at: 10_000, p99Ms: 340 });
    p99.p2 = null; // p2's events idle: p1 is the worst
    now = 11_000;
    await sampler.tick();
    expect(signal.latest()).toEqual({ at: 11_000, p99Ms: 120 });
    p99.p1 = null;
    now = 12_000;
    await sampler.tick();
    expect(signal.latest()).toEqual({ at: 12_000, p99Ms: null }); // readings, but no event committed
    now = 15_001;
    expect(signal.latest()).toBeUndefined(); // no tick for 3 s: no reading, not an old one
  });

  it('says a processor whose status read timed out is overloaded, with the others’ p99 beside it', async () => {
    let now = 10_000;
    let p2: 'hang' | number = 'hang';
    const sampler = new ProcessorSampler({
      urls: ['http://p1:8080', 'http://p2:8080'],
      token: 'processor-token-0123456789',
      now: () => now,
      timeoutMs: 20,
      fetch: fakeFetch({
        'http://p1:8080/status': () =>
          status({ at: new Date(now).toISOString(), eventCommitLatency: eventLatency(90) }),
        'http://p2:8080/status': () =>
          p2 === 'hang' ? 'hang' : status({ at: new Date(now).toISOString(), eventCommitLatency: eventLatency(p2) }),
      }),
    });
    const signal = new EventLatencySignal(sampler, { now: () => now });
    await sampler.tick();
    expect(signal.latest()).toEqual({ at: 10_000, p99Ms: 90, overloaded: true });
    p2 = 150; // answering again: a plain reading
    now = 11_000;
    await sampler.tick();
    expect(signal.latest()).toEqual({ at: 11_000, p99Ms: 150 });
  });

  it('takes the baseline as the median of each processor’s readings over the last 30 s, then the worst', async () => {
    let now = 0;
    let values = { p1: 100, p2: 200 };
    const sampler = new ProcessorSampler({
      urls: ['http://p1:8080', 'http://p2:8080'],
      token: 'processor-token-0123456789',
      now: () => now,
      fetch: fakeFetch({
        'http://p1:8080/status': () =>
          status({ at: new Date(now).toISOString(), eventCommitLatency: eventLatency(values.p1) }),
        'http://p2:8080/status': () =>
          status({ at: new Date(now).toISOString(), eventCommitLatency: eventLatency(values.p2) }),
      }),
    });
    const signal = new EventLatencySignal(sampler, { now: () => now });
    expect(signal.baseline()).toBeNull();
    await sampler.tick(); // 40 s before the walk: too old to count
    for (const [at, p2] of [
      [20_000, 120],
      [30_000, 900],
      [40_000, 140],
      [50_000, 130],
    ] as const) {
      now = at;
      values = { p1: 100, p2 };
      await sampler.tick();
    }
    expect(signal.baseline()).toBe(135); // p2's median of 120, 900, 140, 130: one slow second does not set it
  });
});
