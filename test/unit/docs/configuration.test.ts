import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../../../lib/platform/errors';
import { REMOVED_VARIABLES } from '../../../lib/wiring/variables';
import { loadConfigModules } from '../../harness/config-modules';

/**
 * docs/configuration.md cannot drift from the code: every variable a zod schema of a config module
 * reads has one row there, every row names a variable some schema reads, and each row's default is the
 * schema's. The schemas are found by loading every config module (test/harness/config-modules.ts), so
 * a new schema or setting is checked without touching this test.
 */
const root = join(__dirname, '../../..');

interface Row {
  defaultCell: string;
  paramCell: string;
  meaningCell: string;
  line: number;
}

/** The doc's lines, apart from its "Fixed values" section (the variables 0.2 removed). */
function settingLines(): { text: string; index: number }[] {
  const lines = readFileSync(join(root, 'docs/configuration.md'), 'utf8').split('\n');
  let fixed = false;
  return lines.flatMap((text, index) => {
    if (text.startsWith('## ')) fixed = text === '## Fixed values';
    return fixed ? [] : [{ text, index }];
  });
}

/** Rows of the doc's tables whose first cell is exactly one backticked variable name. */
function documentedRows(): Map<string, Row[]> {
  const rows = new Map<string, Row[]>();
  settingLines().forEach(({ text, index }) => {
    const cells = text.split('|').map((cell) => cell.trim());
    const name = /^`([A-Z][A-Z0-9_]*)`$/.exec(cells[1] ?? '')?.[1];
    if (text.trimStart().startsWith('|') && name !== undefined) {
      rows.set(name, [
        ...(rows.get(name) ?? []),
        { defaultCell: cells[3] ?? '', paramCell: cells[4] ?? '', meaningCell: cells[5] ?? '', line: index + 1 },
      ]);
    }
  });
  return rows;
}

/** Every zod object schema exported by a module of lib/platform/config, by `file.export`. */
function configSchemas(modules: Record<string, Record<string, unknown>>): Map<string, z.ZodObject> {
  const schemas = new Map<string, z.ZodObject>();
  for (const [file, exports] of Object.entries(modules)) {
    for (const [name, value] of Object.entries(exports)) {
      if (value instanceof z.ZodObject) schemas.set(`${file}.${name}`, value);
    }
  }
  return schemas;
}

