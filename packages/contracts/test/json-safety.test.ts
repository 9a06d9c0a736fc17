import { decodeCommand, decodeEvent, decodeStoredEntity, encodeJson, MAX_JSON_DEPTH, MAX_VALUE_BYTES } from '../src';
import { decodeFailure, key } from './helpers';

const raw = (text: string): Buffer => Buffer.from(text, 'utf8');

describe('JSON safety shared by every decoder', () => {
  it('rejects a `__proto__` key at any depth with SCHEMA_INVALID, naming where it is', () => {
    const top = decodeFailure(() => decodeEvent(key('k'), raw('{"type":"t","at":1,"__proto__":{"polluted":true}}')));
    expect(top.code).toBe('SCHEMA_INVALID');
    expect(top.reason).toBe('value.__proto__: forbidden key');

    const deep = decodeFailure(() =>
      decodeStoredEntity(key('k'), raw('{"version":1,"seen":"","value":{"a":[{"__proto__":{"x":1}}]}}')),
    );
    expect(deep.reason).toBe('value.value.a[0].__proto__: forbidden key');

    const inCondition = decodeFailure(() =>
      decodeCommand(
        key('k'),
        raw(
          '{"commandId":"c","scanId":"s","key":"k","asOf":1,"issuedAt":1,"condition":{},"action":{"set":{"__proto__":{"admin":true}}}}',
        ),
      ),
    );
    expect(inCondition.reason).toBe('value.action.set.__proto__: forbidden key');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('accepts "__proto__" as a string value and other keys that only look dangerous', () => {
    const event = decodeEvent(key('k'), raw('{"type":"t","at":1,"data":{"note":"__proto__","proto":1}}'));
    expect(event.data).toEqual({ note: '__proto__', proto: 1 });
  });

  it('rejects a value over 1 MiB with SCHEMA_INVALID', () => {
    const big = encodeJson({ type: 't', at: 1, data: { blob: 'x'.repeat(MAX_VALUE_BYTES) } });
    const err = decodeFailure(() => decodeEvent(key('k'), big));
    expect(err.code).toBe('SCHEMA_INVALID');
    expect(err.reason).toBe(`value: ${big.length} bytes exceeds the limit of 1048576 bytes`);
  });

  it('rejects nesting deeper than the limit without overflowing the stack', () => {
    const nest = (depth: number) => raw(`{"type":"t","at":1,"data":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}`);
    expect(decodeEvent(key('k'), nest(MAX_JSON_DEPTH - 2)).type).toBe('t');
    const err = decodeFailure(() => decodeEvent(key('k'), nest(MAX_JSON_DEPTH - 1)));
    expect(err.code).toBe('SCHEMA_INVALID');
    expect(err.reason).toMatch(/^value\.data\.a(\[0\])+: nested deeper than 64 levels$/);
    expect(decodeFailure(() => decodeEvent(key('k'), nest(200_000))).code).toBe('SCHEMA_INVALID');
  });

  it('rejects a value that is not UTF-8 with NOT_JSON', () => {
    const err = decodeFailure(() => decodeEvent(key('k'), Buffer.from([0x7b, 0xff, 0x7d])));
    expect(err.code).toBe('NOT_JSON');
    expect(err.reason).toBe('value: not valid UTF-8');
  });

  it('refuses to encode a value JSON cannot represent', () => {
    expect(() => encodeJson(undefined as unknown as object)).toThrow(TypeError);
  });
});
