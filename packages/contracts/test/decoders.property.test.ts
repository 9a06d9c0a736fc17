import fc from 'fast-check';
import {
  commandIdFor,
  DECODE_ERROR_CODES,
  DecodeError,
  decodeCommand,
  decodeCommandResult,
  decodeEvent,
  decodeStoredEntity,
  encodeCommand,
  encodeCommandResult,
  encodeEvent,
  encodeStoredEntity,
  isSeen,
  seenOf,
  MAX_VALUE_BYTES,
  type CommandResult,
  type DomainEvent,
  type StoredEntity,
  type UpdateCommand,
} from '../src';

// Every decoder is total over (Buffer | null, Buffer | null): it returns a typed value or
// throws a DecodeError with a known code and a non-empty reason. Nothing else may escape
// (a TypeError or RangeError would crash the processor's batch instead of dead-lettering),
// and no input may take long (a hang would stall the partition).

type Decoder = (key: Buffer | null, value: Buffer | null) => unknown;
const DECODERS: Array<[string, Decoder, (v: unknown) => void]> = [
  ['decodeEvent', decodeEvent, expectEvent],
  ['decodeCommand', decodeCommand, expectCommand],
  ['decodeCommandResult', decodeCommandResult, expectResult],
  ['decodeStoredEntity', decodeStoredEntity, expectStoredEntity],
];
const CODES = new Set<string>(Object.values(DECODE_ERROR_CODES));
/**
 * "No hang" is the test's timeout, far above any linear decode of ~1 MiB even on a saturated
 * 2-core machine: a per-decode wall-clock bound failed under CI load (2.7 s for a 200 KB array)
 * and said nothing a benchmark would not.
 */
const HUGE_VALUES_TIMEOUT_MS = 120_000;

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 300);

/** Decodes and checks the outcome; returns the error, if any, for further assertions. */
function decodeChecked(
  name: string,
  decode: Decoder,
  check: (v: unknown) => void,
  key: Buffer | null,
  value: Buffer | null,
): DecodeError | undefined {
  let result: unknown;
  let error: unknown;
  try {
    result = decode(key, value);
  } catch (err) {
    error = err;
  }
  expectPrototypesUntouched();
  if (error === undefined) {
    check(result);
    return undefined;
  }
  if (!(error instanceof DecodeError)) {
    throw new Error(
      `${name} threw ${(error as Error)?.constructor?.name ?? typeof error} instead of a DecodeError: ${String(error)}`,
    );
  }
  expect(CODES.has(error.code)).toBe(true);
  expect(typeof error.reason).toBe('string');
  expect(error.reason.trim().length).toBeGreaterThan(0);
  expect(error.retriable).toBe(false);
  return error;
}

function expectPrototypesUntouched(): void {
  const probe = {} as Record<string, unknown>;
  for (const name of ['polluted', 'admin', 'isAdmin', 'x', 'a']) {
    if (probe[name] !== undefined) throw new Error(`Object.prototype.${name} was set by a decoder`);
  }
  expect(Object.getPrototypeOf(probe)).toBe(Object.prototype);
}

const isPlainObject = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v);
const isShortString = (v: unknown, max: number): boolean => typeof v === 'string' && v.length > 0 && v.length <= max;

function expectEvent(v: unknown): void {
  const e = v as DomainEvent;
  expect(isShortString(e.type, 64)).toBe(true);
  expect(Number.isSafeInteger(e.at) && e.at >= 0).toBe(true);
  expect(isPlainObject(e.data)).toBe(true);
  if (e.id !== undefined) expect(isShortString(e.id, 200)).toBe(true);
  expect(Object.keys(e).every((k) => ['type', 'at', 'data', 'id'].includes(k))).toBe(true);
}

function expectCommand(v: unknown): void {
  const c = v as UpdateCommand;
  expect(isShortString(c.commandId, 200) && isShortString(c.scanId, 200) && typeof c.key === 'string').toBe(true);
  expect(Number.isFinite(c.asOf) && Number.isFinite(c.issuedAt)).toBe(true);
  expect(isPlainObject(c.condition) && isPlainObject(c.action)).toBe(true);
  if (c.expectedVersion !== undefined)
    expect(Number.isSafeInteger(c.expectedVersion) && c.expectedVersion >= 0).toBe(true);
}

