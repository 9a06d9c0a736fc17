// Small TypeBox combinators the services' route schemas share.
import { Type, type TSchema } from '@sinclair/typebox';

/** `schema` or null. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** One of the given strings (an enum in the OpenAPI document). */
export const literals = <T extends readonly string[]>(values: T) => Type.Union(values.map((v) => Type.Literal(v)));
