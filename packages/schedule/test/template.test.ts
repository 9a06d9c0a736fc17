import { ScheduleArgumentError, resolveTemplate } from '../src';
import { at } from './helpers';

const template = {
  condition: {
    all: [
      { field: 'status', op: 'eq', value: 'active' },
      { field: 'lastActiveAt', op: 'lt', value: { $ago: 'P30D' } },
    ],
  },
  action: { domain: 'mark_dormant' },
  options: { rate: 500, dryRun: false },
};

describe('resolveTemplate', () => {
  it('makes the run time the scan asOf and keeps relative times relative', () => {
    const runAt = at('2025-06-01T03:00:00Z');
    expect(resolveTemplate(template, runAt)).toEqual({ ...template, asOf: runAt });
  });

  it('so each run judges "30 days ago" from its own time', () => {
    const first = resolveTemplate(template, at('2025-06-01T03:00:00Z'));
    const second = resolveTemplate(template, at('2025-06-02T03:00:00Z'));
    expect(second.condition).toEqual(first.condition);
    expect(second.asOf - first.asOf).toBe(86_400_000);
  });

  it('copies: changing a resolved scan never changes the stored template', () => {
    const scan = resolveTemplate(template, at('2025-06-01T03:00:00Z'));
    (scan.condition.all[0] as { value: string }).value = 'closed';
    scan.options!.rate = 1;
    expect(template.condition.all[0]?.value).toBe('active');
    expect(template.options.rate).toBe(500);
  });

  it('leaves options out when the template has none', () => {
    const scan = resolveTemplate({ condition: { field: 'a', op: 'exists' }, action: { delete: true } }, 1000);
    expect(scan).toEqual({ condition: { field: 'a', op: 'exists' }, action: { delete: true }, asOf: 1000 });
    expect('options' in scan).toBe(false);
  });

  it('refuses a run time that is not whole epoch ms', () => {
    for (const bad of [NaN, -1, 1.5]) expect(() => resolveTemplate(template, bad)).toThrow(ScheduleArgumentError);
  });
});
