import { readFileSync } from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';
import type { KafkaConfig } from 'kafkajs';
import { EnvVar, PROBLEM_KEYWORD } from './env-vars';

// How both services reach a secured cluster: TLS (CA, client certificate and key as file paths,
// verification on by default) and SASL PLAIN / SCRAM-SHA-256 / SCRAM-SHA-512. Every secret can
// also come from a file named by `<NAME>_FILE` (the Docker and Kubernetes secrets convention).
// Problems name the variable and never quote a secret.

export const SECURITY_PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const;
export type SecurityProtocol = (typeof SECURITY_PROTOCOLS)[number];
export const SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;
export type SaslMechanism = (typeof SASL_MECHANISMS)[number];

const optionalText = (description: string) => Type.Optional(EnvVar.text({ description }));

/** The connection variables; each service spreads them into its schema (and documents them). */
export const KAFKA_CONNECTION_ENV = {
  KAFKA_SECURITY_PROTOCOL: EnvVar.oneOf(SECURITY_PROTOCOLS, {
    default: 'PLAINTEXT',
    problem: `must be one of ${SECURITY_PROTOCOLS.join(', ')}`,
  }),
  KAFKA_SSL_CA_FILE: optionalText('PEM file of the CA(s) the brokers are checked against; default: the system CAs'),
  KAFKA_SSL_CERT_FILE: optionalText('PEM file of the client certificate (mutual TLS), with KAFKA_SSL_KEY_FILE'),
  KAFKA_SSL_KEY_FILE: optionalText('PEM file of the client key, with KAFKA_SSL_CERT_FILE'),
  KAFKA_SSL_KEY_PASSWORD: optionalText('passphrase of the client key'),
  KAFKA_SSL_KEY_PASSWORD_FILE: optionalText('file holding the passphrase of the client key'),
  KAFKA_SSL_VERIFY: EnvVar.oneOf(['true', 'false'], {
    default: 'true',
    problem: 'must be "true" (check the brokers\' certificates and names) or "false"',
  }),
  KAFKA_SASL_MECHANISM: Type.Optional(
    Type.Unsafe<SaslMechanism>({
      type: 'string',
      enum: [...SASL_MECHANISMS],
      description: 'required with SASL_PLAINTEXT / SASL_SSL',
      [PROBLEM_KEYWORD]: `must be one of ${SASL_MECHANISMS.join(', ')}, got "{value}"`,
    }),
  ),
  KAFKA_SASL_USERNAME: optionalText('SASL user'),
  KAFKA_SASL_PASSWORD: optionalText('SASL password'),
  KAFKA_SASL_PASSWORD_FILE: optionalText('file holding the SASL password'),
};

export type KafkaConnectionEnv = Partial<Static<ReturnType<typeof Type.Object<typeof KAFKA_CONNECTION_ENV>>>>;

/** What createKafkaClient gives kafkajs; its JSON (a log line, an error) names no secret. */
export interface KafkaConnection {
  protocol: SecurityProtocol;
  /** KAFKA_SSL_CA_FILE as given (a path, named in errors); undefined: the system CAs. */
  caFile?: string;
  ssl?: { ca?: Buffer; cert?: Buffer; key?: Buffer; passphrase?: string; rejectUnauthorized: boolean };
  sasl?: { mechanism: SaslMechanism; username: string; password: string };
  toJSON(): object;
}

type ReadFile = (path: string) => Buffer;

/**
 * The connection the variables ask for, reading every file they name; each problem (a file that
 * cannot be read, a missing or contradictory variable) goes to `problems`, naming the variable.
 */
