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
    await expect(client.createScan({}, 'k-1', [5, 5])).rejects.toMatchObject({ code: 'unreachable' });
    expect(seen.map((s) => s.key)).toEqual(['k-1', 'k-1', 'k-1']);
  });
});
