import { goalsTable } from '../../../bench/lib/report';
import { brokerRun, rewriteSection, sectionMarkdown, sectionMarkers } from '../../../bench/lib/sections';

const run = (bench: string, measured: string) => ({
  bench,
  summary: `${bench} against its baseline`,
  command: `npm run bench -- ${bench} --rounds 5`,
  machine: 'machine: Linux x64, 2 × CPU, 8 GiB, Node v22.0.0, 2026-12-02T01:00:00.000Z',
  tables: [
    { title: 'Throughput', rows: [{ run: 'fairway', 'msg/s': 900 }] },
    goalsTable(bench, [{ goal: 'pass ÷ raw pump', target: '≥ 0.9', measured, met: measured !== '0.5' }]),
  ],
});

const document = [
  '# Benchmarks',
  '',
  sectionMarkdown(run('router', '0.8')),
  '',
  'Notes on the router, kept across runs.',
  '',
  sectionMarkdown(run('distributor', '0.95')),
  '',
].join('\n');

describe('a bench section of BENCHMARKS.md', () => {
  it('shows the command, the machine and the goals table with its verdicts, not the other tables', () => {
    const section = sectionMarkdown(run('distributor', '0.5'));
    expect(section).toContain('- **Reproduce:** `npm run bench -- distributor --rounds 5`');
    expect(section).toContain('- **Ran on:** Linux x64, 2 × CPU, 8 GiB, Node v22.0.0, 2026-12-02T01:00:00.000Z');
    expect(section).toContain('#### Goals: distributor');
    expect(section).toMatch(/\| pass ÷ raw pump \| ≥ 0\.9 +\| 0\.5 +\| NOT MET \|/);
    expect(section).not.toContain('Throughput');
    expect(section.startsWith(sectionMarkers('distributor').start)).toBe(true);
    expect(section.endsWith(sectionMarkers('distributor').end)).toBe(true);
  });

  it('shows every table of a bench without goals', () => {
    const section = sectionMarkdown({
      ...run('fairness', '1'),
      tables: [{ title: 'Fairness', rows: [{ jain: 0.99 }] }],
    });
    expect(section).toContain('#### Fairness');
  });

  it("replaces its own section only: the other bench's and the notes between stay", () => {
    const rewritten = rewriteSection(document, 'router', sectionMarkdown(run('router', '0.9')));
    expect(rewritten).toBe(document.replace(/\| 0\.8 /, '| 0.9 '));
    expect(rewritten).toContain('Notes on the router, kept across runs.');
    expect(rewritten.match(/<!-- bench:router:start -->/g)).toHaveLength(1);
  });

  it('replacing with the same run changes nothing', () => {
    expect(rewriteSection(document, 'distributor', sectionMarkdown(run('distributor', '0.95')))).toBe(document);
  });

  it('appends a section the document does not have yet', () => {
    const section = sectionMarkdown(run('scale', '1'));
    expect(rewriteSection(document, 'scale', section)).toBe(`${document.trimEnd()}\n\n${section}\n`);
  });

  it('refuses markers that are not one pair, rather than cut across other sections', () => {
    const { start, end } = sectionMarkers('router');
    const section = sectionMarkdown(run('router', '0.9'));
    expect(() => rewriteSection(document.replace(end, ''), 'router', section)).toThrow(/not one/);
    expect(() => rewriteSection(document.replace(start, ''), 'router', section)).toThrow(/not one/);
    expect(() => rewriteSection(`${document}\n${start}\n`, 'router', section)).toThrow(/not one/);
  });

  it('keeps a run on the RabbitMQ 4.0 node in a section of its own, with the variable that reproduces it', () => {
    const on4 = brokerRun('flood', 'npm run bench -- flood --full', true);
    expect(on4).toEqual({ bench: 'flood-rabbitmq4', command: 'TEST_ON_RABBITMQ4=1 npm run bench -- flood --full' });
    expect(brokerRun('flood', 'npm run bench -- flood --full', false)).toEqual({
      bench: 'flood',
      command: 'npm run bench -- flood --full',
    });
    const withFlood = rewriteSection(document, 'flood', sectionMarkdown({ ...run('flood', '1'), ...on4 }));
    const rewritten = rewriteSection(withFlood, on4.bench, sectionMarkdown({ ...run('flood', '0.5'), ...on4 }));
    expect(rewritten).toContain(sectionMarkers('router').start);
    expect(rewritten.match(/<!-- bench:flood-rabbitmq4:start -->/g)).toHaveLength(1);
    expect(rewritten).toContain('`TEST_ON_RABBITMQ4=1 npm run bench -- flood --full`');
  });
});