export function kafkaConnectionFrom(
  v: KafkaConnectionEnv,
  problems: string[],
  readFile: ReadFile = (path) => readFileSync(path),
): KafkaConnection {
  const protocol = v.KAFKA_SECURITY_PROTOCOL ?? 'PLAINTEXT';
  const tls = protocol === 'SSL' || protocol === 'SASL_SSL';
  const sasl = protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL';
  const read = (name: keyof KafkaConnectionEnv): Buffer | undefined => {
    const path = v[name];
    if (path === undefined) return undefined;
    try {
      return readFile(path);
    } catch (err) {
      problems.push(`${name}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      return undefined;
    }
  };
  /** A secret from NAME or from the file NAME_FILE names (one of them), without its trailing newline. */
  const secret = (name: 'KAFKA_SSL_KEY_PASSWORD' | 'KAFKA_SASL_PASSWORD'): string | undefined => {
    const fileName = `${name}_FILE` as const;
    if (v[name] !== undefined && v[fileName] !== undefined) {
      problems.push(`${name} and ${fileName} are both set: set one of them`);
      return undefined;
    }
    if (v[name] !== undefined) return v[name];
    return read(fileName)
      ?.toString('utf8')
      .replace(/\r?\n$/, '');
  };

  const tlsNames = [
    'KAFKA_SSL_CA_FILE',
    'KAFKA_SSL_CERT_FILE',
    'KAFKA_SSL_KEY_FILE',
    'KAFKA_SSL_KEY_PASSWORD',
    'KAFKA_SSL_KEY_PASSWORD_FILE',
  ] as const;
  const saslNames = [
    'KAFKA_SASL_MECHANISM',
    'KAFKA_SASL_USERNAME',
    'KAFKA_SASL_PASSWORD',
    'KAFKA_SASL_PASSWORD_FILE',
  ] as const;
  for (const name of tls ? [] : tlsNames) {
    if (v[name] !== undefined)
      problems.push(`${name} is set, but KAFKA_SECURITY_PROTOCOL=${protocol} does not use TLS`);
  }
  for (const name of sasl ? [] : saslNames) {
    if (v[name] !== undefined)
      problems.push(`${name} is set, but KAFKA_SECURITY_PROTOCOL=${protocol} does not use SASL`);
  }

  const connection: KafkaConnection = {
    protocol,
    ...(tls && v.KAFKA_SSL_CA_FILE !== undefined && { caFile: v.KAFKA_SSL_CA_FILE }),
    toJSON() {
      return {
        protocol: this.protocol,
        ...(this.ssl && {
          ssl: {
            ca: v.KAFKA_SSL_CA_FILE ?? 'system CAs',
            clientCertificate: this.ssl.cert !== undefined,
            verify: this.ssl.rejectUnauthorized,
          },
        }),
        ...(this.sasl && { sasl: { mechanism: this.sasl.mechanism, username: this.sasl.username } }),
      };
    },
  };
  if (tls) {
    if ((v.KAFKA_SSL_CERT_FILE === undefined) !== (v.KAFKA_SSL_KEY_FILE === undefined)) {
      problems.push('KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE go together: set both or neither');
    }
    const ca = read('KAFKA_SSL_CA_FILE');
    const cert = read('KAFKA_SSL_CERT_FILE');
    const key = read('KAFKA_SSL_KEY_FILE');
    const passphrase = secret('KAFKA_SSL_KEY_PASSWORD');
    if (passphrase !== undefined && v.KAFKA_SSL_KEY_FILE === undefined) {
      problems.push('KAFKA_SSL_KEY_PASSWORD is for KAFKA_SSL_KEY_FILE, which is not set');
    }
    connection.ssl = {
      rejectUnauthorized: v.KAFKA_SSL_VERIFY !== 'false',
      ...(ca && { ca }),
      ...(cert && { cert }),
      ...(key && { key }),
      ...(passphrase !== undefined && { passphrase }),
    };
  }
  if (sasl) {
    const password = secret('KAFKA_SASL_PASSWORD');
    if (v.KAFKA_SASL_MECHANISM === undefined) {
      problems.push(
        `KAFKA_SASL_MECHANISM is required with KAFKA_SECURITY_PROTOCOL=${protocol} (${SASL_MECHANISMS.join(', ')})`,
      );
    }
    if (v.KAFKA_SASL_USERNAME === undefined) {
      problems.push(`KAFKA_SASL_USERNAME is required with KAFKA_SECURITY_PROTOCOL=${protocol}`);
    }
    if (password === undefined && v.KAFKA_SASL_PASSWORD_FILE === undefined && v.KAFKA_SASL_PASSWORD === undefined) {
      problems.push(
        `KAFKA_SASL_PASSWORD (or KAFKA_SASL_PASSWORD_FILE) is required with KAFKA_SECURITY_PROTOCOL=${protocol}`,
      );
    }
    if (v.KAFKA_SASL_MECHANISM && v.KAFKA_SASL_USERNAME && password !== undefined) {
      connection.sasl = { mechanism: v.KAFKA_SASL_MECHANISM, username: v.KAFKA_SASL_USERNAME, password };
    }
  }
  return connection;
}

/** The kafkajs options of a connection (`ssl`, `sasl`): nothing for PLAINTEXT. */
export function kafkajsSecurity(connection: KafkaConnection | undefined): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  if (!connection) return {};
  const { ssl, sasl } = connection;
  const credentials = sasl && { username: sasl.username, password: sasl.password };
  return {
    ...(ssl && { ssl }),
    ...(sasl &&
      credentials && {
        sasl:
          sasl.mechanism === 'PLAIN'
            ? { mechanism: 'plain' as const, ...credentials }
            : sasl.mechanism === 'SCRAM-SHA-256'
              ? { mechanism: 'scram-sha-256' as const, ...credentials }
              : { mechanism: 'scram-sha-512' as const, ...credentials },
      }),
  };
}
