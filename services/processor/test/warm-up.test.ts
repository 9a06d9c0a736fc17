import { accountsDomain } from '@state-relay/accounts';
import { warmCommandPath } from '../src/tasks/warm-up';
import { counterDomain } from './counter-domain';

// The start's warm-up (issue 32.1): synthetic commands through the real fold, nothing kept.

describe('warmCommandPath', () => {
  it('folds every synthetic command through the whole path (condition true, action applied)', () => {
    const warm = warmCommandPath(accountsDomain, 'commands', 600);
    expect(warm.commands).toBe(600);
    expect(warm.outcomes).toEqual({ applied: 600 });
  });

  it('runs on any domain: the synthetic entity is the same JSON whatever the domain folds', () => {
    expect(warmCommandPath(counterDomain, 'commands', 10)).toMatchObject({ commands: 10, outcomes: { applied: 10 } });
  });
});
