import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { connect } from 'node:tls';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { accountsOracle } from '@state-relay/accounts/testing';
import { evaluateCondition } from '@state-relay/rules';
import {
  freePort,
  kafkaClient,
  makeTestCa,
  startSecureKafkaCluster,
  type SecureKafkaCluster,
} from '@state-relay/testkit';
import {
  demoEvents,
  deploymentEnv,
  newDeployment,
  produceEvents,
  ProcessorProcess,
  waitCaughtUp,
  type Deployment,
} from '../../services/processor/test/harness';
import { ScannerProcess, scannerEnv, TOKEN } from '../../services/scanner/test/scanner-harness';
import { ConfigResourceTypes, type Admin } from 'kafkajs';

// The whole stack over SASL_SSL: the processor, the scanner and the CLI against a three-broker
// cluster whose client listeners take SCRAM-SHA-512 over TLS only (certificates and users made by
// the test), topics at replication factor 3 and min.insync.replicas 2, the CA and the password
// from files as a secrets mount gives them. Then the two mistakes an operator makes first: a wrong
// password and a CA that did not sign the brokers' certificates, each a prompt exit naming the
// setting, never the secret.

const ROOT = resolve(__dirname, '../..');
const PROCESSOR = join(ROOT, 'services/processor/dist/server.js');
const CLI = join(ROOT, 'services/scanner/dist/cli/main.js');
const AS_OF = '2026-11-01T00:00:00.000Z';

/** Whether a TLS handshake with `broker` that trusts `ca` and expects the name `servername` succeeds; otherwise why not. */
function tlsHandshake(broker: string, ca: Buffer, servername: string): Promise<true | string> {
  const [host, port] = broker.split(':');
  return new Promise((res) => {
    const socket = connect({ host, port: Number(port), ca, servername }, () => {
      socket.end();
      res(true);
    });
    socket.once('error', (err) => res(err.message));
  });
}

