import { join } from 'node:path';
import * as ts from 'typescript';
import { KUBERNETES_DIR, type Manifest } from './manifests';

// Two checks against the Kubernetes API's own definitions, both from the kubernetes-models package
// (generated from the Kubernetes 1.33 OpenAPI document):
// - its JSON-schema validator per kind (ajv): types, required fields, formats;
// - its TypeScript declarations of the same kinds, through the compiler's excess-property check:
//   a field the API does not have (a typo, a field at the wrong level), which the OpenAPI schemas
//   leave open and the validator lets through, while the API server refuses it (kubectl's
//   default --validate=strict). The compiler names the first such field of each document.

interface KubernetesModel {
  validate(): void;
}
type ModelClass = new (data: object) => KubernetesModel;

/** The package's module of a kind: kubernetes-models/<group/version>/<Kind> (core: v1/<Kind>). */
function modulePath({ apiVersion, kind }: { apiVersion: string; kind: string }): string {
  return `kubernetes-models/${apiVersion}/${kind}`;
}

/** What the kind's JSON-schema validator says of a document; empty when valid. */
export function schemaProblems(manifest: Manifest): string[] {
  let Model: ModelClass;
  try {
    Model = (require(modulePath(manifest.object)) as Record<string, ModelClass>)[manifest.object.kind]!;
  } catch {
    return [`${manifest.where}: no schema for ${manifest.object.apiVersion} ${manifest.object.kind}`];
  }
  try {
    new Model(manifest.object).validate();
    return [];
  } catch (err) {
    return [`${manifest.where}: ${(err as Error).message}`];
  }
}

/**
 * Fields the kinds' declarations do not have, one line per problem: each document becomes a typed
 * constant of a generated TypeScript file (in memory), which is type-checked.
 */
export function unknownFieldProblems(manifests: Manifest[]): string[] {
  const file = join(KUBERNETES_DIR, '__manifest-types__.ts');
  const imports = manifests.map((m, i) => `import type { I${m.object.kind} as T${i} } from '${modulePath(m.object)}';`);
  const constants = manifests.map((m, i) => `export const d${i}: T${i} = ${JSON.stringify(m.object)};`);
  const text = [...imports, ...constants].join('\n');

  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    lib: ['lib.es2022.d.ts'],
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    // The package's files are laid out by kind (apps/v1/StatefulSet.d.ts): found without its exports map.
    moduleResolution: ts.ModuleResolutionKind.Node10,
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, language, ...rest) =>
    name === file ? ts.createSourceFile(name, text, language) : getSourceFile.call(host, name, language, ...rest);
  host.fileExists = (name) => name === file || fileExists.call(host, name);
  host.readFile = (name) => (name === file ? text : readFile.call(host, name));

  const program = ts.createProgram([file], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file?.fileName === file && d.start !== undefined)
    .map((d) => {
      const line = d.file!.getLineAndCharacterOfPosition(d.start!).line;
      const where = line < imports.length ? manifests[line]! : manifests[line - imports.length]!;
      // The constants' keys are quoted JSON: '"replica"' reads as 'replica'.
      const message = ts.flattenDiagnosticMessageText(d.messageText, ' ').replace(/'"([^"']+)"'/g, "'$1'");
      return `${where.where}: ${message}`;
    });
}
