import { randomUUID } from 'node:crypto';
import type { ScanView } from '../scans/scan-view';
import { ScannerError, type FieldIssue } from '../errors';

/**
 * The API answered with an error body, or could not be reached. `code` and `message` are the
 * API's own (its lower_snake codes), or `unreachable` / `bad_response`.
 */
export class ApiError extends ScannerError<string> {
  override readonly name = 'ApiError';
  declare readonly issues: FieldIssue[];
  constructor(
    readonly status: number | null,
    code: string,
    message: string,
    issues: FieldIssue[] = [],
  ) {
    super(code, message, { issues });
  }
}

/** A thin client of the scan API over fetch. The token goes in a header and nowhere else. */
export class ScannerClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  /**
   * Queues a scan with an Idempotency-Key of its own, and sends it again with the same key when the
   * scanner could not be reached (a timeout, a dropped connection: the first may have been queued),
   * up to three times: the scanner answers a repeat with the scan the first one queued.
   */
  async createScan(body: unknown, key: string = randomUUID(), retryDelaysMs = [1_000, 3_000]): Promise<ScanView> {
    for (let attempt = 0; ; attempt++) {
      try {
        const { scan } = await this.request<{ scan: ScanView }>('POST', '/scans', body, { 'idempotency-key': key });
        return scan;
      } catch (err) {
        const delay = retryDelaysMs[attempt];
        if (!(err instanceof ApiError) || err.code !== 'unreachable' || delay === undefined) throw err;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  getScan(id: string): Promise<ScanView> {
    return this.request<ScanView>('GET', `/scans/${encodeURIComponent(id)}`);
  }

  private async request<T>(
    method: string,
    path: string,
    body?: unknown,
    extra: Record<string, string> = {},
  ): Promise<T> {
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
        signal: AbortSignal.timeout(30_000),
      });
    } catch (err) {
      const c = (err as { cause?: { code?: string; message?: string } }).cause;
      const cause = c?.code ?? c?.message ?? (err as Error).message;
      throw new ApiError(null, 'unreachable', `cannot reach the scanner at ${this.baseUrl} (${cause})`);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ApiError(res.status, 'bad_response', `the scanner answered ${res.status} with a body that is not JSON`);
    }
    if (!res.ok) {
      const e = json as { error?: string; message?: string; issues?: Array<{ path: string; message: string }> };
      throw new ApiError(res.status, e.error ?? 'error', e.message ?? `HTTP ${res.status}`, e.issues ?? []);
    }
    return json as T;
  }
}
