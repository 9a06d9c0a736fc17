// `schedules list|get|create|pause|resume|delete`.
import type { CliRequest } from './args';
import { EXIT, type ExitCode } from './exit-codes';
import { scheduleListText, scheduleText, when } from './format';
import type { CommandContext } from './scan-commands';

type ScheduleRequest = Extract<CliRequest, { command: `schedules ${string}` }>;

export async function runScheduleCommand(request: ScheduleRequest, ctx: CommandContext): Promise<ExitCode> {
  const { client, out } = ctx;
  switch (request.command) {
    case 'schedules list': {
      const list = await client.listSchedules();
      out.result(list, scheduleListText(list.schedules));
      break;
    }
    case 'schedules get': {
      const schedule = await client.getSchedule(request.id);
      out.result(schedule, scheduleText(schedule));
      break;
    }
    case 'schedules create': {
      const s = await client.createSchedule(request.body);
      out.result(s, `schedule ${s.id} created: "${s.name}", ${when(s)}, next run ${s.nextRunAt ?? '-'}`);
      break;
    }
    case 'schedules pause': {
      const s = await client.setSchedulePaused(request.id, true);
      out.result(s, `schedule ${s.id} paused`);
      break;
    }
    case 'schedules resume': {
      const s = await client.setSchedulePaused(request.id, false);
      out.result(s, `schedule ${s.id} resumed; next run ${s.nextRunAt ?? '-'}`);
      break;
    }
    case 'schedules delete': {
      await client.deleteSchedule(request.id);
      out.result({ id: request.id, deleted: true }, `schedule ${request.id} deleted; its scans stay`);
      break;
    }
  }
  return EXIT.ok;
}
