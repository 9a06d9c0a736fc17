import type { Container, Manifest, PodSpec } from './manifests';

// A container's environment as the kubelet would build it: envFrom ConfigMaps first, then `env`
// (which wins), field references from the pod, Secret values left as references.

export interface SecretRef {
  secret: string;
  key: string;
}

export interface ContainerEnv {
  /** Every variable's value; a Secret's value is `secretValue(ref)`. */
  values: Record<string, string>;
  /** Variables whose value is a Secret's key. */
  fromSecrets: Record<string, SecretRef>;
  /** A ConfigMap, key or field that does not resolve; a variable set twice. */
  problems: string[];
}

/** What stands for a Secret's value: long enough for a token (16 characters and more). */
export const secretValue = ({ secret, key }: SecretRef): string => `k8s-secret:${secret}/${key}`;

/** Data of every ConfigMap in the manifests, by name. */
export function configMapsOf(manifests: Manifest[]): Map<string, Record<string, string>> {
  return new Map(
    manifests
      .filter((m) => m.object.kind === 'ConfigMap')
      .map((m) => [m.object.metadata.name, (m.object.data ?? {}) as Record<string, string>]),
  );
}

export function containerEnv(
  container: Container,
  configMaps: Map<string, Record<string, string>>,
  pod: { name: string },
): ContainerEnv {
  const env: ContainerEnv = { values: {}, fromSecrets: {}, problems: [] };
  const set = (name: string, value: string, from: string) => {
    if (name in env.values) env.problems.push(`${name} is set twice (again by ${from})`);
    env.values[name] = value;
  };
  for (const source of container.envFrom ?? []) {
    const name = source.configMapRef?.name;
    const data = name === undefined ? undefined : configMaps.get(name);
    if (data === undefined) {
      env.problems.push(`envFrom ${JSON.stringify(source)}: no such ConfigMap in the manifests`);
      continue;
    }
    for (const [key, value] of Object.entries(data)) set(key, value, `ConfigMap ${name}`);
  }
  for (const { name, value, valueFrom } of container.env ?? []) {
    if (value !== undefined) set(name, value, 'env');
    else if (valueFrom?.fieldRef?.fieldPath === 'metadata.name') set(name, pod.name, 'env');
    else if (valueFrom?.secretKeyRef) {
      const ref = { secret: valueFrom.secretKeyRef.name, key: valueFrom.secretKeyRef.key };
      set(name, secretValue(ref), 'env');
      env.fromSecrets[name] = ref;
    } else if (valueFrom?.configMapKeyRef) {
      const { name: map, key } = valueFrom.configMapKeyRef;
      const found = configMaps.get(map)?.[key];
      if (found === undefined) env.problems.push(`${name}: ConfigMap ${map} has no key ${key}`);
      else set(name, found, 'env');
    } else env.problems.push(`${name}: a source this check does not resolve (${JSON.stringify(valueFrom)})`);
  }
  return env;
}

/** Secrets a pod uses and the keys it reads from each (from variables and from volumes). */
export function secretsUsed(pod: PodSpec): Map<string, Set<string>> {
  const used = new Map<string, Set<string>>();
  const use = (secret: string, key?: string) => {
    const keys = used.get(secret) ?? new Set<string>();
    if (key !== undefined) keys.add(key);
    used.set(secret, keys);
  };
  for (const container of pod.containers) {
    for (const { valueFrom } of container.env ?? []) {
      if (valueFrom?.secretKeyRef) use(valueFrom.secretKeyRef.name, valueFrom.secretKeyRef.key);
    }
    for (const source of container.envFrom ?? []) if (source.secretRef) use(source.secretRef.name);
  }
  for (const volume of pod.volumes ?? []) {
    if (!volume.secret) continue;
    use(volume.secret.secretName);
    for (const item of volume.secret.items ?? []) use(volume.secret.secretName, item.key);
  }
  return used;
}
