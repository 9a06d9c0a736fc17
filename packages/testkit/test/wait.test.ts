import { uniqueName, waitUntil } from '../src';

describe('waitUntil', () => {
  it('returns the first truthy value the probe gives', async () => {
    let calls = 0;
    const value = await waitUntil(() => (++calls >= 3 ? `done after ${calls}` : undefined), { intervalMs: 1 });
    expect(value).toBe('done after 3');
  });

  it('fails at the deadline naming what it waited for and the last error', async () => {
    await expect(
      waitUntil(
        () => {
          throw new Error('broker down');
        },
        { timeoutMs: 30, intervalMs: 5, message: 'the broker' },
      ),
    ).rejects.toThrow(/timed out after 30 ms waiting for the broker: last error: broker down/);
  });
});

describe('uniqueName', () => {
  it('never repeats', () => {
    const names = new Set(Array.from({ length: 1000 }, () => uniqueName('t')));
    expect(names.size).toBe(1000);
  });
});