function expectResult(v: unknown): void {
  const r = v as CommandResult;
  expect(isShortString(r.commandId, 200) && isShortString(r.scanId, 200)).toBe(true);
  expect(['applied', 'condition_false', 'version_conflict', 'not_found', 'duplicate', 'invalid']).toContain(r.outcome);
  expect(Number.isFinite(r.processedAt)).toBe(true);
}

function expectStoredEntity(v: unknown): void {
  if (v === null) return; // a tombstone
  const s = v as StoredEntity;
  expect(Number.isSafeInteger(s.version) && s.version >= 0).toBe(true);
  expect(isPlainObject(s.value)).toBe(true);
  expect(isSeen(s.seen)).toBe(true);
}

// ---- arbitraries -------------------------------------------------------------------------

/** Keys JavaScript treats specially, and keys that are odd as text. */
const NASTY_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '__defineGetter__',
  '',
  ' ',
  '\u0000',
  '\ud800', // a lone surrogate: valid in JSON text, not in UTF-8 from a well-behaved encoder
  '\u202e',
  '\ufeff',
  'ключ',
  '🔑',
  'a.b',
  '$ago',
];
const oddKey = fc.oneof(
  fc.constantFrom(...NASTY_KEYS),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ maxLength: 6 }),
);
const oddJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(null, true, false, 0, -0, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 1.5, -1, '', '__proto__'),
    fc.string({ unit: 'binary', maxLength: 20 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(oddKey, tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** Builds JSON text by hand, so keys such as "__proto__" really appear in it. */
function jsonText(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(jsonText).join(',')}]`;
  if (isPlainObject(v)) {
    return `{${Object.entries(v as object)
      .map(([k, x]) => `${JSON.stringify(k)}:${jsonText(x)}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** JSON the decoders accept: no "__proto__" key (rejected on purpose, see the odd-keys property). */
const safeJson = (maxDepth: number) =>
  fc.jsonValue({ maxDepth }).filter((v) => !JSON.stringify(v).includes('"__proto__"'));
const safeKey = fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== '__proto__');

const validEvent: fc.Arbitrary<DomainEvent> = fc.record(
  {
    type: fc.constantFrom('signed_up', 'activity', 'payment', 'closed', 'x'),
    at: fc.nat({ max: 4_102_444_800_000 }),
    data: fc.dictionary(safeKey, safeJson(2)) as fc.Arbitrary<DomainEvent['data']>,
    id: fc.string({ minLength: 1, maxLength: 30 }),
  },
  { requiredKeys: ['type', 'at', 'data'] },
);
const entityKey = fc
  .string({ minLength: 1, maxLength: 40 })
  .filter((k) => Buffer.byteLength(k) <= 512 && !/[\ud800-\udfff]/.test(k));
const validCommand: fc.Arbitrary<UpdateCommand> = fc
  .record({
    scanId: fc.string({ minLength: 1, maxLength: 40 }),
    key: entityKey,
    asOf: fc.nat(),
    issuedAt: fc.nat(),
    condition: fc.constant({ field: 'status', op: 'eq', value: 'active' }),
    action: fc.constant({ domain: 'mark_dormant' }),
    expectedVersion: fc.option(fc.nat(), { nil: undefined }),
  })
  .map(({ expectedVersion, ...c }) => ({
    commandId: commandIdFor(c.scanId, c.key),
    ...c,
    ...(expectedVersion !== undefined ? { expectedVersion } : {}),
  })) as fc.Arbitrary<UpdateCommand>;
const validResult: fc.Arbitrary<CommandResult> = fc.record({
  commandId: fc.string({ minLength: 1, maxLength: 32 }),
  scanId: fc.string({ minLength: 1, maxLength: 32 }),
  key: entityKey,
  outcome: fc.constantFrom('applied', 'condition_false', 'version_conflict', 'not_found', 'duplicate', 'invalid'),
  processedAt: fc.nat(),
}) as fc.Arbitrary<CommandResult>;
const validEntity: fc.Arbitrary<StoredEntity> = fc.record({
  version: fc.nat(),
  value: fc.dictionary(safeKey, safeJson(3)) as fc.Arbitrary<StoredEntity['value']>,
  seen: fc.array(fc.string({ minLength: 1, maxLength: 32 }), { maxLength: 5 }).map(seenOf),
});

/** A valid record with one field replaced by junk, dropped, or joined by an odd key. */
function mutated(record: Record<string, unknown>): fc.Arbitrary<string> {
  const fields = Object.keys(record);
  return fc.oneof(
    fc.tuple(fc.constantFrom(...fields), oddJson).map(([f, junk]) => jsonText({ ...record, [f]: junk })),
    fc.constantFrom(...fields).map((f) => {
      const copy = { ...record };
      delete copy[f];
      return jsonText(copy);
    }),
    fc
      .tuple(oddKey, oddJson)
      .map(([k, junk]) => `${jsonText(record).slice(0, -1)},${JSON.stringify(k)}:${jsonText(junk)}}`),
    fc
      .tuple(fc.constantFrom(...fields), oddKey, oddJson)
      .map(([f, k, junk]) => jsonText({ ...record, [f]: { [k]: junk } })),
    fc.nat({ max: 200 }).map((cut) => jsonText(record).slice(0, cut)), // truncated
  );
}

const anyKey: fc.Arbitrary<Buffer | null> = fc.oneof(
  fc.constant(null),
  fc.uint8Array({ maxLength: 600 }).map((b) => Buffer.from(b)),
  fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => Buffer.from(s, 'utf8')),
  fc.constantFrom(...NASTY_KEYS).map((s) => Buffer.from(s, 'utf8')),
);

const text = (s: string): Buffer => Buffer.from(s, 'utf8');
const recordOf = (x: object): Record<string, unknown> => JSON.parse(JSON.stringify(x)) as Record<string, unknown>;

/** Values of every kind: raw bytes, any JSON, JSON with odd keys, near-valid records of each topic. */
const anyValue: fc.Arbitrary<Buffer | null> = fc.oneof(
  fc.constant(null),
  fc.uint8Array({ maxLength: 2_000 }).map((b) => Buffer.from(b)),
  fc.string({ unit: 'binary', maxLength: 200 }).map(text),
  fc.json().map(text),
  oddJson.map((v) => text(jsonText(v))),
  validEvent.chain((e) => mutated(recordOf(e))).map(text),
  validCommand.chain((c) => mutated(recordOf(c))).map(text),
  validResult.chain((r) => mutated(recordOf(r))).map(text),
  validEntity.chain((s) => mutated(recordOf(s))).map(text),
);

describe.each(DECODERS)('%s on arbitrary input', (name, decode, check) => {
  it('returns a typed value or throws a DecodeError with a code and a reason, nothing else', () => {
    fc.assert(
      fc.property(anyKey, anyValue, (key, value) => {
        decodeChecked(name, decode, check, key, value);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('rejects odd keys anywhere in a value without touching Object.prototype', () => {
    fc.assert(
      fc.property(oddJson, fc.constantFrom('__proto__', 'constructor', 'prototype'), (junk, nasty) => {
        const payload = `{${JSON.stringify(nasty)}:{"polluted":true,"admin":true},"data":{${JSON.stringify(nasty)}:${jsonText(junk)}},"value":{"a":{${JSON.stringify(nasty)}:{"isAdmin":true}}}}`;
        const err = decodeChecked(name, decode, check, text('k'), text(payload));
        if (nasty === '__proto__') expect(err?.code).toBe('SCHEMA_INVALID');
      }),
      { numRuns: 100 },
    );
  });

  it(
    'stays total on huge values, without hanging: long strings, wide objects, deep nesting, over the size limit',
    () => {
      const huge: Array<[string, Buffer]> = [
        [
          'a string just under the limit',
          text(`{"type":"t","at":1,"data":{"s":"${'x'.repeat(MAX_VALUE_BYTES - 100)}"}}`),
        ],
        ['just over the limit', text(`{"s":"${'x'.repeat(MAX_VALUE_BYTES)}"}`)],
        ['100k keys', text(`{${Array.from({ length: 100_000 }, (_, i) => `"k${i}":${i}`).join(',')}}`)],
        ['100k-element array', text(`{"data":{"a":[${Array.from({ length: 100_000 }, () => '0').join(',')}]}}`)],
        ['nesting 300k deep', text(`{"data":${'['.repeat(300_000)}${']'.repeat(300_000)}}`)],
        ['unterminated nesting 500k deep', text(`{"data":${'{"a":'.repeat(100_000)}`)],
        ['1 MiB of invalid UTF-8', Buffer.alloc(MAX_VALUE_BYTES, 0xff)],
        ['a huge number', text(`{"type":"t","at":${'9'.repeat(400)},"version":${'9'.repeat(400)}}`)],
        ['a huge ISO date', text(`{"type":"t","at":"${'9'.repeat(10_000)}-01-01"}`)],
        ['a long almost-ISO string', text(`{"type":"t","at":"2024-01-01T00:00:00.${'1'.repeat(100_000)}Z"}`)],
      ];
      for (const [what, value] of huge) {
        try {
          decodeChecked(name, decode, check, text('k'), value);
        } catch (err) {
          throw new Error(`${what}: ${(err as Error).message}`);
        }
      }
    },
    HUGE_VALUES_TIMEOUT_MS,
  );
});

/** What a value is after a trip through JSON text (-0 becomes 0). */
const viaJson = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

describe('decoders on valid input', () => {
  it('round-trip every valid record through its encoder', () => {
    fc.assert(
      fc.property(validEvent, entityKey, (event, key) => {
        expect(decodeEvent(text(key), encodeEvent(event))).toEqual(viaJson(event));
      }),
      { numRuns: NUM_RUNS },
    );
    fc.assert(
      fc.property(validCommand, (c) => expect(decodeCommand(text(c.key), encodeCommand(c))).toEqual(c)),
      { numRuns: NUM_RUNS },
    );
    fc.assert(
      fc.property(validResult, (r) => expect(decodeCommandResult(text(r.key), encodeCommandResult(r))).toEqual(r)),
      { numRuns: NUM_RUNS },
    );
    fc.assert(
      fc.property(validEntity, entityKey, (s, key) =>
        expect(decodeStoredEntity(text(key), encodeStoredEntity(s))).toEqual(viaJson(s)),
      ),
      { numRuns: NUM_RUNS },
    );
  });
});

describe('DecodeError reasons', () => {
  // The contract (errors.ts, README): a reason names the field and never quotes the untrusted
  // value — it travels in dead-letter headers, logs and metrics labels.
  const secret = fc
    .string({ unit: fc.constantFrom(...'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'), minLength: 12, maxLength: 24 })
    .map((s) => `QZX${s}`);
  const wrap = fc.constantFrom(
    (s: string) => s, // bare text
    (s: string) => `{"type":${s}}`, // an unquoted value
    (s: string) => `{"type":"t","at":1,"data":{"note":"${s}"} trailing`, // good JSON, then junk
    (s: string) => `{"${s}":1,}`, // a trailing comma after the secret
    (s: string) => `[${s}`,
  );

  it.each(DECODERS)('%s: never quotes the value’s text in the reason', (name, decode, check) => {
    fc.assert(
      fc.property(secret, wrap, (s, w) => {
        const err = decodeChecked(name, decode, check, text('k'), text(w(s)));
        expect(err).toBeDefined();
        expect(err!.reason).not.toContain('QZX');
      }),
      { numRuns: 100 },
    );
  });

  it.each(DECODERS)('%s: never quotes a string field’s content', (name, decode, check) => {
    fc.assert(
      fc.property(secret, (s) => {
        // Every field of every topic holds a string that fits none of them (too long / wrong type).
        const long = s.repeat(20);
        const record = {
          type: long.repeat(2),
          at: s,
          data: s,
          id: long,
          commandId: long,
          scanId: long,
          key: s,
          asOf: s,
          issuedAt: s,
          outcome: s,
          processedAt: s,
          version: s,
          value: s,
          seen: long,
          condition: s,
          action: s,
        };
        const err = decodeChecked(name, decode, check, text('k'), text(JSON.stringify(record)));
        expect(err!.reason).not.toContain('QZX');
      }),
      { numRuns: 50 },
    );
  });
});
