// The command share (issue 32.2): what a sweep's commands may take of a task's unit of work, so
// that the events folded beside them keep the rest (see Task.holdCommands and README.md, "Events first").

/** What the commands of one unit may take: records and fold time (ms). */
export interface CommandCap {
  records: number;
  ms: number;
}

/**
 * COMMAND_SHARE of a unit: ceil(share x COMMIT_MAX_RECORDS) command records (the unit commits
 * early at COMMIT_MAX_RECORDS, so the rest of it stays for events) and share x COMMIT_INTERVAL_MS
 * of fold time (a commit cycle's worth: events of the task keep the rest of each interval).
 * Undefined (no cap) at a share of 1.
 */
export function commandCapOf(
  share: number,
  commitMaxRecords: number,
  commitIntervalMs: number,
): CommandCap | undefined {
  if (share >= 1) return undefined;
  return { records: Math.max(1, Math.ceil(share * commitMaxRecords)), ms: share * commitIntervalMs };
}
