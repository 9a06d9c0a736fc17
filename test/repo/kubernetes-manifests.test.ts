import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { FORCE_EXIT_MS } from '../../packages/service-kit/src/run-service';
import { buildApp as buildProcessorApp } from '../../services/processor/src/http/app';
import { createProcessorMetrics } from '../../services/processor/src/metrics';
import { loadServerConfig, SERVER_ENV } from '../../services/processor/src/config';
import { buildApp as buildScannerApp } from '../../services/scanner/src/http/app';
import { loadConfig as loadScannerConfig, SCANNER_ENV } from '../../services/scanner/src/config';
import { createLogger } from '../../services/scanner/src/logger';
import { createScannerMetrics } from '../../services/scanner/src/metrics';
import type { ScanService } from '../../services/scanner/src/scans/scan-service';
import { configMapsOf, containerEnv, secretsUsed, type ContainerEnv } from './kubernetes/container-env';
import * as k8s from './kubernetes/manifests';
import { schemaProblems, unknownFieldProblems } from './kubernetes/schema-check';

// deploy/kubernetes: every object is valid against the Kubernetes API's schemas, and the objects
// agree with each other and with the services (what the schemas cannot see): the variables set
// are the ones each service reads and pass its own config check, files are where volumes are
// mounted, selectors select, probes hit routes that exist. Nothing here runs a cluster.

const manifests = k8s.loadManifests();
const workloads = k8s.workloads(manifests);
const configMaps = configMapsOf(manifests);
const ofKind = (kind: string) => manifests.filter((m) => m.object.kind === kind);
const spec = (m: k8s.Manifest) => m.object.spec as Record<string, unknown>;

/** A service's environment schema: its variables, each with its default. */
type EnvSchema = { properties: Record<string, { default?: unknown }> };
type Service = { env: EnvSchema; load: (env: NodeJS.ProcessEnv) => unknown; app: () => FastifyInstance };

/** What each image runs: the variables its service reads, its config check and its HTTP routes. */
const SERVICES: Record<string, Service> = {
  'state-relay/processor': {
    env: SERVER_ENV,
    load: loadServerConfig,
    app: () =>
      buildProcessorApp({
        processor: { isReady: true, tasks: { owned: [], read: async () => undefined } as never },
        metrics: createProcessorMetrics(),
        logger: createLogger('silent'),
        stateAuth: { kind: 'bearer', token: 'processor-state-token-7f3a9c2e51' },
      }),
  },
  'state-relay/scanner': {
    env: SCANNER_ENV,
    load: loadScannerConfig,
    app: () =>
      buildScannerApp({
        scans: {} as ScanService,
        replica: { ready: true, lag: () => [] },
        metrics: createScannerMetrics(),
        logger: createLogger('silent'),
        apiToken: 'scanner-api-token-0123456789abcdef',
        maxBodyBytes: 65_536,
      }),
  },
};

/** Every container of every workload, with its service and its environment as the kubelet builds it. */
const containers = workloads.flatMap((workload) =>
  workload.pod.containers.map((container) => {
    const image = container.image.replace(/:[^/:]+$/, '');
    const env = containerEnv(container, configMaps, { name: workload.firstPodName });
    return { workload, container, image, service: SERVICES[image], env, where: `${workload.name}/${container.name}` };
  }),
);

/** The volume mounted at the longest mount path holding `path`, if any. */
function mountOf(container: k8s.Container, pod: k8s.PodSpec, path: string) {
  const mount = (container.volumeMounts ?? [])
    .filter((m) => path.startsWith(`${m.mountPath.replace(/\/$/, '')}/`))
    .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
  return mount && { mount, volume: pod.volumes?.find((v) => v.name === mount.name) };
}

describe('Kubernetes manifests (deploy/kubernetes): the API schemas', () => {
  it('finds the objects the deployment is made of', () => {
    const kinds = manifests.map((m) => `${m.object.kind}/${m.object.metadata.name}`).sort();
    expect(kinds).toEqual(
      expect.arrayContaining(['StatefulSet/processor', 'Deployment/scanner', 'PodDisruptionBudget/processor']),
    );
    expect(ofKind('Service').length).toBeGreaterThanOrEqual(2);
  });

  it("validates every document against its kind's JSON schema", () => {
    expect(manifests.flatMap(schemaProblems)).toEqual([]);
  });

  it('finds no field a kind does not have', () => {
    expect(unknownFieldProblems(manifests)).toEqual([]);
  }, 60_000);

  it('fails a broken copy: a misspelt field, a field at the wrong level, a wrong type, a missing field', () => {
    const statefulSet = ofKind('StatefulSet')[0]!;
    type Fields = Record<string, unknown>;
    type Editable = { spec: Fields & { template: { spec: { containers: Fields[] } } } };
    const broken = (where: string, edit: (copy: Editable) => void): k8s.Manifest => {
      const copy = structuredClone(statefulSet.object);
      edit(copy as unknown as Editable);
      return { ...statefulSet, where, object: copy };
    };
    const misspelt = broken('misspelt', (c) => (c.spec.replica = c.spec.replicas));
    const misplaced = broken('misplaced', (c) => (c.spec.template.spec.containers[0]!.fsGroup = 10001));
    const wrongType = broken('wrong type', (c) => (c.spec.replicas = 'two'));
    const missing = broken('missing', (c) => delete c.spec.template.spec.containers[0]!.name);

    // The schema leaves objects open: unknown fields pass it, the declarations catch them.
    expect([...schemaProblems(misspelt), ...schemaProblems(misplaced)]).toEqual([]);
    expect(unknownFieldProblems([misspelt, misplaced])).toEqual([
      expect.stringMatching(/^misspelt: .*'replica' does not exist/),
      expect.stringMatching(/^misplaced: .*'fsGroup' does not exist/),
    ]);
    expect(schemaProblems(wrongType)).toEqual([expect.stringMatching(/spec\/replicas must be integer/)]);
    expect(schemaProblems(missing)).toEqual([expect.stringMatching(/containers\/0 must have required property name/)]);
  }, 60_000);
});

