import { DecodeError } from '../src';

export const key = (s: string): Buffer => Buffer.from(s, 'utf8');
export const json = (x: unknown): Buffer => Buffer.from(JSON.stringify(x), 'utf8');

/** Runs `fn`, expects a DecodeError, and returns it for assertions on code and reason. */
export function decodeFailure(fn: () => unknown): DecodeError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DecodeError);
    return err as DecodeError;
  }
  throw new Error('expected a DecodeError, but decoding succeeded');
}
