// The entry of `pnpm faults` and `pnpm soak` (root package.json), run under
// scripts/with-runtime.sh so the container runtime and the base images are there:
//   pnpm faults [--runs N] [--seed S] [--keys K] [--rate R|auto] [--load E] [--faults MIN-MAX] [--parallel P] [--exactly-once v1|v2] [--brokers 1|3] [--chunk C] [--resume] [--no-docs]
//   pnpm faults:report [--brokers 1|3] (the campaign block of docs/faults.md from docs/faults/campaign.json, or -brokers3)
//   pnpm soak [--minutes M] [--rate E] [--keys K] [--sweep-every S] [--fault-every S] [--exactly-once v1|v2] [--no-docs]
// Plain JavaScript on purpose: it only reads the options and starts jest, which runs the
// TypeScript (campaign.cli.ts, soak.cli.ts) with the repo's own transform and gives the
// scenario's checks jest's `expect`. No build step, nothing to install.
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const MODES = {
  faults: {
    file: 'campaign.cli.ts',
    defaults: {
      runs: 5,
      seed: null,
      keys: 2000,
      rate: 'auto',
      load: 200,
      faults: '2-5',
      parallel: 1,
      'exactly-once': 'v2',
      brokers: 1,
      chunk: null,
      resume: false,
      docs: true,
    },
  },
  // Rewrites the campaign block of docs/faults.md from docs/faults/campaign.json (one that was
  // cut short is written after every run): no containers, nothing run.
  'faults-report': { file: 'campaign-report.cli.ts', defaults: { brokers: 1 } },
  soak: {
    file: 'soak.cli.ts',
    defaults: {
      minutes: 30,
      rate: 5000,
      keys: 20000,
      'sweep-every': 60,
      'fault-every': 180,
      seed: null,
      'exactly-once': 'v2',
      docs: true,
    },
  },
};

function fail(message) {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

function parse(mode, argv) {
  const { defaults } = MODES[mode];
  const options = { ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') continue;
    if (arg === '--no-docs') {
      options.docs = false;
      continue;
    }
    if (arg === '--resume' && 'resume' in defaults) {
      options.resume = true;
      continue;
    }
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m || !(m[1] in defaults) || m[1] === 'docs' || m[1] === 'resume')
      fail(
        `pnpm ${mode}: unknown option ${arg}; options: ${Object.keys(defaults)
          .map((k) => `--${k}`)
          .join(' ')}`,
      );
    const value = m[2] ?? argv[++i];
    if (value === undefined) fail(`pnpm ${mode}: ${arg} needs a value`);
    options[m[1]] = value;
  }
  const positive = (name, { integer = true, allow = [] } = {}) => {
    const v = options[name];
    if (v === null || allow.includes(v)) return;
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
      fail(
        `pnpm ${mode}: --${name} must be a positive ${integer ? 'integer' : 'number'}${allow.length ? ` or ${allow.join(', ')}` : ''}, got ${v}`,
      );
    options[name] = n;
  };
  if (mode !== 'soak') {
    if (!['1', '3'].includes(String(options.brokers)))
      fail(`pnpm ${mode}: --brokers must be 1 or 3, got ${options.brokers}`);
    options.brokers = Number(options.brokers);
  }
  if (mode === 'faults-report') return options;
  if (!['v1', 'v2'].includes(options['exactly-once']))
    fail(`pnpm ${mode}: --exactly-once must be v1 or v2, got ${options['exactly-once']}`);
  if (mode === 'faults') {
    ['runs', 'keys', 'load', 'parallel', 'chunk'].forEach((n) => positive(n));
    if (options.resume && !options.docs)
      fail('pnpm faults: --resume adds to the campaign file, which --no-docs does not write');
    positive('rate', { integer: false, allow: ['auto'] });
    const f = /^(\d+)-(\d+)$/.exec(String(options.faults));
    if (!f || Number(f[1]) < 1 || Number(f[1]) > Number(f[2]))
      fail(`pnpm faults: --faults must be MIN-MAX (e.g. 2-5), got ${options.faults}`);
    options.faults = [Number(f[1]), Number(f[2])];
  } else {
    ['keys', 'rate', 'sweep-every', 'fault-every'].forEach((n) => positive(n));
    positive('minutes', { integer: false });
  }
  if (options.seed === null) options.seed = Math.floor(Math.random() * 2 ** 31);
  else if (!Number.isSafeInteger(Number(options.seed)))
    fail(`pnpm ${mode}: --seed must be an integer, got ${options.seed}`);
  options.seed = Number(options.seed);
  options.command = [`pnpm ${mode}`, ...argv.filter((a) => a !== '--')].join(' ');
  return options;
}

const [mode, ...argv] = process.argv.slice(2);
if (!(mode in MODES)) fail(`usage: node test/faults/cli.js faults|faults-report|soak [options]`);
const options = parse(mode, argv);
const root = path.resolve(__dirname, '..', '..');
// Through `pnpm exec`, as scripts/test.sh runs jest: it puts pnpm's hoisted dependencies on
// NODE_PATH, which is how the test files resolve testcontainers and kafkajs.
const result = spawnSync(
  'pnpm',
  [
    'exec',
    'jest',
    '-c',
    path.join(__dirname, 'jest.cli.config.js'),
    '--runInBand',
    '--forceExit',
    path.join(__dirname, MODES[mode].file),
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      STATE_RELAY_FAULTS_CLI: JSON.stringify(options),
      ...(options['exactly-once'] && { FAULTS_EXACTLY_ONCE: options['exactly-once'] }),
    },
  },
);
process.exit(result.status ?? 1);
