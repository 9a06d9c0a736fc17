import { createServer } from 'node:net';
import { ephemeralRange, freePort } from '../src';

describe('freePort', () => {
  it('hands out a port below the ephemeral range that can be listened on, and different ports over calls', async () => {
    const [first] = ephemeralRange();
    const ports = new Set<number>();
    for (let i = 0; i < 20; i++) {
      const port = await freePort();
      expect(port).toBeLessThan(first);
      expect(port).toBeGreaterThanOrEqual(20_000);
      ports.add(port);
    }
    expect(ports.size).toBeGreaterThan(10);
    const port = await freePort();
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '0.0.0.0', resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  });

  it('reads the kernel range, and falls back to Linux defaults on what it cannot read', () => {
    expect(ephemeralRange(() => '32768\t60999\n')).toEqual([32768, 60999]);
    expect(ephemeralRange(() => '40000 50000')).toEqual([40000, 50000]);
    expect(ephemeralRange(() => 'garbage')).toEqual([32768, 60999]);
    expect(
      ephemeralRange(() => {
        throw new Error('ENOENT');
      }),
    ).toEqual([32768, 60999]);
  });
});
