import { waitUntil } from '@state-relay/testkit';
import { API_TOKEN } from './stack';

/** The scan as GET /scans/:id shows it (the fields these tests read). */
export interface ScanView {
  id: string;
  status: 'pending' | 'running' | 'completed' | 'cancelled' | 'failed';
  phase: string | null;
  counts: { scanned: number; matched: number; emitted: number; pending: number; results: Record<string, number> };
  error: string | null;
}

export interface ApiResponse {
  status: number;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** A thin client of the scanner's HTTP API; the URL is read on every call (it survives restarts). */
export class ScannerApi {
  constructor(private readonly url: () => string) {}

  async call(method: string, path: string, body?: unknown, token: string | null = API_TOKEN): Promise<ApiResponse> {
    const headers: Record<string, string> = {};
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.url()}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      // Bounded: a scanner off the network (a partition) can leave a request hanging for minutes.
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, text, json };
  }

  async create(body: unknown): Promise<ScanView> {
    const res = await this.call('POST', '/scans', body);
    if (res.status !== 202) throw new Error(`POST /scans answered ${res.status}: ${res.text}`);
    return res.json.scan as ScanView;
  }

  /**
   * Creates a scan while faults may cut the scanner off: a request that fails without an answer
   * (refused, reset, timed out) may or may not have queued the scan, so before trying again the
   * scan is looked for among the newest by its `asOf`, which the caller makes unique (epoch ms).
   */
  async createDuringFaults(body: { asOf: number; [field: string]: unknown }, timeoutMs = 180_000): Promise<ScanView> {
    const deadline = Date.now() + timeoutMs;
    for (let attempt = 1; ; attempt++) {
      try {
        if (attempt > 1) {
          const listed = await this.call('GET', '/scans?limit=20');
          const found = listed.status === 200 ? (listed.json.scans as (ScanView & { asOf: string })[]) : undefined;
          const created = found?.find((s) => Date.parse(s.asOf) === body.asOf);
          if (created) return created;
          if (listed.status !== 200) throw new Error(`GET /scans answered ${listed.status}: ${listed.text}`);
        }
        return await this.create(body);
      } catch (err) {
        // An HTTP answer other than 202 is the scanner's verdict, not a lost request.
        if (err instanceof Error && /answered \d+/.test(err.message) && !/answered 5\d\d/.test(err.message)) throw err;
        if (Date.now() > deadline) throw err;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  }

  async get(id: string): Promise<ScanView> {
    const res = await this.call('GET', `/scans/${id}`);
    if (res.status !== 200) throw new Error(`GET /scans/${id} answered ${res.status}: ${res.text}`);
    return res.json as ScanView;
  }

  /** Polls until `probe` holds (fails early if the scan ends otherwise); tolerates a scanner that is down meanwhile. */
  async waitFor(id: string, probe: (s: ScanView) => boolean, what: string, timeoutMs = 240_000): Promise<ScanView> {
    let last: ScanView | undefined;
    const seen = await waitUntil(
      async () => {
        last = await this.get(id);
        return probe(last) || ['completed', 'failed', 'cancelled'].includes(last.status) ? last : undefined;
      },
      { timeoutMs, intervalMs: 250, message: `${what} (scan ${id})` },
    ).catch((err: Error) => {
      throw new Error(`${err.message}; last seen: ${JSON.stringify(last)}`);
    });
    if (!probe(seen))
      throw new Error(`scan ${id} ended ${seen.status} while waiting for ${what}: ${JSON.stringify(seen)}`);
    return seen;
  }
}
