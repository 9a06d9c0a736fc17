import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ErrorBodySchema, requireBearer } from '@state-relay/service-kit';
import type { FastifyInstance } from 'fastify';
import type { StateReadAuth } from '../config';
import type { Processor } from '../processor';

const StateParams = Type.Object({ key: Type.String({ minLength: 1, maxLength: 512 }) });
const StateBody = Type.Object({
  key: Type.String(),
  task: Type.Integer({ description: 'The task (partition) holding the entity' }),
  version: Type.Integer(),
  value: Type.Unknown({ description: "The entity's committed value" }),
});
const StateNotFound = Type.Object({
  error: Type.Literal('not_found'),
  message: Type.String(),
  ownedTasks: Type.Array(Type.Integer()),
});

/** `GET /state/:key`: the committed entity, if a task of this instance holds it; behind the bearer token unless auth is off. */
export function stateRoutes(app: FastifyInstance, processor: Pick<Processor, 'tasks'>, stateAuth: StateReadAuth): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/state/:key',
    {
      // Before anything is parsed; answers 401 in the API's shape and never echoes a token.
      onRequest: stateAuth.kind === 'bearer' ? [requireBearer(stateAuth.token)] : [],
      schema: {
        tags: ['state'],
        description: 'The committed entity, if a task of this instance holds it',
        ...(stateAuth.kind === 'bearer' ? { security: [{ bearerAuth: [] }] } : {}),
        params: StateParams,
        response: { 200: StateBody, 400: ErrorBodySchema, 401: ErrorBodySchema, 404: StateNotFound },
      },
    },
    async (request, reply) => {
      const { key } = request.params;
      const found = await processor.tasks.read(key);
      if (!found) {
        return reply.status(404).send({
          error: 'not_found' as const,
          message: `no entity "${key}" in the tasks this instance owns`,
          ownedTasks: processor.tasks.owned,
        });
      }
      return { key, task: found.task, version: found.entity.version, value: found.entity.value };
    },
  );
}
