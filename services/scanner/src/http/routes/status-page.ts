import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';

/** ui/index.html: three levels up from src/http/routes (tests) and dist/http/routes (repo build, image /app/dist). */
export const STATUS_PAGE_PATH = join(__dirname, '../../../ui/index.html');

/**
 * The operator status page at `/`: one self-contained file, read once when the app is built.
 * The page itself is open (it asks for the token and sends it only as a bearer header); a CSP
 * with the hashes of its one inline script and style lets nothing else run or load.
 */
export async function statusPageRoutes(app: FastifyInstance, opts: { path?: string } = {}): Promise<void> {
  const html = readFileSync(opts.path ?? STATUS_PAGE_PATH, 'utf8');
  const csp = [
    "default-src 'none'",
    `script-src '${inlineHash(html, 'script')}'`,
    `style-src '${inlineHash(html, 'style')}'`,
    "connect-src 'self'",
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');

  app.get(
    '/',
    { schema: { hide: true, response: { 200: Type.String({ description: 'The status page (HTML)' }) } } },
    async (_request, reply) =>
      reply
        .header('content-type', 'text/html; charset=utf-8')
        .header('cache-control', 'no-cache')
        .header('content-security-policy', csp)
        .header('x-content-type-options', 'nosniff')
        .send(html),
  );
}

/** sha256-… of the text between the page's one <tag> and </tag>. */
function inlineHash(html: string, tag: 'script' | 'style'): string {
  const match = new RegExp(`<${tag}[^>]*>([\\s\\S]*?)</${tag}>`).exec(html);
  return `sha256-${createHash('sha256')
    .update(match?.[1] ?? '', 'utf8')
    .digest('base64')}`;
}
