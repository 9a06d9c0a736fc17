// The CLI's exit codes, one map; the scanner README's "CLI" section documents each.

export const EXIT = {
  /** The command did what it says; for `scans create` (following) and `scans follow`: the scan completed. */
  ok: 0,
  /** The followed scan ended cancelled or failed. */
  notCompleted: 1,
  /** Bad flags or arguments, no token, an unreadable or non-JSON --file / --condition / --action. */
  usage: 2,
  /** The API answered with an error (other than not found), or could not be reached. */
  api: 3,
  /** No such scan or schedule (404 scan_not_found / schedule_not_found). */
  notFound: 4,
  /** Ctrl-C (SIGINT) while following: the scan goes on. 128 + SIGINT's 2, as shells report it. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The API's codes that mean "no such scan or schedule": exit 4 rather than 3. */
export const NOT_FOUND_CODES: ReadonlySet<string> = new Set(['scan_not_found', 'schedule_not_found']);
