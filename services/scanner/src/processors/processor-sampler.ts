import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ProcessorPoint, ProcessorSeries } from './processor-series';
import { ProcessorStatusSchema, type ProcessorStatus } from './processor-status';

export interface ProcessorSamplerOptions {
  /** Base URLs of the processor instances (PROCESSOR_URLS). */
  urls: readonly string[];
  /** Sent as the bearer of each processor's GET /status (its STATE_API_TOKEN). */
  token: string;
  /** How long one reading may take; default 800 ms (one a second, never two at once per processor). */
  timeoutMs?: number;
  fetch?: typeof fetch;
  now?: () => number;
}

export const ProcessorInstance = Type.Object({
  url: Type.String({ description: 'As configured in PROCESSOR_URLS' }),
  reachable: Type.Boolean({ description: 'The last reading succeeded' }),
  error: Type.Union([Type.String(), Type.Null()], {
    description: 'Why the last reading failed (timeout, connection refused, HTTP 401, …); null when it succeeded',
  }),
  checkedAt: Type.Union([Type.String(), Type.Null()], {
    description: 'When the last reading ended; null before the first',
  }),
  lastSeenAt: Type.Union([Type.String(), Type.Null()], { description: 'When a reading last succeeded' }),
  status: Type.Union([ProcessorStatusSchema, Type.Null()], {
    description: 'The processor’s GET /status as last read; null while it is unreachable',
  }),
  deadLettersLastMinute: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Dead letters it committed over the last minute (from the readings); null with too few readings',
  }),
  points: Type.Array(ProcessorPoint, { description: 'One a second, the last 5 minutes of readings' }),
});
export type ProcessorInstance = Static<typeof ProcessorInstance>;

const checkStatus = TypeCompiler.Compile(ProcessorStatusSchema);

interface Reading {
  checkedAt: number | null;
  lastSeenAt: number | null;
  error: string | null;
  status: ProcessorStatus | null;
  series: ProcessorSeries;
  busy: boolean;
}

/**
 * Reads each processor's GET /status once a second (tick), for the status page: one origin for
 * the browser, which talks to the scanner only. A processor that is down, slow or answers
 * something else is "unreachable" with the reason; nothing here throws, and GET /status on the
 * scanner only reads what was sampled.
 */
export class ProcessorSampler {
  private readonly readings: Map<string, Reading>;
  /** When the last tick ended (every processor read or given up on): a pacer acts once per tick. */
  private lastTickAt: number | null = null;

  constructor(private readonly options: ProcessorSamplerOptions) {
    this.readings = new Map(
      options.urls.map((url) => [
        url,
        { checkedAt: null, lastSeenAt: null, error: null, status: null, series: new ProcessorSeries(), busy: false },
      ]),
    );
  }

  /** One reading of every processor, in parallel; one still reading is skipped this time. */
  async tick(): Promise<void> {
    await Promise.all([...this.readings].map(([url, r]) => this.sample(url, r)));
    this.lastTickAt = this.now();
  }

  /**
   * The event commit p99 (events only) of each processor whose last reading succeeded and carries
   * it, as of the last tick; undefined before the first tick.
   */
  eventLatency(): { at: number; p99Ms: Array<number | null>; timedOut: number } | undefined {
    if (this.lastTickAt === null) return undefined;
    const p99Ms: Array<number | null> = [];
    let timedOut = 0;
    for (const r of this.readings.values()) {
      if (r.error === 'timeout') timedOut++;
      const latency = r.error === null ? r.status?.eventCommitLatency : undefined;
      if (latency !== undefined) p99Ms.push(latency.p99Ms);
    }
    return { at: this.lastTickAt, p99Ms, timedOut };
  }

  /** Per processor, its event p99 readings from `from` to `to` (scanner clock). */
  eventP99History(from: number, to: number): number[][] {
    return [...this.readings.values()].map((r) => r.series.eventP99Between(from, to));
  }

  view(): ProcessorInstance[] {
    const now = this.now();
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
    return [...this.readings].map(([url, r]) => ({
      url,
      reachable: r.error === null && r.status !== null,
      error: r.error,
      checkedAt: iso(r.checkedAt),
      lastSeenAt: iso(r.lastSeenAt),
      status: r.error === null ? r.status : null,
      deadLettersLastMinute: r.series.deadLettersLastMinute(now),
      points: r.series.points(),
    }));
  }

  private async sample(url: string, r: Reading): Promise<void> {
    if (r.busy) return;
    r.busy = true;
    try {
      const status = await this.read(url);
      const at = this.now();
      r.series.add(at, status);
      Object.assign(r, { status, error: null, checkedAt: at, lastSeenAt: at });
    } catch (err) {
      Object.assign(r, { error: reason(err), checkedAt: this.now() });
    } finally {
      r.busy = false;
    }
  }

  private async read(url: string): Promise<ProcessorStatus> {
    const res = await (this.options.fetch ?? fetch)(new URL('status', withSlash(url)), {
      headers: { accept: 'application/json', authorization: `Bearer ${this.options.token}` },
      redirect: 'error',
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 800),
    });
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw new Error(`HTTP ${res.status}`);
    }
    const body: unknown = await res.json().catch(() => undefined);
    if (!checkStatus.Check(body)) throw new Error('not a processor status (GET /status answered something else)');
    return body;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

/** A base URL with a path keeps it: http://host/proc + status → http://host/proc/status. */
const withSlash = (url: string) => (url.endsWith('/') ? url : `${url}/`);

/** A short reason for the page: never a stack, never the token. */
function reason(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timeout';
  if (e.cause?.code) return e.cause.code === 'ECONNREFUSED' ? 'connection refused' : e.cause.code;
  return (e.message ?? String(err)).slice(0, 200);
}
