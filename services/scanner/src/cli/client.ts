import { randomUUID } from 'node:crypto';
import type { ScanView } from '../scans/scan-view';
import type { ScheduleView } from '../schedules/schedule-service';
import { ApiError, CLI_CODES } from './errors';
import type { ScanBody, ScheduleBody } from './request-bodies';
import { redactUrl } from './escape';

export interface ScanList {
  scans: ScanView[];
  total: number;
  limit: number;
  offset: number;
}

const RETRY_DELAYS_MS = [1_000, 3_000];

/** A thin client of the scanner's API over fetch. The token goes in a header and nowhere else. */
export class ScannerClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  /** Queues a scan (see `create` for the Idempotency-Key and the retries). */
  async createScan(body: ScanBody, key: string = randomUUID(), retryDelaysMs = RETRY_DELAYS_MS): Promise<ScanView> {
    const { scan } = await this.create<{ scan: ScanView }>('/scans', body, key, retryDelaysMs);
    return scan;
  }

  createSchedule(body: ScheduleBody, key: string = randomUUID(), retryDelaysMs = RETRY_DELAYS_MS) {
    return this.create<ScheduleView>('/schedules', body, key, retryDelaysMs);
  }

  listScans(limit?: number, offset?: number): Promise<ScanList> {
    const query = new URLSearchParams();
    if (limit !== undefined) query.set('limit', String(limit));
    if (offset !== undefined) query.set('offset', String(offset));
    const qs = query.toString();
    return this.request<ScanList>('GET', qs === '' ? '/scans' : `/scans?${qs}`);
  }

  getScan(id: string, signal?: AbortSignal): Promise<ScanView> {
    return this.request<ScanView>('GET', `/scans/${encodeURIComponent(id)}`, undefined, {}, signal);
  }

  cancelScan(id: string): Promise<ScanView> {
    return this.request<ScanView>('POST', `/scans/${encodeURIComponent(id)}/cancel`);
  }

  listSchedules(): Promise<{ schedules: ScheduleView[] }> {
    return this.request('GET', '/schedules');
  }

  getSchedule(id: string): Promise<ScheduleView> {
    return this.request('GET', `/schedules/${encodeURIComponent(id)}`);
  }

  setSchedulePaused(id: string, paused: boolean): Promise<ScheduleView> {
    return this.request('PATCH', `/schedules/${encodeURIComponent(id)}`, { paused });
  }

  async deleteSchedule(id: string): Promise<void> {
    await this.request('DELETE', `/schedules/${encodeURIComponent(id)}`);
  }

  /**
   * Creates with an Idempotency-Key of its own, and sends it again with the same key when the
   * scanner could not be reached (a timeout, a dropped connection: the first may have been
   * acted on), up to three times: the scanner answers a repeat with what the first one created.
   */
  private async create<T>(path: string, body: unknown, key: string, retryDelaysMs: number[]): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.request<T>('POST', path, body, { 'idempotency-key': key });
      } catch (err) {
        const delay = retryDelaysMs[attempt];
        if (!(err instanceof ApiError) || !err.retriable || delay === undefined) throw err;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  private async request<T>(
    method: string,
    path: string,
    body?: unknown,
    extra: Record<string, string> = {},
    signal?: AbortSignal,
  ): Promise<T> {
    const timeout = AbortSignal.timeout(30_000);
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...extra,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (err) {
      const c = (err as { cause?: { code?: string; message?: string } }).cause;
      const cause = c?.code ?? c?.message ?? (err as Error).message;
      // Never the credentials of a URL (https://user:secret@host): fetch refuses those anyway.
      throw new ApiError(
        null,
        CLI_CODES.UNREACHABLE,
        `cannot reach the scanner at ${redactUrl(this.baseUrl)} (${redactUrl(String(cause))})`,
      );
    }
    const text = await res.text();
    if (res.ok && text === '') return undefined as T; // 204 of DELETE
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ApiError(
        res.status,
        CLI_CODES.BAD_RESPONSE,
        `the scanner answered ${res.status} with a body that is not JSON`,
      );
    }
    if (!res.ok) {
      const e = json as {
        error?: string;
        message?: string;
        issues?: Array<{ path: string; message: string }>;
        issuesOmitted?: number;
      };
      const error = new ApiError(res.status, e.error ?? 'error', e.message ?? `HTTP ${res.status}`, e.issues ?? []);
      error.issuesOmitted = typeof e.issuesOmitted === 'number' ? e.issuesOmitted : 0;
      throw error;
    }
    return json as T;
  }
}
