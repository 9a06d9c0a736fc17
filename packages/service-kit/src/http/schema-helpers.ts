// Small TypeBox combinators the services' route schemas share.
import { Type, type TSchema } from '@sinclair/typebox';

/** `schema` or null. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** One of the given strings (an enum in the OpenAPI document). */
export const literals = <T extends readonly string[]>(values: T) => Type.Union(values.map((v) => Type.Literal(v)));

const DOCUMENTATION = Symbol.for('state-relay.documentation');

/**
 * `validation` as the route validates and serializes the value, shown as `documentation` in the
 * OpenAPI document: for a value whose own validator gives the errors (a rule's condition, checked
 * by the rules package with precise paths), while the document describes it in full. (Ajv and the
 * serializer read string keys only; the documentation rides on a symbol.)
 */
export function documentedAs<T extends TSchema>(validation: T, documentation: TSchema): T {
  return { ...validation, [DOCUMENTATION]: documentation };
}

/** A route schema as the OpenAPI document shows it: every documentedAs node replaced by its documentation. */
export function forDocumentation(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(forDocumentation);
  if (typeof schema !== 'object' || schema === null) return schema;
  const documentation = (schema as { [DOCUMENTATION]?: TSchema })[DOCUMENTATION];
  if (documentation !== undefined) return documentation;
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, forDocumentation(value)]));
}
