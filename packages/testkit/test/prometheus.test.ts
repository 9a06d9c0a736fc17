import { metricSum } from '../src/prometheus';

describe('metricSum', () => {
  const text = [
    '# HELP processor_task_failures_total Tasks that failed',
    '# TYPE processor_task_failures_total counter',
    'processor_task_failures_total{kind="fenced"} 2',
    'processor_task_failures_total{kind="commit"} 1',
    'processor_task_failures_total_extra 100',
    'processor_tasks_owned 4',
  ].join('\n');

  it('adds the samples of one metric, optionally only those with a label', () => {
    expect(metricSum(text, 'processor_task_failures_total')).toBe(3);
    expect(metricSum(text, 'processor_task_failures_total', 'kind="fenced"')).toBe(2);
    expect(metricSum(text, 'processor_tasks_owned')).toBe(4);
  });

  it('is 0 for a metric that has no sample yet, and never counts a longer name', () => {
    expect(metricSum(text, 'processor_backpressure_pauses_total')).toBe(0);
    expect(metricSum(text, 'processor_task')).toBe(0);
  });
});
