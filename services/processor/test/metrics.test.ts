import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMMAND_OUTCOMES, DEAD_LETTER_CODES, DECODE_ERROR_CODES } from '@state-relay/contracts';
import { metricsTableDrift } from '@state-relay/service-kit';
import { createProcessorMetrics } from '../src/metrics';
import { TaskFailureKinds } from '../src/tasks/errors';
import { TASK_STATES } from '../src/tasks/task';

describe("the processor's metrics", () => {
  it("are what README.md's metrics table says: every metric, its type and labels", () => {
    const readme = readFileSync(join(__dirname, '../README.md'), 'utf8');
    expect(metricsTableDrift(createProcessorMetrics().registry, readme)).toEqual([]);
  });

  it('export every value of a closed label set at 0 before anything happened', async () => {
    const text = await createProcessorMetrics().registry.metrics();
    const zero = (name: string, label: string, value: string) =>
      expect(text).toContain(`\n${name}{${label}="${value}"} 0\n`);
    for (const state of TASK_STATES.filter((s) => s !== 'CLOSED')) zero('processor_tasks', 'state', state);
    for (const to of TASK_STATES) zero('processor_task_transitions_total', 'to', to);
    for (const kind of Object.values(TaskFailureKinds)) zero('processor_task_failures_total', 'kind', kind);
    for (const outcome of [...COMMAND_OUTCOMES, 'dead_letter']) zero('processor_commands_total', 'outcome', outcome);
    for (const code of [...Object.values(DECODE_ERROR_CODES), ...Object.values(DEAD_LETTER_CODES)])
      zero('processor_dead_letters_total', 'code', code);
    zero('processor_instance_transactions_total', 'outcome', 'committed');
  });
});
