import type { KafkaConfig } from 'kafkajs';
import { GenericContainer, StartedNetwork, StartedTestContainer, WaitStrategy } from 'testcontainers';
import type { BrokerSecurity } from './broker-security';
import { freePort } from './free-port';
import { kafkaImage } from './images';
import { kafkaClient } from './kafka';

export interface KafkaContainerOptions {
  image?: string;
  /** Join this network so other containers reach the broker at `${alias}:19092`. */
  network?: StartedNetwork;
  alias?: string;
  /** Host port for the client listener; a free one by default. */
  hostPort?: number;
  /** The host listener's security (startSecureKafka); PLAINTEXT by default. */
  hostListener?: BrokerSecurity;
}

export interface StartedKafka {
  /** Bootstrap servers for clients on the host: always 127.0.0.1. */
  brokers: string[];
  /** Bootstrap servers for containers on the same network (when a network was given). */
  internalBrokers: string[];
  container: StartedTestContainer;
  stop(): Promise<void>;
}

/**
 * A single-node KRaft broker (combined mode). The client listener is published on the same
 * port number on the host and inside the container, so the advertised address
 * 127.0.0.1:<port> is known before start and survives a container restart.
 */
export async function startKafka(options: KafkaContainerOptions = {}): Promise<StartedKafka> {
  const port = options.hostPort ?? (await freePort());
  const alias = options.alias ?? 'kafka';
  let builder = new GenericContainer(options.image ?? kafkaImage())
    .withExposedPorts({ container: port, host: port })
    .withEnvironment({
      CLUSTER_ID: '5L6g3nShT-eMCtK--X86sw',
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_LISTENERS: `HOST://:${port},INTERNAL://:19092,BROKER://:29092,CONTROLLER://:9093`,
      // The broker talks to itself (e.g. transaction markers) on BROKER, which resolves inside
      // the container whether or not it sits on a network.
      KAFKA_ADVERTISED_LISTENERS: `HOST://127.0.0.1:${port},INTERNAL://${alias}:19092,BROKER://localhost:29092`,
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: `HOST:${options.hostListener?.protocol ?? 'PLAINTEXT'},INTERNAL:PLAINTEXT,BROKER:PLAINTEXT,CONTROLLER:PLAINTEXT`,
      KAFKA_INTER_BROKER_LISTENER_NAME: 'BROKER',
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS: '4',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_TRANSACTION_STATE_LOG_NUM_PARTITIONS: '4',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
      // A crashed transactional producer's open transaction is aborted after this long
      // unless a restarted one with the same id fences it first.
      KAFKA_TRANSACTION_MAX_TIMEOUT_MS: '900000',
      KAFKA_LOG_CLEANER_BACKOFF_MS: '2000',
      // Expired transactions (a frozen owner) are aborted within a second, not the default 10 s.
      KAFKA_TRANSACTION_ABORT_TIMED_OUT_TRANSACTION_CLEANUP_INTERVAL_MS: '1000',
      KAFKA_HEAP_OPTS: '-Xms256m -Xmx768m',
      ...options.hostListener?.environment,
    })
    .withLabels({ 'dev.state-relay.role': 'kafka' })
    .withWaitStrategy(
      new BrokerAnswers([`127.0.0.1:${port}`], options.hostListener?.client).withStartupTimeout(120_000),
    );
  if (options.hostListener) {
    const { files, entrypoint, command } = options.hostListener;
    builder = builder.withCopyContentToContainer(files).withEntrypoint(entrypoint).withCommand(command);
  }
  if (options.network) builder = builder.withNetwork(options.network).withNetworkAliases(alias);
  const container = await builder.start();
  return {
    brokers: [`127.0.0.1:${port}`],
    internalBrokers: options.network ? [`${alias}:19092`] : [],
    container,
    stop: async () => {
      await container.stop({ timeout: 5_000 });
    },
  };
}

type Container = Parameters<WaitStrategy['waitUntilReady']>[0];

/**
 * Ready when the broker answers a DescribeCluster request on the host listener; failed at once
 * when the container stops. Not a log-message wait, which can lose a healthy broker: see
 * DECISIONS.md, "Broker readiness".
 */
export class BrokerAnswers implements WaitStrategy {
  private timeoutMs = 60_000;
  private timeoutSet = false;

  constructor(
    private readonly brokers: string[],
    private readonly security: Pick<KafkaConfig, 'ssl' | 'sasl'> = {},
  ) {}

  withStartupTimeout(ms: number): this {
    this.timeoutMs = ms;
    this.timeoutSet = true;
    return this;
  }

  isStartupTimeoutSet(): boolean {
    return this.timeoutSet;
  }

  getStartupTimeout(): number {
    return this.timeoutMs;
  }

  async waitUntilReady(container: Container): Promise<void> {
    const deadline = Date.now() + this.timeoutMs;
    let last = 'no answer yet';
    for (;;) {
      const { State } = await container.inspect();
      if (!State.Running) {
        throw new Error(`the broker container stopped while starting: ${State.Status}, exit code ${State.ExitCode}`);
      }
      const answer = await describeCluster(this.brokers, this.security);
      if (answer === true) return;
      last = answer;
      if (Date.now() >= deadline) {
        throw new Error(`the broker did not answer on ${this.brokers.join(',')} within ${this.timeoutMs} ms: ${last}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** true when the broker answers DescribeCluster with itself in it; otherwise why not. */
async function describeCluster(brokers: string[], security: Pick<KafkaConfig, 'ssl' | 'sasl'>): Promise<true | string> {
  const client = kafkaClient(brokers, 'testkit-ready-probe', security);
  const admin = client.admin({ retry: { retries: 0 } });
  try {
    await admin.connect();
    const { brokers: nodes } = await admin.describeCluster();
    return nodes.length > 0 ? true : 'no broker in the cluster description';
  } catch (err) {
    return (err as Error).message;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