describe('Kubernetes manifests: kustomize', () => {
  const top = k8s.readKustomization(k8s.KUBERNETES_DIR);

  it('lists every manifest file once, and only files that exist', () => {
    const listed = (dir: string): string[] =>
      (k8s.readKustomization(dir).resources ?? []).flatMap((r) => {
        const path = join(dir, r);
        return r.endsWith('.yaml') ? [path] : listed(path);
      });
    const files = [...new Set(manifests.map((m) => m.file))].sort();
    expect(listed(k8s.KUBERNETES_DIR).sort()).toEqual(files);
  });

  it('runs the images the compose file builds, each replaceable through `images:`', () => {
    const compose = k8s.parseYaml(join(k8s.ROOT, 'docker-compose.yml'))[0] as {
      services: Record<string, { image: string }>;
    };
    expect(containers.map((c) => c.container.image).sort()).toEqual(
      [compose.services.processor!.image, compose.services.scanner!.image].sort(),
    );
    expect((top.images ?? []).map((i) => i.name).sort()).toEqual(containers.map((c) => c.image).sort());
  });
});

describe('Kubernetes manifests: each container and its service', () => {
  const apps = new Map<string, FastifyInstance>();
  afterAll(async () => {
    for (const app of apps.values()) await app.close();
  });

  it('runs a service this test knows', () => {
    expect(containers.filter((c) => !c.service).map((c) => c.image)).toEqual([]);
  });

  it('sets only variables its service reads, each once, from sources that exist', () => {
    const unread = containers.flatMap(({ env, service, where }) =>
      Object.keys(env.values)
        .filter((name) => !(name in service!.env.properties))
        .map((name) => `${where}: ${name} is not read by the service`),
    );
    expect([...unread, ...containers.flatMap((c) => c.env.problems.map((p) => `${c.where}: ${p}`))]).toEqual([]);
  });

  it("passes its service's own config check, with the Secrets' files in place", () => {
    const dir = mkdtempSync(join(tmpdir(), 'k8s-env-'));
    try {
      for (const { env, service, container, workload, where } of containers) {
        const values = withSecretFiles(env, container, workload.pod, join(dir, workload.name));
        try {
          service!.load(values);
        } catch (err) {
          throw new Error(`${where}: ${(err as Error).message}`);
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names files (*_FILE) inside a read-only volume that holds them', () => {
    const problems = containers.flatMap(({ env, container, workload, where }) =>
      Object.entries(env.values)
        .filter(([name]) => name.endsWith('_FILE'))
        .flatMap(([name, path]) => {
          const found = mountOf(container, workload.pod, path);
          if (!found) return [`${where}: ${name}=${path} is in no mounted volume`];
          if (!found.mount.readOnly) return [`${where}: ${name}=${path}: mount ${found.mount.name} is not read-only`];
          const file = posix.relative(found.mount.mountPath, path);
          const items = found.volume?.secret?.items?.map((i) => i.path);
          return items && !items.includes(file) ? [`${where}: ${name}=${path}: no item ${file} in the Secret`] : [];
        }),
    );
    expect(problems).toEqual([]);
  });

  it('keeps its state (STATE_DIR) on a claimed volume, and has a writable /tmp under a read-only root', () => {
    for (const { env, container, workload } of containers) {
      const state = mountOf(container, workload.pod, `${env.values.STATE_DIR}/x`);
      expect(state && workload.claimVolumes.includes(state.mount.name)).toBe(true);
      expect(container.securityContext?.readOnlyRootFilesystem).toBe(true);
      expect(mountOf(container, workload.pod, '/tmp/x')?.volume?.emptyDir).toBeDefined();
    }
  });

  it('declares the port its service listens on (HTTP_PORT, or its default)', () => {
    for (const { env, service, container } of containers) {
      const port = Number(env.values.HTTP_PORT ?? service!.env.properties.HTTP_PORT!.default);
      expect(container.ports?.map((p) => p.containerPort)).toEqual([port]);
    }
  });

  it('probes routes its service serves, on a port it declares', async () => {
    const problems: string[] = [];
    for (const { image, service, container, where } of containers) {
      if (!apps.has(image)) apps.set(image, service!.app());
      const app = apps.get(image)!;
      await app.ready();
      for (const kind of ['startupProbe', 'livenessProbe', 'readinessProbe'] as const) {
        const probe = container[kind]?.httpGet;
        if (!probe) problems.push(`${where}: no HTTP ${kind}`);
        else if (!app.hasRoute({ method: 'GET', url: probe.path })) problems.push(`${where}: no route ${probe.path}`);
        else if (!container.ports?.some((p) => p.name === probe.port || p.containerPort === probe.port))
          problems.push(`${where}: ${kind} on undeclared port ${probe.port}`);
      }
    }
    expect(problems).toEqual([]);
    // Ready means what each service says it means: /readyz; alive is only /healthz.
    expect(
      containers.map((c) => [c.container.readinessProbe?.httpGet?.path, c.container.livenessProbe?.httpGet?.path]),
    ).toEqual(containers.map(() => ['/readyz', '/healthz']));
  });
});

/** The container's variables, with the Secrets' values and files made up under `dir`. */
function withSecretFiles(env: ContainerEnv, container: k8s.Container, pod: k8s.PodSpec, dir: string) {
  const values = { ...env.values };
  for (const [name, path] of Object.entries(values)) {
    const found = name.endsWith('_FILE') ? mountOf(container, pod, path) : undefined;
    if (!found?.volume?.secret) continue;
    const local = join(dir, found.mount.name, relative(found.mount.mountPath, path));
    mkdirSync(dirname(local), { recursive: true });
    writeFileSync(local, `made-up ${name}\n`);
    values[name] = local;
  }
  return values;
}

describe('Kubernetes manifests: the objects fit together', () => {
  it("selects each workload's own pods", () => {
    for (const w of workloads) expect(k8s.selects(w.selector, w.podLabels)).toBe(true);
  });

  it('routes each Service to the pods of one workload, on a port they declare', () => {
    for (const service of ofKind('Service')) {
      const { selector, ports } = spec(service) as {
        selector: Record<string, string>;
        ports: { targetPort: unknown }[];
      };
      const selected = workloads.filter((w) => k8s.selects(selector, w.podLabels));
      expect(selected.map((w) => w.name)).toHaveLength(1);
      const declared = selected[0]!.pod.containers.flatMap((c) => c.ports ?? []);
      for (const { targetPort } of ports) {
        expect(declared.some((p) => p.name === targetPort || p.containerPort === targetPort)).toBe(true);
      }
    }
  });

  it('governs the StatefulSet by a headless Service and names each instance by its pod (INSTANCE_ID)', () => {
    const statefulSet = workloads.find((w) => w.kind === 'StatefulSet')!;
    const governing = ofKind('Service').find((s) => s.object.metadata.name === spec(statefulSet.manifest).serviceName);
    expect(governing && spec(governing).clusterIP).toBe('None');
    const instanceId = statefulSet.pod.containers[0]!.env?.find((e) => e.name === 'INSTANCE_ID');
    expect(instanceId?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.name');
    expect(spec(statefulSet.manifest).podManagementPolicy).toBe('Parallel');
  });

  it('lets a disruption take one processor at a time (PodDisruptionBudget)', () => {
    const [pdb] = ofKind('PodDisruptionBudget');
    const { selector, maxUnavailable } = spec(pdb!) as {
      selector: { matchLabels: Record<string, string> };
      maxUnavailable: number;
    };
    expect(maxUnavailable).toBe(1);
    const covered = workloads.filter((w) => k8s.selects(selector.matchLabels, w.podLabels)).map((w) => w.name);
    expect(covered).toEqual(['processor']);
  });

  it('runs one scanner, stopped before its replacement opens the SQLite files (Recreate)', () => {
    const scanner = workloads.find((w) => w.kind === 'Deployment' && w.name === 'scanner')!;
    expect(spec(scanner.manifest)).toMatchObject({ replicas: 1, strategy: { type: 'Recreate' } });
  });

  it("gives every pod longer to stop than the services' forced exit, and no service-link variables", () => {
    for (const { pod } of workloads) {
      expect((pod.terminationGracePeriodSeconds ?? 30) * 1000).toBeGreaterThan(FORCE_EXIT_MS);
      // A Service named `http` would otherwise set HTTP_PORT=tcp://… in every pod of the namespace.
      expect(pod.enableServiceLinks).toBe(false);
    }
  });

  it('commits no Secret, and documents how to create each one used, with its keys', () => {
    expect(ofKind('Secret')).toEqual([]);
    const readme = readFileSync(join(k8s.KUBERNETES_DIR, 'README.md'), 'utf8');
    const problems: string[] = [];
    for (const { pod } of workloads) {
      for (const [secret, keys] of secretsUsed(pod)) {
        const command = readme.split('\n').find((line) => line.includes(`create secret generic ${secret} `));
        if (!command) problems.push(`no \`kubectl create secret generic ${secret}\` in README.md`);
        for (const key of keys) {
          if (command && !new RegExp(`--from-(file|literal)=${key}=`).test(command))
            problems.push(`README.md creates ${secret} without the key ${key}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});
