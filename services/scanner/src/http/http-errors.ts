import { toErrorReply as serviceErrorReply, type ErrorReply } from '@state-relay/service-kit';
import { ERRORS } from '../errors';

// The service kit's error contract (createServiceApp answers every error with it), bound to the
// scanner's table for the tests and modules that call it from here.
export { validationIssues, type ErrorReply } from '@state-relay/service-kit';

/** Every error a request can end in, as {error, message, issues?} with the status from ERRORS. */
export function toErrorReply(err: unknown, bodyLimit: number): ErrorReply {
  return serviceErrorReply(err, ERRORS, bodyLimit);
}
