import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DORMANCY_SWEEP } from '@state-relay/accounts';
import { accountsOracle } from '@state-relay/accounts/testing';
import { evaluateCondition } from '@state-relay/rules';
import { freePort, kafkaClient, startSecureKafka, type SecureKafka } from '@state-relay/testkit';
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

// The whole stack over SASL_SSL: the processor, the scanner and the CLI against a broker whose
// client listener takes SCRAM-SHA-512 over TLS only (certificates and users made by the test),
// the CA and the password from files as a secrets mount gives them. Then the two mistakes an
// operator makes first: a wrong password and a CA that did not sign the broker's certificate,
// each a prompt exit naming the setting, never the secret.

const ROOT = resolve(__dirname, '../..');
const PROCESSOR = join(ROOT, 'services/processor/dist/server.js');
const CLI = join(ROOT, 'services/scanner/dist/cli/main.js');
const AS_OF = '2026-11-01T00:00:00.000Z';

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
  let kafka: SecureKafka;
  let dir: string;
  let d: Deployment;
  let security: Record<string, string>;
  let processor: ProcessorProcess | undefined;
  let scanner: ScannerProcess | undefined;

  beforeAll(async () => {
    kafka = await startSecureKafka();
    dir = mkdtempSync(join(tmpdir(), 'secure-stack-'));
    writeFileSync(join(dir, 'kafka-password'), `${kafka.users.relay}\n`);
    security = {
      KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
      KAFKA_SSL_CA_FILE: kafka.caFile,
      KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
      KAFKA_SASL_USERNAME: 'relay',
      KAFKA_SASL_PASSWORD_FILE: join(dir, 'kafka-password'),
    };
    d = newDeployment(kafka.brokers, 3);
  }, 180_000);
  afterAll(async () => {
    await scanner?.stop();
    scanner?.cleanup();
    await processor?.stop();
    await kafka?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('seeds, sweeps through the CLI and answers state, every connection SCRAM over TLS', async () => {
    processor = await new ProcessorProcess(d).start(security);
    await processor.waitReady(120_000);
    const client = kafkaClient(kafka.brokers, 'secure-stack-seed', {
      ssl: { ca: [readFileSync(kafka.caFile)] },
      sasl: { mechanism: 'scram-sha-512', username: 'relay', password: kafka.users.relay! },
    });
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
    const otherCa = join(dir, 'other-ca.pem');
    // Any valid certificate that is not the test CA: the broker's chain does not lead to it.
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(dir, 'other.key'),
        '-out',
        otherCa,
        '-days',
        '1',
        '-subj',
        '/CN=not the broker CA',
      ],
      { stdio: 'ignore' },
    );
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
});
