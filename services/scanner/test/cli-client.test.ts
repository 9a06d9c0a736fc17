import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ScannerClient } from '../src/cli/client';

// The CLI's client against a bare HTTP server: a create carries an Idempotency-Key, and a create
// whose answer never arrived (the connection dropped after the request was read) is sent again
// with the same key, so the scanner can answer it with the scan the first one queued.

describe('ScannerClient.createScan', () => {
  let server: Server;
  let base: string;
  const seen: Array<{ key: string | undefined; body: string }> = [];
  let dropFirst = 0;

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ key: req.headers['idempotency-key'] as string | undefined, body });
        if (dropFirst > 0) {
          dropFirst--;
          req.socket.destroy(); // read, maybe acted on, never answered
          return;
        }
        res.writeHead(202, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ scan: { id: 'scan-1', url: '/scans/scan-1' }, url: '/scans/scan-1' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    seen.length = 0;
    dropFirst = 0;
  });

  it('sends one key per create, and the same key again when the first answer was lost', async () => {
    const client = new ScannerClient(base, 'token-0123456789abcdef');
    dropFirst = 1;
    const scan = await client.createScan({ condition: {}, action: {} }, undefined, [10, 10]);
    expect(scan.id).toBe('scan-1');
    expect(seen).toHaveLength(2);
    expect(seen[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[1]).toEqual(seen[0]);

    await client.createScan({ condition: {}, action: {} });
    expect(seen[2]!.key).not.toBe(seen[0]!.key); // another invocation, another key
  });

  it('gives up after its retries, saying the scanner cannot be reached', async () => {
    const client = new ScannerClient(base, 'token-0123456789abcdef');
    dropFirst = 5;
    await expect(client.createScan({ condition: {}, action: {} }, 'k-1', [5, 5])).rejects.toMatchObject({
      code: 'unreachable',
    });
    expect(seen.map((s) => s.key)).toEqual(['k-1', 'k-1', 'k-1']);
  });
});

describe('ScannerClient: the other routes', () => {
  let server: Server;
  let base: string;
  const seen: Array<{ method: string; url: string; key: string | undefined; body: string }> = [];
  let dropNext = 0;

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, key: req.headers['idempotency-key'] as string, body });
        if (dropNext > 0) {
          dropNext--;
          req.socket.destroy();
          return;
        }
        if (req.method === 'DELETE') return void res.writeHead(204).end();
        if (req.url === '/schedules/gone') {
          res.writeHead(404, { 'content-type': 'application/json' });
          return void res.end(JSON.stringify({ error: 'schedule_not_found', message: 'no schedule with id "gone"' }));
        }
        res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'sch-1', scans: [], schedules: [] }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => void seen.splice(0));

  it('a schedule create carries its own key, sent again when the first answer was lost', async () => {
    const client = new ScannerClient(base, 'token-0123456789abcdef');
    dropNext = 1;
    const body = { name: 'n', interval: 'PT1H', template: { condition: {}, action: {} } };
    await expect(client.createSchedule(body, undefined, [5])).resolves.toMatchObject({ id: 'sch-1' });
    expect(seen.map((s) => [s.method, s.url])).toEqual([
      ['POST', '/schedules'],
      ['POST', '/schedules'],
    ]);
    expect(seen[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[1]).toEqual(seen[0]);
  });

  it('reads and changes go to the documented routes, once each (no retry), and a 204 is no body', async () => {
    const client = new ScannerClient(base, 'token-0123456789abcdef');
    await client.listScans(5, 10);
    await client.listScans();
    await client.cancelScan('a/b');
    await client.setSchedulePaused('s1', true);
    await expect(client.deleteSchedule('s1')).resolves.toBeUndefined();
    await expect(client.getSchedule('gone')).rejects.toMatchObject({
      status: 404,
      code: 'schedule_not_found',
      retriable: false,
    });
    expect(seen.map((s) => `${s.method} ${s.url} ${s.body}`)).toEqual([
      'GET /scans?limit=5&offset=10 ',
      'GET /scans ',
      'POST /scans/a%2Fb/cancel ',
      'PATCH /schedules/s1 {"paused":true}',
      'DELETE /schedules/s1 ',
      'GET /schedules/gone ',
    ]);
    dropNext = 1;
    await expect(client.cancelScan('x')).rejects.toMatchObject({ code: 'unreachable', retriable: true });
    expect(seen).toHaveLength(7);
  });
});
