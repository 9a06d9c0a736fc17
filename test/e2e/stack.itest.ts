import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { accountsOracle } from '@state-relay/accounts/testing';
import { evaluateCondition, type JsonObject } from '@state-relay/rules';
import { kafkaClient, startKafka, waitUntil, type StartedKafka } from '@state-relay/testkit';
import { GenericContainer, Network, StartedNetwork, StartedTestContainer, Wait } from 'testcontainers';
import { demoEvents, produceEvents, waitCaughtUp } from '../../services/processor/test/harness';

// The deployed pair, driven only through HTTP and Kafka: both images built from their
// Dockerfile, Kafka and both services as containers on one network.
const ROOT = resolve(__dirname, '../..');
// Random per run: the services refuse a guessable token (issue 34 item 3).
const TOKEN = randomBytes(24).toString('base64url');
const buildArgs = {
  BUILD_IMAGE: process.env.NODE_BUILD_IMAGE ?? 'node:22-bookworm',
  RUNTIME_IMAGE: process.env.NODE_RUNTIME_IMAGE ?? 'node:22-bookworm-slim',
};
const topicsEnv = {
  APP_ID: 'state-relay',
  EVENTS_TOPIC: 'accounts-events',
  COMMANDS_TOPIC: 'accounts-commands',
  RESULTS_TOPIC: 'accounts-command-results',
  DEAD_LETTER_TOPIC: 'accounts-dead-letter',
  PARTITIONS: '3',
  LOG_LEVEL: 'warn',
};

async function buildImage(service: string): Promise<GenericContainer> {
  return GenericContainer.fromDockerfile(ROOT, 'Dockerfile')
    .withBuildArgs({ ...buildArgs, SERVICE: service, HTTP_PORT: service === 'scanner' ? '8081' : '8080' })
    .build(`state-relay/${service}:e2e`, {
      deleteOnExit: false,
    });
}

describe('the deployed stack (e2e, containers)', () => {
  let network: StartedNetwork;
  let kafka: StartedKafka;
  let processor: StartedTestContainer;
  let scanner: StartedTestContainer;

  beforeAll(async () => {
    network = await new Network().start();
    const [processorImage, scannerImage] = await Promise.all([buildImage('processor'), buildImage('scanner')]);
    kafka = await startKafka({ network, alias: 'kafka' });
    const brokers = kafka.internalBrokers.join(',');
    processor = await processorImage
      .withNetwork(network)
      .withNetworkAliases('processor')
      .withEnvironment({ ...topicsEnv, KAFKA_BROKERS: brokers, HTTP_PORT: '8080', STATE_API_TOKEN: TOKEN })
      .withExposedPorts(8080)
      .withWaitStrategy(Wait.forHttp('/readyz', 8080).forStatusCode(200))
      .withStartupTimeout(120_000)
      .start();
    scanner = await scannerImage
      .withNetwork(network)
      .withEnvironment({ ...topicsEnv, KAFKA_BROKERS: brokers, HTTP_PORT: '8081', API_TOKEN: TOKEN })
      .withExposedPorts(8081)
      .withWaitStrategy(Wait.forHttp('/readyz', 8081).forStatusCode(200))
      .withStartupTimeout(120_000)
      .start();
  }, 900_000);

  afterAll(async () => {
    await scanner?.stop({ timeout: 10_000 });
    await processor?.stop({ timeout: 10_000 });
    await kafka?.stop();
    await network?.stop();
  });

  const processorUrl = () => `http://127.0.0.1:${processor.getMappedPort(8080)}`;
  const scannerUrl = () => `http://127.0.0.1:${scanner.getMappedPort(8081)}`;
  const state = async (key: string) => {
    const res = await fetch(`${processorUrl()}/state/${key}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    return { status: res.status, body: (await res.json()) as { version?: number; value?: JsonObject } };
  };

  it('seeds through Kafka, sweeps through HTTP, and the state survives a processor restart', async () => {
    const client = kafkaClient(kafka.brokers);
    const events = demoEvents(1500, 4, 21);
    await produceEvents(client, 'accounts-events', events);
    await waitCaughtUp(client, 'state-relay', 'accounts-events');

    const oracle = accountsOracle(events);
    const asOf = Date.now();
    const dormant = [...oracle]
      .filter(([, v]) => evaluateCondition(DORMANCY_SWEEP.condition, v, { asOf }))
      .map(([k]) => k);
    expect(dormant.length).toBeGreaterThan(100);

    const created = await fetch(`${scannerUrl()}/scans`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ condition: DORMANCY_SWEEP.condition, action: DORMANCY_SWEEP.action, asOf }),
    });
    expect(created.status).toBe(202);
    const { scan } = (await created.json()) as { scan: { id: string } };
    const done = await waitUntil(
      async () => {
        const res = await fetch(`${scannerUrl()}/scans/${scan.id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
        const body = (await res.json()) as {
          status: string;
          counts: { matched: number; emitted: number; results: Record<string, number> };
        };
        return ['completed', 'failed', 'cancelled'].includes(body.status) ? body : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 500, message: 'the scan to finish' },
    );
    expect(done.status).toBe('completed');
    expect(done.counts.matched).toBe(dormant.length);
    expect(done.counts.results.applied).toBe(dormant.length);

    const sample = [...dormant.slice(0, 20), ...[...oracle.keys()].filter((k) => !dormant.includes(k)).slice(0, 20)];
    const before = new Map<string, unknown>();
    for (const key of sample) {
      const { status, body } = await state(key);
      expect(status).toBe(200);
      expect(body.value?.status).toBe(dormant.includes(key) ? 'dormant' : oracle.get(key)!.status);
      before.set(key, body);
    }

    await processor.restart();
    await waitUntil(async () => (await fetch(`${processorUrl()}/readyz`).catch(() => undefined))?.status === 200, {
      timeoutMs: 120_000,
      message: 'the restarted processor to be ready',
    });
    for (const key of sample) expect([key, (await state(key)).body]).toEqual([key, before.get(key)]);
  });
});