/** What the doc must say a variable defaults to, given what its parser makes of "not set". */
function expectedDefault(parser: z.ZodType): { description: string; matches: (cell: string) => boolean } {
  const result = parser.safeParse(undefined);
  if (!result.success) return { description: 'required', matches: (cell) => /required/i.test(cell) };
  const value: unknown = result.data;
  if (value === undefined) return { description: 'unset', matches: (cell) => /unset/i.test(cell) };
  if (typeof value !== 'object') {
    return { description: `\`${String(value)}\``, matches: (cell) => cell.includes(`\`${String(value)}\``) };
  }
  return {
    description: `\`${JSON.stringify(value)}\` (any spacing)`,
    matches: (cell) =>
      [...cell.matchAll(/`([^`]+)`/g)].some((code) => {
        try {
          return JSON.stringify(JSON.parse(code[1]!)) === JSON.stringify(value);
        } catch {
          return false;
        }
      }),
  };
}

let modules: Record<string, Record<string, unknown>>;
let schemas: Map<string, z.ZodObject>;
let read: Map<string, string[]>;
let rows: Map<string, Row[]>;

beforeAll(async () => {
  modules = await loadConfigModules(root);
  schemas = configSchemas(modules);
  read = new Map();
  for (const [schemaName, schema] of schemas) {
    for (const key of Object.keys(schema.shape)) read.set(key, [...(read.get(key) ?? []), schemaName]);
  }
  rows = documentedRows();
});

describe('docs/configuration.md', () => {
  it('finds the schemas of every function (router, distributor, cleanup engine, the three jobs)', () => {
    expect(schemas.size).toBeGreaterThanOrEqual(6);
    for (const known of ['TENANT_TABLE', 'DISTRIBUTOR_TABLE', 'CLEANUP_TABLE', 'NXRG_DOCUMENT_TYPES']) {
      expect(read.has(known)).toBe(true);
    }
  });

  it('documents every setting a schema reads', () => {
    const undocumented = [...read.keys()].filter((key) => !rows.has(key));
    expect(undocumented).toEqual([]);
  });

  it('names every variable 0.2 removed in its "Fixed values" section, with what replaced it', () => {
    const text = readFileSync(join(root, 'docs/configuration.md'), 'utf8');
    const start = text.indexOf('## Fixed values');
    const section = text.slice(start, text.indexOf('\n## ', start + 1));
    // `_GRANT_SECONDS` and its kind abbreviate the DIRECT_ROUTING_ names of their row.
    const named = new Set(
      [...section.matchAll(/`([A-Z0-9_]+)`/g)].map((m) => (m[1]!.startsWith('_') ? `DIRECT_ROUTING${m[1]}` : m[1]!)),
    );
    expect(Object.keys(REMOVED_VARIABLES).filter((name) => !named.has(name))).toEqual([]);
  });

  it('documents no setting that no schema reads', () => {
    const unread = [...rows.entries()]
      .filter(([key]) => !read.has(key))
      .map(([key, r]) => `${key} (line ${r[0]!.line})`);
    expect(unread).toEqual([]);
  });

  it("gives each setting the schema's default (required, unset, or the value)", () => {
    const wrong: string[] = [];
    for (const [schemaName, schema] of schemas) {
      for (const [key, parser] of Object.entries(schema.shape)) {
        const expected = expectedDefault(parser as z.ZodType);
        for (const row of rows.get(key) ?? []) {
          if (!expected.matches(row.defaultCell)) {
            wrong.push(
              `${key} (line ${row.line}): says "${row.defaultCell}", ${schemaName} gives ${expected.description}`,
            );
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('has no schema the enumeration missed: every setting a loader rejects is one the schemas read', () => {
    const loaders = Object.values(modules).flatMap((exports) =>
      Object.entries(exports).filter(([name, value]) => /^load\w*Config$/.test(name) && typeof value === 'function'),
    );
    expect(loaders.length).toBeGreaterThanOrEqual(6);
    const unseen: string[] = [];
    for (const [name, load] of loaders) {
      try {
        (load as (env: object) => unknown)({});
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        for (const problem of (error as ConfigError).problems) {
          const key = /^[A-Z][A-Z0-9_]*/.exec(problem)?.[0];
          if (key === undefined || !read.has(key)) unseen.push(`${name}: ${problem}`);
        }
      }
    }
    expect(unseen).toEqual([]);
  });

  it('names, for each setting, the serverless.yml param that sets it', () => {
    const mapped = new Map(
      [
        ...readFileSync(join(root, 'serverless.yml'), 'utf8').matchAll(/^\s*([A-Z][A-Z0-9_]*): \$\{param:(\w+)\}/gm),
      ].map((m) => [m[1]!, m[2]!]),
    );
    const wrong: string[] = [];
    for (const [key, keyRows] of rows) {
      for (const row of keyRows) {
        const named = [...row.paramCell.matchAll(/`([a-z]\w*)`/g)].map((m) => m[1]);
        const param = mapped.get(key);
        if (param === undefined ? named.length > 0 : named.length !== 1 || named[0] !== param) {
          wrong.push(
            `${key} (line ${row.line}): says ${named.join(', ') || 'none'}, serverless.yml: ${param ?? 'none'}`,
          );
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});

/** serverless.yml as written: the `default` params block and the functions' schedules. */
const serverless = parse(readFileSync(join(root, 'serverless.yml'), 'utf8'), { merge: true }) as {
  params: { default: Record<string, unknown> };
  functions: Record<string, { events?: { schedule?: { rate: string; enabled: string } }[] }>;
};
const paramDefaults = serverless.params.default;
const paramOf = (text: string) => /^\$\{param:(\w+)\}$/.exec(text)?.[1];

/** The interval of `rate(N unit)` in minutes. */
const rateMinutes = (rate: string) => {
  const match = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(rate);
  if (!match) throw new Error(`not a rate: ${rate}`);
  return Number(match[1]) * { minute: 1, hour: 60, day: 1440 }[match[2] as 'minute' | 'hour' | 'day'];
};

/** The scheduled functions with their rate and on/off params and those params' defaults. */
const schedules = Object.entries(serverless.functions).flatMap(([name, fn]) => {
  const schedule = fn.events?.find((e) => e.schedule)?.schedule;
  if (!schedule) return [];
  const rateParam = paramOf(schedule.rate)!;
  const enabledParam = paramOf(String(schedule.enabled))!;
  return [
    {
      name,
      rateParam,
      enabledParam,
      rate: String(paramDefaults[rateParam]),
      enabled: String(paramDefaults[enabledParam]),
    },
  ];
});

const docs = () => [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

// Issue 27 item 6: the defaults and schedules the docs state are serverless.yml's.
describe('the docs against serverless.yml', () => {
  it('a row whose param defaults to another value than the schema says that value', () => {
    const wrong: string[] = [];
    for (const [, schema] of schemas) {
      for (const [key, parser] of Object.entries(schema.shape)) {
        for (const row of rows.get(key) ?? []) {
          const param = /`([a-z]\w*)`/.exec(row.paramCell)?.[1];
          const value = param === undefined ? undefined : paramDefaults[param];
          if (value === undefined || value === '') continue;
          const deployed = (parser as z.ZodType).safeParse(String(value));
          const unset = (parser as z.ZodType).safeParse(undefined);
          if (
            !deployed.success ||
            JSON.stringify(deployed.data) === JSON.stringify(unset.success ? unset.data : undefined)
          )
            continue;
          if (!`${row.defaultCell} ${row.meaningCell}`.includes(`\`${String(value)}\``)) {
            wrong.push(
              `${key} (line ${row.line}): serverless.yml's ${param} is \`${String(value)}\`, the row does not say so`,
            );
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("docs/deploying.md's schedule table gives every scheduled function its params and their defaults", () => {
    const table = readFileSync(join(root, 'docs/deploying.md'), 'utf8')
      .split('\n')
      .map((line) => line.split('|').map((cell) => cell.trim().replace(/^`|`$/g, '')))
      .filter((cells) => schedules.some((s) => s.name === cells[1]))
      .map((cells) => ({
        name: cells[1],
        rateParam: cells[2],
        rate: cells[3],
        enabledParam: cells[4],
        enabled: cells[5],
      }));
    expect(schedules.length).toBeGreaterThanOrEqual(4);
    expect(table).toEqual(
      schedules.map(({ name, rateParam, rate, enabledParam, enabled }) => ({
        name,
        rateParam,
        rate,
        enabledParam,
        enabled,
      })),
    );
  });

  it('every "every N minutes" the docs say of a schedule is a default schedule of serverless.yml', () => {
    const periods = new Set(schedules.map((s) => rateMinutes(s.rate)));
    const wrong: string[] = [];
    for (const file of docs()) {
      readFileSync(join(root, file), 'utf8')
        .split('\n')
        .forEach((line, index) => {
          if (!/schedul/i.test(line)) return;
          for (const m of line.matchAll(/every (\d+)?\s*(minute|hour|day)?s?\b/g)) {
            if (m[1] === undefined && m[2] === undefined) continue;
            const minutes = Number(m[1] ?? 1) * { minute: 1, hour: 60, day: 1440 }[(m[2] ?? 'minute') as 'minute'];
            if (!periods.has(minutes)) wrong.push(`${file}:${index + 1}: "${m[0]}"`);
          }
          for (const m of line.matchAll(/default[^`]*`(rate\([^)]*\))`/g)) {
            if (!schedules.some((s) => s.rate === m[1])) wrong.push(`${file}:${index + 1}: default ${m[1]}`);
          }
        });
    }
    expect(wrong).toEqual([]);
  });

  it("docs/operating.md's router batch size and visibility timeout are the deployed ones", () => {
    const operating = readFileSync(join(root, 'docs/operating.md'), 'utf8').replace(/\s+/g, ' ');
    expect(/`batchSize` (\d+)/.exec(operating)?.[1]).toBe(String(paramDefaults.routerBatchSize));
    const sqs = parse(readFileSync(join(root, 'infra/sqs.yml'), 'utf8')) as {
      Resources: Record<string, { Properties: { VisibilityTimeout?: number } }>;
    };
    const visibility = Object.values(sqs.Resources).find((r) => r.Properties.VisibilityTimeout)!.Properties
      .VisibilityTimeout;
    expect(/visibility timeout \((\d+) s on AWS\)/.exec(operating)?.[1]).toBe(String(visibility));
  });
});
