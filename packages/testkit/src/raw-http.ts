import { connect } from 'node:net';

export interface RawHttpAnswer {
  /** The status of the answer, null when the server closed without one. */
  status: number | null;
  /** The answer's body (after the blank line), as text. */
  body: string;
}

/**
 * Writes `request` as it is to the server at `base` (http://host:port), with no client in between
 * to validate or complete it, and resolves once the server closes the connection. A request left
 * unfinished stays so: this is how a test plays a slow or stalled client.
 */
export function rawHttp(base: string, request: string): Promise<RawHttpAnswer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined); // a reset after the answer: what arrived still counts
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const status = text.startsWith('HTTP/1.1 ') ? Number(text.slice(9, 12)) : null;
      const blank = text.indexOf('\r\n\r\n');
      resolve({ status, body: blank < 0 ? '' : text.slice(blank + 4) });
    });
    socket.write(request);
  });
}
