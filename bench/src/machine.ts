import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';
import { kafkaImage } from './lib';

export interface Machine {
  date: string;
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  kernel: string;
  node: string;
  kafkajs: string;
  kafkaImage: string;
  containerRuntime: string;
  /** 1-minute load average when the run started: above the CPU count, other work competed. */
  loadAverageAtStart: number;
}

/** Where the figures come from: they only mean something next to this. */
export function describeMachine(): Machine {
  const kafkajsPackage = require.resolve('kafkajs/package.json');
  return {
    date: new Date().toISOString(),
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    kernel: release(),
    node: process.version,
    kafkajs: (JSON.parse(readFileSync(kafkajsPackage, 'utf8')) as { version: string }).version,
    kafkaImage: kafkaImage(),
    containerRuntime: process.env.STATE_RELAY_RUNTIME ?? 'docker',
    loadAverageAtStart: Math.round(loadavg()[0]! * 10) / 10,
  };
}

/** The code a run measured: the checked-out commit, and whether the working tree differed from it. */
export interface SourceState {
  commit: string;
  subject: string;
  /** Paths outside bench/ and docs/ that differ from the commit (another change in progress was measured with it). */
  uncommitted: string[];
}

export function describeSource(root: string): SourceState {
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    return {
      commit: git('rev-parse', '--short=10', 'HEAD'),
      subject: git('log', '-1', '--format=%s').slice(0, 120),
      uncommitted: git('status', '--porcelain', '--untracked-files=no', '--', '.', ':!bench', ':!docs')
        .split('\n')
        .filter(Boolean)
        .map((l) => l.slice(3)),
    };
  } catch {
    return { commit: 'unknown (not a git checkout)', subject: '', uncommitted: [] };
  }
}
