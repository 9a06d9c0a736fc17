import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';

// The Kubernetes manifests in deploy/kubernetes as plain data: every YAML document, the
// kustomizations, and the pods the workloads run. Kubernetes reads YAML 1.1 (sigs.k8s.io/yaml):
// parsed the same way here, `defaultMode: 0440` is the octal 288 it means.

export const ROOT = resolve(__dirname, '../../..');
export const KUBERNETES_DIR = join(ROOT, 'deploy/kubernetes');

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** One YAML document: where it is (file#index) and what it holds. */
export interface Manifest {
  where: string;
  file: string;
  object: K8sObject;
}

/** Every YAML document under `dir` (kustomization.yaml files apart: they are kustomize's, not the API's). */
export function loadManifests(dir = KUBERNETES_DIR): Manifest[] {
  return yamlFiles(dir)
    .filter((file) => !file.endsWith('kustomization.yaml'))
    .flatMap((file) =>
      parseYaml(file).map((object, i) => ({
        where: `${relative(ROOT, file)}#${i}`,
        file,
        object: object as K8sObject,
      })),
    );
}

export function yamlFiles(dir: string): string[] {
  return readdirSync(dir)
    .map((name) => join(dir, name))
    .flatMap((path) => (statSync(path).isDirectory() ? yamlFiles(path) : /\.ya?ml$/.test(path) ? [path] : []));
}

/** The documents of a YAML file; a syntax error throws, naming the file. */
export function parseYaml(file: string): unknown[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'), { version: '1.1' });
  const list = Array.isArray(docs) ? docs : [docs];
  for (const doc of list) {
    if (doc.errors.length > 0) throw new Error(`${relative(ROOT, file)}: ${doc.errors[0]!.message}`);
  }
  return list.map((doc) => doc.toJS() as unknown).filter((value) => value !== null);
}

export interface Kustomization {
  resources?: string[];
  images?: Array<{ name: string; newName?: string; newTag?: string }>;
}

export function readKustomization(dir: string): Kustomization {
  return parseYaml(join(dir, 'kustomization.yaml'))[0] as Kustomization;
}

// The fields of the pod-level API this test reads (the schemas check the rest).
export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: { fieldPath: string };
    secretKeyRef?: { name: string; key: string };
    configMapKeyRef?: { name: string; key: string };
  };
}
export interface Probe {
  httpGet?: { path: string; port: number | string };
}
export interface Container {
  name: string;
  image: string;
  ports?: Array<{ name?: string; containerPort: number }>;
  env?: EnvVar[];
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  securityContext?: { readOnlyRootFilesystem?: boolean };
}
export interface Volume {
  name: string;
  secret?: { secretName: string; items?: Array<{ key: string; path: string }> };
  configMap?: { name: string };
  persistentVolumeClaim?: { claimName: string };
  emptyDir?: object;
}
export interface PodSpec {
  containers: Container[];
  volumes?: Volume[];
  terminationGracePeriodSeconds?: number;
  enableServiceLinks?: boolean;
}

/** A workload (StatefulSet, Deployment) and the pod it runs. */
export interface Workload {
  manifest: Manifest;
  kind: string;
  name: string;
  selector: Record<string, string>;
  podLabels: Record<string, string>;
  pod: PodSpec;
  /** Volume names backed by a claim: the StatefulSet's templates, or a PersistentVolumeClaim volume. */
  claimVolumes: string[];
  /** The name of its first pod: what `metadata.name` gives a container through the downward API. */
  firstPodName: string;
}

interface WorkloadSpec {
  selector: { matchLabels: Record<string, string> };
  template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  volumeClaimTemplates?: Array<{ metadata: { name: string } }>;
}

export function workloads(manifests: Manifest[]): Workload[] {
  return manifests
    .filter((m) => m.object.kind === 'StatefulSet' || m.object.kind === 'Deployment')
    .map((manifest) => {
      const { kind, metadata } = manifest.object;
      const spec = manifest.object.spec as WorkloadSpec;
      const pod = spec.template.spec;
      const claimVolumes = [
        ...(spec.volumeClaimTemplates ?? []).map((t) => t.metadata.name),
        ...(pod.volumes ?? []).filter((v) => v.persistentVolumeClaim).map((v) => v.name),
      ];
      return {
        manifest,
        kind,
        name: metadata.name,
        selector: spec.selector.matchLabels,
        podLabels: spec.template.metadata.labels,
        pod,
        claimVolumes,
        firstPodName: kind === 'StatefulSet' ? `${metadata.name}-0` : `${metadata.name}-5d8f7c9b4-x2k7q`,
      };
    });
}

/** Whether a selector (matchLabels) selects these labels. */
export function selects(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}
