import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The benchmark runs the processor, the load generator, the raw pipeline and the relay each
 * in a process of its own, as they would be deployed: the load keeps its schedule while the
 * processor stalls, and the relay's reads never run on the processor's event loop. The
 * parent mostly waits; children talk to it over the fork IPC channel.
 */
export type ChildMessage = { type: string; [field: string]: unknown };

/** Streams of data (not waited for with next()): never kept in the inbox. */
const STREAMED = new Set(['commits', 'progress', 'memory', 'warning', 'tasks', 'joined']);

/** Every child process the benchmark started and has not seen exit: killed if the run is interrupted. */
const alive = new Set<{ kill(): void }>();

export function killAllChildren(): void {
  for (const c of alive) c.kill();
}

export function trackProcess(p: { kill(): void }, exited: Promise<unknown>): void {
  alive.add(p);
  void exited.then(() => alive.delete(p));
}

export class Child {
  private readonly listeners = new Set<(m: ChildMessage) => void>();
  /** Control messages not yet taken by next(): several can arrive in one read of the channel. */
  private readonly inbox: ChildMessage[] = [];
  private readonly exited: Promise<number | null>;
  private exitCode: number | null | undefined;
  stderr = '';

  private constructor(
    readonly name: string,
    private readonly proc: ChildProcess,
  ) {
    proc.on('message', (m: ChildMessage) => {
      if (!STREAMED.has(m.type)) this.inbox.push(m);
      for (const l of [...this.listeners]) l(m);
    });
    proc.stderr!.on('data', (b: Buffer) => {
      this.stderr = (this.stderr + b.toString()).slice(-20_000);
      if (process.env.BENCH_VERBOSE) process.stderr.write(`[${name}] ${b.toString()}`);
    });
    proc.stdout!.on('data', (b: Buffer) => {
      if (process.env.BENCH_VERBOSE) process.stderr.write(`[${name}] ${b.toString()}`);
    });
    this.exited = new Promise((resolve) =>
      proc.once('exit', (code) => {
        this.exitCode = code;
        resolve(code);
      }),
    );
    trackProcess(this, this.exited);
  }

  /** Forks `bench/dist/children/<script>.js` and hands it its configuration. */
  static start(name: string, script: string, config: unknown, execArgv: string[] = []): Child {
    const proc = fork(join(__dirname, 'children', `${script}.js`), [], {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      execArgv,
      env: { ...process.env, KAFKAJS_NO_PARTITIONER_WARNING: '1' },
    });
    const child = new Child(name, proc);
    child.send({ type: 'config', config });
    return child;
  }

  get pid(): number {
    return this.proc.pid!;
  }

  send(message: ChildMessage): void {
    if (this.proc.connected) this.proc.send(message);
  }

  on(listener: (m: ChildMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The first message of `type` not taken yet (waiting for it); fails if the child reports an error or exits first. */
  next<T extends ChildMessage>(type: string, timeoutMs = 300_000): Promise<T> {
    const take = (): T | undefined => {
      const error = this.inbox.find((m) => m.type === 'error');
      if (error) throw new Error(`${this.name} failed: ${String(error.message)}\n${this.stderr}`);
      const i = this.inbox.findIndex((m) => m.type === type);
      return i < 0 ? undefined : (this.inbox.splice(i, 1)[0] as T);
    };
    return new Promise<T>((resolve, reject) => {
      const check = (): boolean => {
        try {
          const m = take();
          if (m === undefined) return false;
          done(undefined, m);
        } catch (err) {
          done(err as Error);
        }
        return true;
      };
      const timer = setTimeout(
        () => done(new Error(`${this.name}: no "${type}" within ${timeoutMs} ms\n${this.stderr}`)),
        timeoutMs,
      );
      const off = this.on(() => void check());
      const onExit = (code: number | null) => {
        if (!check()) done(new Error(`${this.name} exited (${code}) before "${type}"\n${this.stderr}`));
      };
      this.proc.once('exit', onExit);
      const done = (err?: Error, m?: T) => {
        clearTimeout(timer);
        off();
        this.proc.off('exit', onExit);
        if (err) reject(err);
        else resolve(m!);
      };
      check();
    });
  }

  peakRss(): number | undefined {
    return peakRssOf(this.proc.pid!);
  }

  /** Asks the child to stop cleanly; kills it if it has not exited within `graceMs`. */
  async stop(graceMs = 30_000): Promise<number | null> {
    if (this.exitCode !== undefined) return this.exitCode;
    this.send({ type: 'stop' });
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), graceMs);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }

  kill(): void {
    if (this.exitCode === undefined) this.proc.kill('SIGKILL');
  }
}

/** Peak resident set size so far (VmHWM) of a process, in bytes; undefined once it is gone. */
export function peakRssOf(pid: number): number | undefined {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}

/** The child side: receives its configuration, reports errors, and runs `main`. */
export function runChild<C>(main: (config: C, send: (m: ChildMessage) => void) => Promise<void>): void {
  const send = (m: ChildMessage) => {
    if (process.connected) process.send!(m);
  };
  const fail = (err: unknown) => {
    send({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    setTimeout(() => process.exit(1), 100);
  };
  process.on('unhandledRejection', fail);
  process.on('uncaughtException', fail);
  process.once('message', (m: ChildMessage) => {
    if (m.type !== 'config') return fail(new Error(`expected the config message first, got ${m.type}`));
    main(m.config as C, send).catch(fail);
  });
  // The parent went away (it crashed or was interrupted): do not linger.
  process.on('disconnect', () => process.exit(0));
}
