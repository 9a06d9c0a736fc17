import { encodeCommand, type UpdateCommand } from '@state-relay/contracts';
import type { Kafka, Producer } from 'kafkajs';
import type { Logger } from 'pino';
import { ScannerError } from './errors';

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
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 6; depth++) {
    if ((e as { retriable?: unknown }).retriable === true) return true;
    e = (e as { cause?: unknown }).cause ?? (e as { originalError?: unknown }).originalError;
  }
  return false;
}

/**
 * Sends commands with an idempotent producer (no duplicates from producer retries), keyed by
 * entity key so the default partitioner puts each on the partition the processor owns for that
 * key. After a failure the producer is replaced, so a retry starts from a clean sequence.
 */
export class CommandSender implements CommandSink {
  private producer?: Producer;
  private connecting?: Promise<Producer>;

  constructor(
    private readonly kafka: Kafka,
    private readonly topic: string,
    private readonly logger: Logger,
  ) {}

  async send(commands: readonly UpdateCommand[]): Promise<void> {
    if (commands.length === 0) return;
    const producer = await this.connected();
    try {
      await producer.send({
        topic: this.topic,
        acks: -1,
        messages: commands.map((c) => ({ key: c.key, value: encodeCommand(c) })),
      });
    } catch (err) {
      this.producer = undefined;
      await producer.disconnect().catch(() => undefined);
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
