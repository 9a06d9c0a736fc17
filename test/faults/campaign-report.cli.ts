import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { writeDocsBlock } from '@state-relay/testkit';
import { campaignMarkdown, campaignOutput, summaryLines, type CampaignFile } from './campaign-report';
import { ROOT } from './report';

// `pnpm faults:report` (cli.js starts jest on this file): rewrites the campaign block of
// docs/faults.md from docs/faults/campaign.json, which `pnpm faults` writes after every run, so
// that a campaign cut short (killed, out of time) still reaches the docs with what it found —
// saying that it was cut short. Starts no container.

describe('fault campaign report', () => {
  const brokers = (JSON.parse(process.env.STATE_RELAY_FAULTS_CLI ?? '{}') as { brokers?: 1 | 3 }).brokers ?? 1;
  const { file: jsonFile, block } = campaignOutput(brokers);
  it(`rewrites the ${block} block from ${jsonFile}`, async () => {
    const file = path.join(ROOT, jsonFile);
    const campaign = JSON.parse(await readFile(file, 'utf8')) as CampaignFile;
    const runs = [...campaign.runs].sort((a, b) => a.run - b.run);
    // A campaign cut short never wrote its end: the file's last write is after its last run.
    const written = (await stat(file)).mtime.toISOString();
    campaign.meta.finishedAt ??= written;
    const last = campaign.chunks?.[campaign.chunks.length - 1];
    if (last) last.finishedAt ??= written;
    expect(runs.length).toBeGreaterThan(0);
    for (const line of summaryLines(runs)) process.stdout.write(`${line}\n`);
    writeDocsBlock(
      path.join(ROOT, 'docs/faults.md'),
      block,
      campaignMarkdown(
        runs,
        campaign.options,
        campaign.meta,
        campaign.parallel ?? 1,
        campaign.complete ?? true,
        campaign.chunks,
      ),
    );
    process.stdout.write(
      `[campaign] wrote the ${block} block of docs/faults.md from ${runs.length} runs` +
        `${campaign.complete === false ? ` (cut short: ${runs.length} of ${campaign.options.runs})` : ''}\n`,
    );
  });
});
