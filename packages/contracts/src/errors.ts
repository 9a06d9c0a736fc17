import { CodedError } from '@state-relay/rules';

export const DECODE_ERROR_CODES = {
  KEY_MISSING: 'KEY_MISSING',
  KEY_INVALID: 'KEY_INVALID',
  VALUE_MISSING: 'VALUE_MISSING',
  NOT_JSON: 'NOT_JSON',
  SCHEMA_INVALID: 'SCHEMA_INVALID',
  KEY_MISMATCH: 'KEY_MISMATCH',
} as const;
export type DecodeErrorCode = (typeof DECODE_ERROR_CODES)[keyof typeof DECODE_ERROR_CODES];

/**
 * A record that can never be decoded: retrying cannot help, so it goes to the dead-letter
 * topic with `code` and `reason` in its headers. `reason` names the offending field and
 * never quotes the untrusted value.
 */
export class DecodeError extends CodedError<DecodeErrorCode> {
  static readonly codes = DECODE_ERROR_CODES;
  override readonly name = 'DecodeError';
  readonly reason: string;

  constructor(code: DecodeErrorCode, reason: string, cause?: unknown) {
    super(code, `${code}: ${reason}`, { cause });
    this.reason = reason;
  }
}

export function isDecodeError(err: unknown): err is DecodeError {
  return err instanceof DecodeError;
}
