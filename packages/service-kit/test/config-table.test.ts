import { Type } from '@sinclair/typebox';
import { configTableDrift, EnvVar, readConfigTable } from '../src';

const README = `
# a service

| variable                 | default             | meaning |
| ------------------------ | ------------------- | ------- |
| \`KAFKA_BROKERS\`          | (required)          | brokers |
| \`HTTP_HOST\`, \`HTTP_PORT\` | \`0.0.0.0\`, \`8080\`   | listener |
| \`TOKEN\`                  | (required unless \`MODE=off\`) | secret |

| other | table |
| ----- | ----- |
| \`NOT_A_VARIABLE\` | x |
`;

describe("a README's configuration table against the schema", () => {
  it('reads each variable with its default, several to a row', () => {
    expect(readConfigTable(README)).toEqual([
      { name: 'KAFKA_BROKERS', default: undefined },
      { name: 'HTTP_HOST', default: '0.0.0.0' },
      { name: 'HTTP_PORT', default: '8080' },
      { name: 'TOKEN', default: undefined },
    ]);
  });

  it('finds no drift when names and defaults agree', () => {
    const schema = Type.Object({
      KAFKA_BROKERS: EnvVar.brokers(),
      HTTP_HOST: EnvVar.text({ default: '0.0.0.0' }),
      HTTP_PORT: EnvVar.port(8080),
      TOKEN: Type.Optional(EnvVar.text()),
    });
    expect(configTableDrift(schema, README)).toEqual([]);
  });

  it('names a changed default, an undocumented variable and a documented one the schema lacks', () => {
    const schema = Type.Object({
      KAFKA_BROKERS: EnvVar.brokers(),
      HTTP_HOST: EnvVar.text({ default: '127.0.0.1' }),
      HTTP_PORT: EnvVar.port(8080),
      NEW_ONE: EnvVar.integer({ default: 1, minimum: 0, maximum: 2 }),
    });
    expect(configTableDrift(schema, README)).toEqual([
      'HTTP_HOST: the README says `0.0.0.0`, the schema `127.0.0.1`',
      'TOKEN is documented but not in the schema',
      'NEW_ONE is in the schema but not documented',
    ]);
  });

  it('says when there is no table to check', () => {
    expect(configTableDrift(Type.Object({}), '# nothing here')).toEqual([
      'the README has no table whose first column is "variable"',
    ]);
  });
});
