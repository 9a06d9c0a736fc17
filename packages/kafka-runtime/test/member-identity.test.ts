import { AssignerProtocol } from 'kafkajs';
import {
  decodeDuplicateRefusal,
  decodeMemberIdentity,
  decodeMemberTasks,
  encodeMemberData,
  duplicateMembers,
  duplicateRefusalOf,
  encodeDuplicateRefusal,
  encodeMemberIdentity,
  memberIdentityOf,
  type MemberIdentity,
} from '../src/member-identity';

const identity: MemberIdentity = {
  instanceId: 'x',
  startedAt: 1_700_000_000_000,
  host: 'node-1',
  sessionTimeoutMs: 30_000,
};
const metadata = (userData: Buffer) => AssignerProtocol.MemberMetadata.encode({ version: 1, topics: ['t'], userData });

describe('the member identity in the member metadata user data', () => {
  it('round-trips, alone and inside kafkajs member metadata', () => {
    expect(decodeMemberIdentity(encodeMemberIdentity(identity))).toEqual(identity);
    expect(memberIdentityOf(metadata(encodeMemberIdentity(identity)))).toEqual(identity);
  });

  it('reads an old member (empty user data) as unknown', () => {
    expect(decodeMemberIdentity(Buffer.alloc(0))).toBeUndefined();
    expect(memberIdentityOf(metadata(Buffer.alloc(0)))).toBeUndefined();
    expect(memberIdentityOf(Buffer.alloc(0))).toBeUndefined();
    expect(memberIdentityOf(undefined)).toBeUndefined();
  });

  it.each([
    ['random bytes', Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x01, 0x02])],
    ['another format', Buffer.from('{"instanceId":"x"}')],
    ['our magic, broken JSON', Buffer.concat([Buffer.from('SRMI\x01'), Buffer.from('{"instanceId":')])],
    ['our magic, version 0', Buffer.concat([Buffer.from('SRMI\x00'), Buffer.from(JSON.stringify(identity))])],
    ['our magic, a field missing', Buffer.concat([Buffer.from('SRMI\x01'), Buffer.from('{"instanceId":"x"}')])],
    [
      'our magic, a field of the wrong type',
      Buffer.from(`SRMI\x01${JSON.stringify({ ...identity, startedAt: 'now' })}`),
    ],
    ['our magic, an array', Buffer.from('SRMI\x01[1,2]')],
  ])('reads %s as unknown, never throwing', (_what, userData) => {
    expect(decodeMemberIdentity(userData)).toBeUndefined();
    expect(memberIdentityOf(metadata(userData))).toBeUndefined();
  });

  it('reads a truncated or garbled metadata buffer as unknown, never throwing', () => {
    const whole = metadata(encodeMemberIdentity(identity));
    for (let n = 1; n < whole.length; n++) expect(memberIdentityOf(whole.subarray(0, n))).toBeUndefined();
    expect(memberIdentityOf(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]))).toBeUndefined();
  });

  it('reads a later format version, ignoring the fields it adds', () => {
    const later = Buffer.from(`SRMI\x02${JSON.stringify({ ...identity, zone: 'b' })}`);
    expect(decodeMemberIdentity(later)).toEqual(identity);
  });
});

describe('the duplicate refusal in the assignment user data', () => {
  const refusal = { instanceId: 'x', holder: { memberId: 'm-1', host: 'node-1', startedAt: 5 } };

  it('round-trips, alone and inside a kafkajs member assignment', () => {
    expect(decodeDuplicateRefusal(encodeDuplicateRefusal(refusal))).toEqual(refusal);
    const assignment = AssignerProtocol.MemberAssignment.encode({
      version: 1,
      assignment: {},
      userData: encodeDuplicateRefusal(refusal),
    });
    expect(duplicateRefusalOf(assignment)).toEqual(refusal);
  });

  it('reads none from an ordinary assignment, an identity or garbage', () => {
    expect(duplicateRefusalOf(AssignerProtocol.MemberAssignment.encode({ version: 1, assignment: { t: [0] } }))).toBe(
      undefined,
    );
    expect(decodeDuplicateRefusal(encodeMemberIdentity(identity))).toBeUndefined();
    expect(duplicateRefusalOf(Buffer.from([0, 1, 0, 0, 0, 9]))).toBeUndefined();
  });
});

describe('duplicateMembers', () => {
  const id = (instanceId: string, startedAt: number): MemberIdentity => ({ ...identity, instanceId, startedAt });

  it('keeps the earliest start of each instance id and names it in the others’ refusal', () => {
    const duplicates = duplicateMembers([
      { memberId: 'a', identity: id('x', 20) },
      { memberId: 'b', identity: id('x', 10) },
      { memberId: 'c', identity: id('y', 30) },
      { memberId: 'd', identity: id('x', 30) },
    ]);
    expect([...duplicates.keys()].sort()).toEqual(['a', 'd']);
    expect(duplicates.get('a')).toEqual({ instanceId: 'x', holder: { memberId: 'b', host: 'node-1', startedAt: 10 } });
  });

  it('breaks a tie of start times by member id, whatever the order given', () => {
    const members = [
      { memberId: 'm-2', identity: id('x', 10) },
      { memberId: 'm-1', identity: id('x', 10) },
    ];
    expect([...duplicateMembers(members).keys()]).toEqual(['m-2']);
    expect([...duplicateMembers([...members].reverse()).keys()]).toEqual(['m-2']);
  });

  it('never counts a member of unknown identity as a duplicate', () => {
    expect(
      duplicateMembers([
        { memberId: 'a', identity: undefined },
        { memberId: 'b', identity: undefined },
        { memberId: 'c', identity: id('x', 1) },
      ]).size,
    ).toBe(0);
  });
});

describe('the tasks a member holds, in its user data', () => {
  it('round-trips beside the identity and alone, and reads as none from foreign or garbled bytes', () => {
    const who = { instanceId: 'p-1', startedAt: 5, host: 'h', sessionTimeoutMs: 10_000 };
    const stores = [
      [1, 10],
      [2, -1],
      [3, 0],
    ] as const;
    const both = encodeMemberData(who, { owned: [3, 1], stores });
    expect(decodeMemberIdentity(both)).toEqual(who);
    expect(decodeMemberTasks(both)).toEqual({ owned: [3, 1], stores });
    const alone = encodeMemberData(undefined, { owned: [0], stores: [] });
    expect(decodeMemberIdentity(alone)).toBeUndefined();
    expect(decodeMemberTasks(alone)).toEqual({ owned: [0], stores: [] });
    expect(decodeMemberTasks(encodeMemberIdentity(who))).toEqual({ owned: [], stores: [] });
    for (const bytes of [
      undefined,
      Buffer.alloc(0),
      Buffer.from('not ours'),
      Buffer.concat([Buffer.from('SRMI'), Buffer.from([1]), Buffer.from('{"owned":[1,-2],"stores":"x"}')]),
      Buffer.concat([Buffer.from('SRMI'), Buffer.from([1]), Buffer.from('{"owned":[1.5],"stores":[null]}')]),
      Buffer.concat([Buffer.from('SRMI'), Buffer.from([1]), Buffer.from('{"stores":[[1,-2]],"owned":"0"}')]),
      Buffer.concat([Buffer.from('SRMI'), Buffer.from([1]), Buffer.from('{"stores":[[1]]}')]),
      Buffer.concat([Buffer.from('SRMI'), Buffer.from([1]), Buffer.from('{"owned":')]),
    ]) {
      expect(decodeMemberTasks(bytes)).toEqual({ owned: [], stores: [] });
    }
  });
});
