import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh directory under the OS tmp dir, and whatever was opened in it, removed by cleanup(). */
export class TmpDir {
  readonly path = mkdtempSync(join(tmpdir(), 'state-relay-store-'));
  private readonly closers: Array<() => void> = [];

  /** Register something to close before the directory goes. Returns it for chaining. */
  track<T extends { close(): void }>(resource: T): T {
    this.closers.push(() => resource.close());
    return resource;
  }

  cleanup(): void {
    for (const close of this.closers.splice(0).reverse()) close();
    rmSync(this.path, { recursive: true, force: true });
  }
}
