import {
  commandIdFor,
  evaluateCondition,
  type Action,
  type AggregateInput,
  type Condition,
  type TaskContext,
  type UpdateCommand,
} from './lib';

/**
 * The sweep done *inside* the processing loop — Kafka Streams' punctuator — which is what the
 * topic relay exists to replace. The benchmark's processor (children/processor-child.ts) wires
 * `slice` into its ProcessingExtension.afterBatch to measure how much it stalls event
 * processing; the service never runs it.
 *
 * After a batch of task p is folded, still inside the fetch loop, the next slice of p's
 * store is walked in key order (TaskContext.entitiesAfter); each entity matching the condition
 * becomes a command input that goes through the same `aggregate` path into the task's open unit
 * of work (TaskContext.foldInputs), committed with the task's next transaction. `keysPerSlice:
 * Infinity` walks the whole store of the task in one synchronous go (blocking); a finite K
 * walks K keys per slice (chunked). A task only advances when it gets a batch, as a
 * stream-time punctuator would.
 */
export interface InLoopSweepOptions {
  sweepId: string;
  condition: Condition;
  action: Action;
  /** The instant relative conditions are resolved against, as a scan's asOf. */
  asOf: number;
  /** Keys walked per slice; Infinity = the whole task store at once. */
  keysPerSlice: number;
  /**
   * At most one slice per task this often (ms), as a wall-clock punctuator is scheduled
   * (Kafka Streams' chunked punctuator: 1,000 keys every 100 ms). 0: a slice after every batch.
   */
  sliceEveryMs?: number;
  /** The tasks to sweep; the sweep is done when each has walked its whole store. */
  tasks: number[];
}

/** Reading the whole store in pages still runs synchronously: it only bounds each query. */
const PAGE = 5_000;

export class InLoopSweep {
  private readonly cursors = new Map<number, string | null>();
  private readonly lastSlice = new Map<number, number>();
  private remaining: number;
  private resolveDone!: () => void;
  /** Resolves when every task has swept its whole store. */
  readonly done = new Promise<void>((resolve) => (this.resolveDone = resolve));
  readonly progress = { walked: 0, matched: 0, changes: 0, slices: 0 };

  constructor(private readonly options: InLoopSweepOptions) {
    if (!(options.keysPerSlice >= 1)) throw new RangeError('keysPerSlice must be at least 1 (or Infinity)');
    for (const t of options.tasks) this.cursors.set(t, null);
    this.remaining = this.cursors.size;
    if (this.remaining === 0) this.resolveDone();
  }

  /** One slice of `task`'s sweep; a no-op for tasks that are done or not part of it. */
  slice(task: TaskContext): void {
    if (!this.cursors.has(task.id)) return;
    const every = this.options.sliceEveryMs ?? 0;
    if (every > 0) {
      const now = Date.now();
      if (now - (this.lastSlice.get(task.id) ?? 0) < every) return;
      this.lastSlice.set(task.id, now);
    }
    let cursor = this.cursors.get(task.id)!;
    const budget = this.options.keysPerSlice;
    const inputs: Array<[string, AggregateInput]> = [];
    let walked = 0;
    let finished = false;
    while (walked < budget) {
      const want = Math.min(PAGE, budget - walked);
      const page = task.entitiesAfter(cursor, want);
      for (const [key, entity] of page) {
        if (evaluateCondition(this.options.condition, entity.value, { asOf: this.options.asOf })) {
          inputs.push([key, { kind: 'command', command: this.command(key) }]);
        }
      }
      walked += page.length;
      if (page.length > 0) cursor = page[page.length - 1]![0];
      if (page.length < want) {
        finished = true;
        break;
      }
    }
    const changes = task.foldInputs(inputs);
    this.progress.walked += walked;
    this.progress.matched += inputs.length;
    this.progress.changes += changes;
    this.progress.slices++;
    if (finished) {
      this.cursors.delete(task.id);
      if (--this.remaining === 0) this.resolveDone();
    } else {
      this.cursors.set(task.id, cursor);
    }
  }

  private command(key: string): UpdateCommand {
    const { sweepId, asOf, condition, action } = this.options;
    return { commandId: commandIdFor(sweepId, key), scanId: sweepId, key, asOf, condition, action, issuedAt: asOf };
  }
}
