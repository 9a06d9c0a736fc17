import type { FastifyInstance } from 'fastify';
import { buildApp as buildProcessorApp } from '../../services/processor/src/http/app';
import { createProcessorMetrics } from '../../services/processor/src/metrics';
import { buildApp as buildScannerApp } from '../../services/scanner/src/http/app';
import { createLogger } from '../../services/scanner/src/logger';
import { createScannerMetrics } from '../../services/scanner/src/metrics';
import type { ScanService } from '../../services/scanner/src/scans/scan-service';
import type { ScheduleService } from '../../services/scanner/src/schedules/schedule-service';

// Every number a request may carry, on any route of either service, has a documented range: a
// minimum and a maximum in its schema, so the OpenAPI document shows it and validation enforces it.

interface OpenApi {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, unknown> };
}
interface Operation {
  parameters?: Array<{ in: string; name: string; schema?: unknown }>;
  requestBody?: { content: Record<string, { schema: unknown }> };
}

/**
 * The rule language's components: their numbers are data (operands compared with entity fields,
 * values written to them), judged by the rules package, which bounds the one number it computes
 * with (a `$ago` duration, RULE_LIMITS.maxDurationDays).
 */
const RULE_LANGUAGE = new Set(['Condition', 'Action']);

/** The numeric request inputs of `doc`, by where they are, split by whether both bounds are there. */
function numericInputs(doc: OpenApi): { bounded: string[]; unbounded: string[] } {
  const out = { bounded: [] as string[], unbounded: [] as string[] };
  const visit = (schema: unknown, at: string, seen: ReadonlySet<string>): void => {
    if (typeof schema !== 'object' || schema === null) return;
    const node = schema as Record<string, unknown>;
    if (typeof node.$ref === 'string') {
      const name = node.$ref.replace('#/components/schemas/', '');
      if (RULE_LANGUAGE.has(name) || seen.has(name)) return;
      return visit(doc.components?.schemas?.[name], `${at}→${name}`, new Set([...seen, name]));
    }
    const types = [node.type].flat();
    const isNumber = types.includes('number') || types.includes('integer');
    if (isNumber && node.enum === undefined && node.const === undefined) {
      const bounded = typeof node.minimum === 'number' && typeof node.maximum === 'number';
      out[bounded ? 'bounded' : 'unbounded'].push(at);
    }
    for (const [key, value] of Object.entries(node)) visit(value, `${at}/${key}`, seen);
  };
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      const route = `${method.toUpperCase()} ${path}`;
      for (const p of op.parameters ?? []) visit(p.schema, `${route} ${p.in} ${p.name}`, new Set());
      for (const [type, { schema }] of Object.entries(op.requestBody?.content ?? {}))
        visit(schema, `${route} body(${type})`, new Set());
    }
  }
  return out;
}

async function openApiOf(app: FastifyInstance): Promise<OpenApi> {
  // Over a socket (light-my-request's inject needs ESM that jest does not load here).
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  return (await (await fetch(`${base}/openapi.json`)).json()) as OpenApi;
}

describe('every numeric request input has a minimum and a maximum in the OpenAPI document', () => {
  const apps: FastifyInstance[] = [];
  afterAll(async () => {
    for (const app of apps) await app.close();
  });
  const never = () => {
    throw new Error('not called');
  };

  it('scanner', async () => {
    const app = buildScannerApp({
      scans: { create: never, list: never, get: never, cancel: never } as unknown as ScanService,
      replica: { ready: true, lag: () => [] },
      metrics: createScannerMetrics(),
      logger: createLogger('silent'),
      apiToken: 'test-token-0123456789abcdef',
      maxBodyBytes: 65_536,
      schedules: { create: never } as unknown as ScheduleService,
    });
    apps.push(app);
    const { bounded, unbounded } = numericInputs(await openApiOf(app));
    expect(unbounded).toEqual([]);
    // The walk reaches the inputs it guards (a walk that found nothing would pass as well).
    for (const input of ['/asOf/', '/options/properties/rate/', '/maxCommands', 'query limit', 'query offset'])
      expect(bounded.some((at) => at.includes(input))).toBe(true);
    expect(bounded.some((at) => at.startsWith('POST /schedules ') && at.includes('/template/'))).toBe(true);
  });

  it('processor', async () => {
    const app = buildProcessorApp({
      processor: { isReady: true, tasks: { owned: [], read: async () => undefined } as never },
      metrics: createProcessorMetrics(),
      logger: createLogger('silent'),
      stateAuth: { kind: 'bearer', token: 'processor-state-token-7f3a9c2e51' },
    });
    apps.push(app);
    const doc = await openApiOf(app);
    expect(Object.keys(doc.paths)).toContain('/state/{key}');
    expect(numericInputs(doc).unbounded).toEqual([]);
  });

  it('the walk finds an unbounded number in a parameter, a body and a referenced component', () => {
    const doc: OpenApi = {
      paths: {
        '/x': {
          get: { parameters: [{ in: 'query', name: 'n', schema: { type: 'integer', minimum: 0 } }] },
          post: {
            requestBody: {
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: {
                      a: { anyOf: [{ type: 'string' }, { type: 'number', maximum: 1 }] },
                      b: { $ref: '#/components/schemas/B' },
                      c: { $ref: '#/components/schemas/Condition' },
                      d: { type: 'integer', minimum: 1, maximum: 2 },
                    },
                  },
                },
              },
            },
          },
        },
      },
      components: {
        schemas: { B: { type: 'array', items: { type: ['integer', 'null'] } }, Condition: { type: 'number' } },
      },
    };
    expect(numericInputs(doc)).toEqual({
      bounded: ['POST /x body(application/json)/properties/d'],
      unbounded: [
        'GET /x query n',
        'POST /x body(application/json)/properties/a/anyOf/1',
        'POST /x body(application/json)/properties/b→B/items',
      ],
    });
  });
});
