import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times (USER_HZ): 100 on every Linux we run on. */
const TICKS = 100;

/** CPU seconds (user + system) a process has used so far; undefined once it is gone. */
export function cpuSecondsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces, hence the last ')').
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return undefined;
  }
}

/**
 * Our broker's JVM: its main class, and the client port in its environment (other test runs
 * may have brokers of their own on this machine). Container processes are visible to the host.
 */
export function brokerPid(bootstrap: string): number | undefined {
  const port = bootstrap.split(':').pop();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('kafka.Kafka')) continue;
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').includes(`HOST://:${port},`)) return Number(entry);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return undefined;
}

/** Busy and total CPU seconds of the whole machine (all cores), from /proc/stat. */
function machineTicks(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const t = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = (t[3] ?? 0) + (t[4] ?? 0);
  const total = t.reduce((a, b) => a + b, 0);
  return { busy: (total - idle) / TICKS, total: total / TICKS };
}

/** Microseconds during which some runnable task waited for a CPU (Linux PSI), if the kernel reports it. */
function cpuPressureUs(): number | undefined {
  try {
    const some = readFileSync('/proc/pressure/cpu', 'utf8').split('\n')[0]!;
    const total = /total=(\d+)/.exec(some)?.[1];
    return total === undefined ? undefined : Number(total);
  } catch {
    return undefined;
  }
}

export interface CpuSnapshot {
  at: number;
  processes: Record<string, number | undefined>;
  machine: { busy: number; total: number };
  pressureUs?: number;
}

export function snapshot(pids: Record<string, number | undefined>): CpuSnapshot {
  const processes: Record<string, number | undefined> = {};
  for (const [name, pid] of Object.entries(pids)) processes[name] = pid === undefined ? undefined : cpuSecondsOf(pid);
  const pressureUs = cpuPressureUs();
  return { at: Date.now(), processes, machine: machineTicks(), ...(pressureUs === undefined ? {} : { pressureUs }) };
}

/**
 * Cores used per process between two snapshots, how busy the whole machine was (0..1, other
 * tenants included), and CPU pressure: the share of the time some runnable task was waiting
 * for a CPU (0..1; high means everything on the machine was being slowed down).
 */
export interface CpuUse {
  cores: Record<string, number>;
  machineBusy: number;
  pressure?: number;
}

export function cpuBetween(a: CpuSnapshot, b: CpuSnapshot): CpuUse {
  const seconds = Math.max(0.001, (b.at - a.at) / 1000);
  const cores: Record<string, number> = {};
  for (const [name, before] of Object.entries(a.processes)) {
    const after = b.processes[name];
    if (before !== undefined && after !== undefined) cores[name] = Math.round(((after - before) / seconds) * 100) / 100;
  }
  const total = b.machine.total - a.machine.total;
  const pressure =
    a.pressureUs !== undefined && b.pressureUs !== undefined
      ? Math.round(((b.pressureUs - a.pressureUs) / (seconds * 1e6)) * 100) / 100
      : undefined;
  return {
    cores,
    machineBusy: total > 0 ? Math.round(((b.machine.busy - a.machine.busy) / total) * 100) / 100 : NaN,
    ...(pressure === undefined ? {} : { pressure }),
  };
}
