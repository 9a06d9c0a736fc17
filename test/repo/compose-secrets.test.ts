import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseYaml, ROOT } from './kubernetes/manifests';

// Issue 34 item 8: the secure compose file passed the API tokens as environment values, though
// both services read `_FILE` variants (the Docker secrets convention). Every token there is now
// a file, mounted read-only, that scripts/secure-stack.sh writes.

interface Service {
  environment?: Record<string, string>;
  volumes?: string[];
}

const compose = parseYaml(join(ROOT, 'docker-compose.secure.yml'))[0] as { services: Record<string, Service> };
const script = readFileSync(join(ROOT, 'scripts/secure-stack.sh'), 'utf8');

describe('docker-compose.secure.yml: secrets come from mounted files', () => {
  const services = Object.entries(compose.services).filter(([name]) => /^(processor-\d+|scanner)$/.test(name));

  it('has the two processors and the scanner', () => {
    expect(services.map(([name]) => name).sort()).toEqual(['processor-1', 'processor-2', 'scanner']);
  });

  it.each(services)('%s: no token or password as an environment value; each _FILE in a read-only mount', (_n, s) => {
    const env = s.environment ?? {};
    const secrets = Object.keys(env).filter((k) => /(TOKEN|PASSWORD)$/.test(k));
    expect(secrets).toEqual([]);
    const files = Object.entries(env).filter(([k]) => /(TOKEN|PASSWORD)_FILE$/.test(k));
    expect(files.map(([k]) => k)).toEqual(
      expect.arrayContaining([
        _n === 'scanner' ? 'API_TOKEN_FILE' : 'STATE_API_TOKEN_FILE',
        'KAFKA_SASL_PASSWORD_FILE',
      ]),
    );
    const mount = (s.volumes ?? []).find((v) => v.split(':')[1] === '/run/secrets');
    expect(mount).toMatch(/^\.\/\.state-relay\/secure\/client:\/run\/secrets:ro$/);
    for (const [, path] of files) {
      expect(path).toMatch(/^\/run\/secrets\/[\w.-]+$/);
      // scripts/secure-stack.sh writes each file into the mounted directory.
      expect(script).toContain(`"$secure/client/${path.slice('/run/secrets/'.length)}"`);
    }
  });
});
