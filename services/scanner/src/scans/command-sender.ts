import { encodeCommand, type UpdateCommand } from '@state-relay/contracts';
import { causes, withDeadline } from '@state-relay/kafka-runtime';
import type { Kafka, Producer } from 'kafkajs';
import type { Logger } from 'pino';
import { INTERNAL_CODES, ScannerError } from '../errors';

/** Where a scan's commands go. */
export interface CommandSink {
  send(commands: readonly UpdateCommand[]): Promise<void>;
}

/** The producer failed to deliver; `retriable` is true when a cause in the chain was retriable. */
export class CommandSendError extends ScannerError {
  override readonly name = 'CommandSendError';
  constructor(topic: string, cause: unknown) {
    super(
      'command_send_failed',
      `sending commands to ${topic} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        cause,
        retriable: retriableChain(cause),
      },
    );
  }
}

/** kafkajs wraps the last retriable error in KafkaJSNumberOfRetriesAttempted (retriable: false). */
function retriableChain(err: unknown): boolean {
  for (const e of causes(err, 6)) {
    if (typeof e !== 'object') return false;
    if ((e as { retriable?: unknown }).retriable === true) return true;
  }
  return false;
}

/** How long one send may take before its producer is given up on; default 40 s. */
export const DEFAULT_SEND_TIMEOUT_MS = 40_000;

/** A send that did not finish in time: its producer is replaced, the send is retried. */
export class CommandSendTimeoutError extends ScannerError<typeof INTERNAL_CODES.COMMAND_SEND_TIMEOUT> {
  override readonly name = 'CommandSendTimeoutError';
  constructor(ms: number) {
    super(INTERNAL_CODES.COMMAND_SEND_TIMEOUT, `no acknowledgement within ${ms} ms; the producer was replaced`, {
      retriable: true,
    });
  }
}

export interface CommandSenderOptions {
  /**
   * How long one send may take: above the 30 s request timeout, below kafkajs's retry cycle on a
   * black-holed connection. See DECISIONS.md, "Command producer replaced after 40 s".
   */
  sendTimeoutMs?: number;
  /** Counts each producer replacement, by reason. */
  onReplaced?: (reason: 'failed' | 'timed_out') => void;
}

/**
 * Sends commands with an idempotent producer, keyed by entity key (so each lands on the partition
 * the processor owns for it). A failed send, or one that outlives `sendTimeoutMs`, replaces the
 * producer: the retry starts on new connections; a command that arrives twice is a duplicate by its id.
 */
export class CommandSender implements CommandSink {
  private producer?: Producer;
  private connecting?: Promise<Producer>;
  private readonly sendTimeoutMs: number;

  constructor(
    private readonly kafka: Kafka,
    private readonly topic: string,
    private readonly logger: Logger,
    private readonly options: CommandSenderOptions = {},
  ) {
    this.sendTimeoutMs = options.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
  }

  async send(commands: readonly UpdateCommand[]): Promise<void> {
    if (commands.length === 0) return;
    let producer: Producer;
    try {
      producer = await this.connected();
    } catch (err) {
      throw new CommandSendError(this.topic, err);
    }
    const sending = producer.send({
      topic: this.topic,
      acks: -1,
      messages: commands.map((c) => ({ key: c.key, value: encodeCommand(c) })),
    });
    try {
      // An abandoned send settles when its producer is torn down.
      await withDeadline(sending, this.sendTimeoutMs, { error: () => new CommandSendTimeoutError(this.sendTimeoutMs) });
    } catch (err) {
      this.retire(producer, err instanceof CommandSendTimeoutError ? 'timed_out' : 'failed', err);
      throw new CommandSendError(this.topic, err);
    }
  }

  async disconnect(): Promise<void> {
    const producer = this.producer ?? (await this.connecting?.catch(() => undefined));
    this.producer = undefined;
    await producer
      ?.disconnect()
      .catch((err: unknown) => this.logger.warn({ err }, 'command producer disconnect failed'));
  }

  /**
   * Drops a producer without waiting for it: kafkajs's disconnect waits for the connection's
   * pending requests, which on a black-holed connection is a full request timeout.
   */
  private retire(producer: Producer, reason: 'failed' | 'timed_out', err: unknown): void {
    if (this.producer === producer) this.producer = undefined;
    this.options.onReplaced?.(reason);
    this.logger.warn({ err, reason }, 'command producer replaced; the next send opens new connections');
    void producer.disconnect().catch(() => undefined);
  }

  private connected(): Promise<Producer> {
    if (this.producer) return Promise.resolve(this.producer);
    this.connecting ??= (async () => {
      const producer = this.kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
      await producer.connect();
      this.producer = producer;
      return producer;
    })().finally(() => (this.connecting = undefined));
    return this.connecting;
  }
}
