import type { Admin, Kafka } from 'kafkajs';
import { withDeadline } from './deadline';
import { KafkaRuntimeError, KafkaRuntimeErrorCodes } from './errors';

/** The admin calls the services make. */
export type AdminCalls = Pick<
  Admin,
  'fetchTopicOffsets' | 'fetchOffsets' | 'describeConfigs' | 'describeGroups' | 'listTopics'
>;

/** How long one admin call may take by default: longer than a request timeout (30 s). */
export const DEFAULT_ADMIN_CALL_TIMEOUT_MS = 40_000;

/** An admin call that did not finish in time. */
export class AdminCallTimeoutError extends KafkaRuntimeError {
  constructor(call: string, ms: number) {
    super(KafkaRuntimeErrorCodes.ADMIN_CALL_TIMEOUT, `admin ${call} got no answer within ${ms} ms`, {
      retriable: true,
    });
    this.name = 'AdminCallTimeoutError';
  }
}

export interface ReplaceableAdminOptions {
  /** How long one call may take before its client is given up on; default 40 s. */
  callTimeoutMs?: number;
  /** Told once per replacement, with the failure. */
  onReplaced?: (call: string, err: unknown) => void;
}

/**
 * An admin client that is replaced when a call fails or outlives `callTimeoutMs`, so the next call
 * opens new connections: kafkajs retries on a black-holed connection, which never answers
 * (see DECISIONS.md, 'An admin client is replaced after any failed call').
 */
export class ReplaceableAdmin implements AdminCalls {
  private admin?: Admin;
  private connecting?: Promise<Admin>;
  private readonly callTimeoutMs: number;

  constructor(
    private readonly kafka: Kafka,
    private readonly options: ReplaceableAdminOptions = {},
  ) {
    this.callTimeoutMs = options.callTimeoutMs ?? DEFAULT_ADMIN_CALL_TIMEOUT_MS;
  }

  async connect(): Promise<void> {
    await this.current();
  }

  async disconnect(): Promise<void> {
    const admin = this.admin ?? (await this.connecting?.catch(() => undefined));
    this.admin = undefined;
    await admin?.disconnect();
  }

  fetchTopicOffsets: Admin['fetchTopicOffsets'] = (topic) =>
    this.call('fetchTopicOffsets', (a) => a.fetchTopicOffsets(topic));
  fetchOffsets: Admin['fetchOffsets'] = (request) => this.call('fetchOffsets', (a) => a.fetchOffsets(request));
  describeConfigs: Admin['describeConfigs'] = (request) =>
    this.call('describeConfigs', (a) => a.describeConfigs(request));
  describeGroups: Admin['describeGroups'] = (groupIds) =>
    this.call('describeGroups', (a) => a.describeGroups(groupIds));
  listTopics: Admin['listTopics'] = () => this.call('listTopics', (a) => a.listTopics());

  private async call<T>(name: string, run: (admin: Admin) => Promise<T>): Promise<T> {
    let admin: Admin | undefined;
    try {
      // An abandoned call settles when its client is torn down.
      return await withDeadline(
        this.current().then((a) => run((admin = a))),
        this.callTimeoutMs,
        { error: () => new AdminCallTimeoutError(name, this.callTimeoutMs) },
      );
    } catch (err) {
      this.retire(admin, name, err);
      throw err;
    }
  }

  /** Drops the client a call failed on, unless an earlier failure already did. */
  private retire(admin: Admin | undefined, call: string, err: unknown): void {
    if (admin !== undefined && this.admin !== admin) return;
    const old = this.admin;
    this.admin = undefined;
    void old?.disconnect().catch(() => undefined);
    this.options.onReplaced?.(call, err);
  }

  private current(): Promise<Admin> {
    if (this.admin) return Promise.resolve(this.admin);
    this.connecting ??= (async () => {
      const admin = this.kafka.admin();
      try {
        await admin.connect();
      } catch (err) {
        void admin.disconnect().catch(() => undefined);
        throw err;
      }
      this.admin = admin;
      return admin;
    })().finally(() => (this.connecting = undefined));
    return this.connecting;
  }
}