/** Runs a built entry point to its exit: code and everything it printed. */
function run(
  script: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | null; output: string }> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [script, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      rej(new Error(`${script} did not exit within ${timeoutMs} ms:\n${output.slice(-4_000)}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      res({ code, output });
    });
  });
}

describe('the stack over SASL_SSL (processor, scanner, CLI)', () => {
  let kafka: SecureKafkaCluster;
  let dir: string;
  let d: Deployment;
  let security: Record<string, string>;
  let otherCa: string;
  let processor: ProcessorProcess | undefined;
  let scanner: ScannerProcess | undefined;
  let admin: Admin | undefined;
  const clientSecurity = () => ({
    ssl: { ca: [readFileSync(kafka.caFile)] },
    sasl: { mechanism: 'scram-sha-512' as const, username: 'relay', password: kafka.users.relay! },
  });

  beforeAll(async () => {
    const t0 = Date.now();
    kafka = await startSecureKafkaCluster({ brokers: 3 });
    process.stdout.write(`[secure-stack] 3 secured nodes ready in ${Date.now() - t0} ms: ${kafka.brokers.join(',')}\n`);
    dir = mkdtempSync(join(tmpdir(), 'secure-stack-'));
    // Any valid CA that is not the brokers': no broker's chain leads to it.
    otherCa = makeTestCa(mkdtempSync(join(dir, 'other-ca-')));
    writeFileSync(join(dir, 'kafka-password'), `${kafka.users.relay}\n`);
    security = {
      KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
      KAFKA_SSL_CA_FILE: kafka.caFile,
      KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
      KAFKA_SASL_USERNAME: 'relay',
      KAFKA_SASL_PASSWORD_FILE: join(dir, 'kafka-password'),
    };
    d = newDeployment(kafka.brokers, 3);
  }, 300_000);
  afterAll(async () => {
    await admin?.disconnect();
    await scanner?.stop();
    scanner?.cleanup();
    await processor?.stop();
    await kafka?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('seeds, sweeps through the CLI and answers state, every connection SCRAM over TLS', async () => {
    processor = await new ProcessorProcess(d).start({
      ...security,
      TOPIC_REPLICATION_FACTOR: '3',
      TOPIC_MIN_INSYNC_REPLICAS: '2',
    });
    await processor.waitReady(120_000);
    const client = kafkaClient(kafka.brokers, 'secure-stack-seed', clientSecurity());
    admin = client.admin();
    await admin.connect();
    const topics = [d.eventsTopic, d.commandsTopic, d.resultsTopic, d.changelogTopic];
    const meta = await admin.fetchTopicMetadata({ topics });
    const replicas = meta.topics.flatMap((t) => t.partitions.map((p) => [t.name, p.replicas.length]));
    expect(replicas).toEqual(replicas.map(([name]) => [name, 3]));
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: topics.map((name) => ({
        type: ConfigResourceTypes.TOPIC,
        name,
        configNames: ['min.insync.replicas'],
      })),
    });
    const minIsr = Object.fromEntries(resources.map((r) => [r.resourceName, r.configEntries[0]?.configValue]));
    expect(minIsr).toEqual(Object.fromEntries(topics.map((name) => [name, '2'])));
    const events = demoEvents(400, 3, 31);
    await produceEvents(client, d.eventsTopic, events);
    await waitCaughtUp(client, d.appId, d.eventsTopic);

    scanner = await new ScannerProcess(d).start(security);
    const oracle = accountsOracle(events);
    const dormant = [...oracle]
      .filter(([, v]) => evaluateCondition(DORMANCY_SWEEP.condition, v, { asOf: Date.parse(AS_OF) }))
      .map(([k]) => k);
    expect(dormant.length).toBeGreaterThan(20);

    const cli = await run(
      CLI,
      ['--url', scanner.api.url, '--preset', 'dormant', '--as-of', AS_OF, '--rate', '500'],
      { STATE_RELAY_API_TOKEN: TOKEN },
      180_000,
    );
    expect({ code: cli.code, tail: cli.output.slice(-600) }).toMatchObject({ code: 0 });
    expect(cli.output).toMatch(/completed/);
    expect(cli.output).not.toContain(TOKEN);

    for (const key of dormant.slice(0, 10)) {
      const { status, body } = await processor.getState(key);
      expect(status).toBe(200);
      expect((body.value as { status?: string }).status).toBe('dormant');
    }
  }, 600_000);

  it('a wrong password stops the processor at once, naming the settings and not the password', async () => {
    const wrong = 'not-the-password-0123456789';
    const env = {
      ...deploymentEnv(d),
      ...security,
      APP_ID: `${d.appId}-wrong`,
      STATE_DIR: join(dir, 'wrong-password'),
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(await freePort()),
      STATE_API_AUTH: 'off',
      KAFKA_SASL_PASSWORD: wrong,
    };
    delete (env as Record<string, string | undefined>).KAFKA_SASL_PASSWORD_FILE;
    const { code, output } = await run(PROCESSOR, [], env, 60_000);
    expect(code).toBe(1);
    expect(output).toContain('KAFKA_CONNECTION_REFUSED');
    expect(output).toMatch(
      /Kafka refused the SASL credentials of KAFKA_SASL_USERNAME=relay with KAFKA_SASL_MECHANISM=SCRAM-SHA-512/,
    );
    expect(output).not.toContain(wrong);
  }, 120_000);

  it('a CA that did not sign the broker certificate stops the scanner at once, naming KAFKA_SSL_CA_FILE', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'secure-scanner-'));
    try {
      const { code, output } = await run(
        join(ROOT, 'services/scanner/dist/server.js'),
        [],
        { ...scannerEnv(d, stateDir, await freePort()), ...security, KAFKA_SSL_CA_FILE: otherCa },
        60_000,
      );
      expect(code).toBe(1);
      expect(output).toContain('KAFKA_CONNECTION_REFUSED');
      expect(output).toContain(`check KAFKA_SSL_CA_FILE (now ${otherCa})`);
      expect(output).not.toContain(kafka.users.relay!);
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('every node presents a certificate the test CA signed for its host and network names, and refuses an untrusted CA', async () => {
    const ca = readFileSync(kafka.caFile);
    const untrusted = readFileSync(otherCa);
    // Every node at once: each answers in well under a second, but a loaded machine adds up.
    const answers = await Promise.all(
      kafka.brokers.map(async (broker, i) => {
        const network = `kafka-${i + 1}`;
        const lone = kafkaClient([broker], 'secure-stack-untrusted', { ...clientSecurity(), ssl: { ca: [untrusted] } });
        const admin = lone.admin({ retry: { retries: 0 } });
        const [asNetworkName, asLocalhost, asOtherName, untrustedTls, untrustedClient] = await Promise.all([
          tlsHandshake(broker, ca, network),
          tlsHandshake(broker, ca, 'localhost'),
          tlsHandshake(broker, ca, 'kafka-9'),
          tlsHandshake(broker, untrusted, network),
          admin.connect().then(
            () => 'connected',
            (err: Error) => err.message,
          ),
        ]);
        await admin.disconnect();
        return { broker, asNetworkName, asLocalhost, asOtherName, untrustedTls, untrustedClient };
      }),
    );
    expect(answers).toEqual(
      kafka.brokers.map((broker) => ({
        broker,
        asNetworkName: true,
        asLocalhost: true,
        asOtherName: expect.stringMatching(/does not match certificate's altnames/),
        untrustedTls: expect.stringMatching(/self[- ]signed certificate/),
        untrustedClient: expect.stringMatching(/certificate/),
      })),
    );
    expect(kafka.internalBrokers).toEqual(['kafka-1:19092', 'kafka-2:19092', 'kafka-3:19092']);
  }, 60_000);
});
