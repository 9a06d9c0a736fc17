import { INTERNAL_CODES, ScannerError } from '../errors';

/** Bad flags or arguments (exit 2); the message says which and why. Never contains the token. */
export class UsageError extends ScannerError<typeof INTERNAL_CODES.USAGE_INVALID> {
  override readonly name = 'UsageError';
  constructor(message: string) {
    super(INTERNAL_CODES.USAGE_INVALID, message);
  }
}
