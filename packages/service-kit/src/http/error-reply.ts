import type { FastifyError } from 'fastify';
import { describeIssues, ServiceError, type ErrorTable, type FieldIssue } from '../errors';

export interface ErrorBody {
  error: string;
  message: string;
  issues?: FieldIssue[];
  /** How many issues there were beyond the MAX_ISSUES_LISTED listed; absent when all are. */
  issuesOmitted?: number;
}

/**
 * The most issues an error body lists. A 64 KB body of 10,900 bad numbers had 10,900 issues, a
 * 938 KB answer: a client needs the first few to fix its request, and the count of the rest.
 */
export const MAX_ISSUES_LISTED = 20;

export interface ErrorReply {
  status: number;
  body: ErrorBody;
}

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

/**
 * Every error a request can end in, as one body shape: {error, message, issues?}, the status from
 * the service's error table. Client errors say what was wrong; anything else is a 500 that says
 * nothing more (the log has the details).
 */
export function toErrorReply(err: unknown, errors: ErrorTable, bodyLimit: number): ErrorReply {
  const reply = (error: string, message: string, issues?: readonly FieldIssue[]): ErrorReply => {
    const status = errors[error]?.status ?? 500;
    if (issues === undefined) return { status, body: { error, message } };
    const body: ErrorBody = { error, message, issues: issues.slice(0, MAX_ISSUES_LISTED) };
    if (issues.length > MAX_ISSUES_LISTED) body.issuesOmitted = issues.length - MAX_ISSUES_LISTED;
    return { status, body };
  };
  if (err instanceof ServiceError) {
    if (errors[err.code] === undefined) return reply('internal_error', 'internal error');
    return errors[err.code]!.status >= 500
      ? reply(err.code, 'internal error')
      : reply(err.code, err.message, err.issues);
  }
  const e = err as Partial<FastifyError> & { validation?: AjvError[]; validationContext?: string };
  if (Array.isArray(e.validation)) {
    const issues = validationIssues(e.validation, e.validationContext ?? 'body');
    return reply('invalid_request', describeIssues(issues), issues);
  }
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return reply('body_too_large', `the body is larger than ${bodyLimit} bytes`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return reply('unsupported_media_type', 'send the body as application/json');
    case 'FST_ERR_BAD_URL':
      return reply('invalid_request', '/params: the URL path is not valid percent-encoding', [
        { path: '/params', message: 'the URL path is not valid percent-encoding' },
      ]);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return reply('invalid_json', 'the body is empty but the content type is application/json');
  }
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500;
  // Other 4xx from fastify's body parser: malformed JSON, a bad content length. (Keys such as
  // __proto__ are parsed, see createServiceApp, and answered by the schema.)
  if (status >= 400 && status < 500) return reply('invalid_json', 'the body is not valid JSON');
  return reply('internal_error', 'internal error');
}

/** Ajv errors as field issues, each a JSON pointer under its request part: /body/options/rate. */
export function validationIssues(errors: readonly AjvError[], context: string): FieldIssue[] {
  // A failed anyOf also reports each branch's failure at the same path: one issue, naming them all.
  const unions = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  const branches = (path: string) => [
    ...new Set(errors.filter((e) => e.keyword !== 'anyOf' && e.instancePath === path).map(branchMessage)),
  ];
  return errors
    .filter((e) => e.keyword === 'anyOf' || !unions.has(e.instancePath))
    .map((e) => {
      const base = `/${context}${e.instancePath}`;
      if (e.keyword === 'additionalProperties') {
        const name = String(e.params.additionalProperty);
        return { path: `${base}/${escapePointer(name)}`, message: `unknown property ${quote(name)}` };
      }
      if (e.keyword === 'required') {
        return { path: `${base}/${escapePointer(String(e.params.missingProperty))}`, message: 'required' };
      }
      if (e.keyword === 'anyOf') {
        const each = branches(e.instancePath);
        const message = 'does not match any of the allowed types';
        return { path: base, message: each.length === 0 ? message : `${message}: ${each.join(', or ')}` };
      }
      return { path: base, message: e.message ?? 'is invalid' };
    });
}

/** A branch's failure; a `const` says its value (ajv's message does not). */
function branchMessage(e: AjvError): string {
  if (e.keyword === 'const') return `must be ${JSON.stringify(e.params.allowedValue)}`;
  return e.message ?? 'is invalid';
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

function quote(s: string): string {
  return JSON.stringify(s.length > 64 ? `${s.slice(0, 64)}…` : s);
}
