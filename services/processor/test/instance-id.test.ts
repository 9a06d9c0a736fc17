import { AssignerProtocol } from 'kafkajs';
import { encodeMemberIdentity, type MemberIdentity } from '@state-relay/kafka-runtime';
import pino from 'pino';
import { InstanceIdInUseError } from '../src/errors';
import { assertInstanceIdFree } from '../src/kafka/instance-id';

const silent = pino({ level: 'silent' });
const identity = (instanceId: string, sessionTimeoutMs = 40): MemberIdentity => ({
  instanceId,
  startedAt: Date.UTC(2026, 0, 2, 3, 4, 5),
  host: 'node-7',
  sessionTimeoutMs,
});
const member = (memberId: string, who?: MemberIdentity) => ({
  memberId,
  clientId: 'app-processor',
  clientHost: '/10.0.0.7',
  memberMetadata: AssignerProtocol.MemberMetadata.encode({
    version: 1,
    topics: ['events'],
    userData: who ? encodeMemberIdentity(who) : Buffer.alloc(0),
  }),
  memberAssignment: Buffer.alloc(0),
});
type Member = ReturnType<typeof member>;

/** An admin whose DescribeGroups answers each state in turn, the last one forever. */
function adminAnswering(...answers: Array<{ state: string; members?: Member[] }>) {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    describeGroups: jest.fn(async () => {
      const { state, members = [] } = answers[Math.min(calls++, answers.length - 1)]!;
      return { groups: [{ groupId: 'app', state, protocol: '', protocolType: 'consumer', errorCode: 0, members }] };
    }),
  };
}

const check = (admin: ReturnType<typeof adminAnswering>, extra = {}) =>
  assertInstanceIdFree({
    admin: admin as never,
    groupId: 'app',
    instanceId: 'x',
    logger: silent,
    graceMs: 20,
    pollMs: 5,
    ...extra,
  });

describe('the INSTANCE_ID start check', () => {
  it.each([
    ['the group has no member', { state: 'Empty' }],
    ['the coordinator has no such group', { state: 'Dead' }],
    ['no member carries the id', { state: 'Stable', members: [member('m-1', identity('y')), member('m-2')] }],
  ])('starts at once when %s', async (_what, answer) => {
    const admin = adminAnswering(answer);
    await expect(check(admin)).resolves.toBeUndefined();
    expect(admin.calls).toBe(1);
  });

  it('starts once a holder leaves within its session timeout: this instance’s own crashed previous life', async () => {
    const admin = adminAnswering(
      { state: 'Stable', members: [member('m-old', identity('x', 1_000)), member('m-2')] },
      { state: 'Stable', members: [member('m-old', identity('x', 1_000)), member('m-2')] },
      { state: 'Empty' },
    );
    await expect(check(admin)).resolves.toBeUndefined();
  });

  it('starts as soon as the rebalance that removed the holder begins, so it can join that rebalance', async () => {
    const admin = adminAnswering(
      { state: 'Stable', members: [member('m-old', identity('x', 60_000)), member('m-2', identity('y'))] },
      { state: 'PreparingRebalance', members: [member('m-old'), member('m-2')] }, // listed, without metadata
      { state: 'PreparingRebalance', members: [member('m-2')] },
    );
    await expect(check(admin)).resolves.toBeUndefined();
    expect(admin.calls).toBe(3);
  });

  it('refuses a holder still listed after its session timeout while the group rebalances', async () => {
    const admin = adminAnswering(
      { state: 'Stable', members: [member('m-live', identity('x'))] },
      { state: 'PreparingRebalance', members: [member('m-live'), member('m-3')] },
    );
    await expect(check(admin)).rejects.toBeInstanceOf(InstanceIdInUseError);
  });

  it('refuses when a holder is still a member after its session timeout, naming the id, the member and what to do', async () => {
    const admin = adminAnswering({ state: 'Stable', members: [member('m-2'), member('m-live', identity('x'))] });
    const refused = await check(admin, { keptIn: '/data/instance-id' }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(InstanceIdInUseError);
    expect(refused).toMatchObject({
      code: 'INSTANCE_ID_IN_USE',
      retriable: false,
      instanceId: 'x',
      holder: { memberId: 'm-live', clientHost: '/10.0.0.7', host: 'node-7' },
    });
    const { message } = refused as Error;
    expect(message).toContain('INSTANCE_ID "x" (kept in /data/instance-id)');
    expect(message).toContain('member m-live, client host /10.0.0.7, host node-7, started 2026-01-02T03:04:05.000Z');
    expect(message).toContain('Give each instance its own INSTANCE_ID');
    expect(message).toContain('delete STATE_DIR/instance-id');
    expect(admin.calls).toBeGreaterThan(1); // it waited out the session timeout first
  });

  it('starts, with a warning, when the group keeps rebalancing past the wait (the assigner still guards)', async () => {
    const warn = jest.fn();
    const admin = adminAnswering({ state: 'PreparingRebalance' });
    await expect(
      check(admin, { settleWithinMs: 30, logger: { ...silent, warn, info: jest.fn() } }),
    ).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ instanceId: 'x' }),
      expect.stringContaining('rebalancing'),
    );
  });
});
