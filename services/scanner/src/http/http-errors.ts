import { toErrorReply as serviceErrorReply, type ErrorReply } from '@state-relay/service-kit';
import { ERRORS } from '../errors';

// The error contract moved to the service kit (createServiceApp answers every error with it);
// these keep the scanner's table bound for the tests and modules that call them from here.
export { validationIssues, type ErrorReply } from '@state-relay/service-kit';

/** Every error a request can end in, as {error, message, issues?} with the status from ERRORS. */
export function toErrorReply(err: unknown, bodyLimit: number): ErrorReply {
  return serviceErrorReply(err, ERRORS, bodyLimit);
}
