import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Ports start here, below the kernel's ephemeral range, so no socket bound to port 0 can take a
 * container's published port while a restart has released it. See DECISIONS.md, "Test ports".
 */
const LOW = 20_000;

/** The kernel's ephemeral port range, [first, last]; Linux's default where it cannot be read. */
export function ephemeralRange(
  read: () => string = () => readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8'),
): [number, number] {
  try {
    const [first, last] = read().trim().split(/\s+/).map(Number);
    if (Number.isInteger(first) && Number.isInteger(last) && first! > 0 && last! >= first!) return [first!, last!];
  } catch {
    // not Linux, or /proc not mounted
  }
  return [32768, 60999];
}

/** Whether `port` can be bound on `host` right now. */
function bindable(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * A TCP port that is free on 0.0.0.0 and 127.0.0.1 right now, chosen at random below the
 * kernel's ephemeral range (so no socket bound to port 0 is given it later); from the kernel
 * (port 0) when no such port is found.
 */
export async function freePort(): Promise<number> {
  const [first] = ephemeralRange();
  const high = Math.min(first, 32768) - 1;
  if (high - LOW > 1000) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = LOW + Math.floor(Math.random() * (high - LOW));
      if ((await bindable(port, '0.0.0.0')) && (await bindable(port, '127.0.0.1'))) return port;
    }
  }
  return kernelPort();
}

function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
