import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { holdForFile } from '../harness/own-node-holds';

export type Resource = {
  Type: string;
  Properties: Record<string, any>;
  DependsOn?: unknown;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  Condition?: string;
};
export type Template = { Resources: Record<string, Resource>; Conditions?: Record<string, any> };

export const root = join(__dirname, '../..');

/**
 * serverless-esbuild bundles in the working copy's `.esbuild/`: two `serverless package` runs at
 * once (test files run in parallel, jest.config.js) break each other's bundle, and one hung for
 * 15 minutes. So the files that package take turns: call at the file's top level, before its hooks.
 */
export function takeTurnsPackaging(): void {
  holdForFile('alone', join(tmpdir(), 'fairway-packaging-holds'), 'serverless package in another test file');
}

/**
 * The params a stage needs to start at all (packaging refuses an empty URL or time-based rule):
 * URLs without credentials, as docs/deploying.md passes them, and one document type's retention.
 */
export const startableParams: Readonly<Record<string, string>> = {
  amqpUrl: 'amqps://b-1234.mq.eu-west-1.amazonaws.com:5671',
  rabbitmqManagementUrl: 'https://b-1234.mq.eu-west-1.amazonaws.com',
  nxrgDatabaseUrl: 'postgres://nxrg.example:5432/nxrg',
  openxdsDatabaseUrl: 'postgres://openxds.example:5432/openxds',
  nxrgDocumentTypes: 'referral',
  registryTimebasedCleanupDocumentTypes: '{"referral":{"retentionDays":3650}}',
};

/** `--param` arguments, one per entry. */
export const paramArgs = (params: Record<string, string>) =>
  Object.entries(params).flatMap(([name, value]) => ['--param', `${name}=${value}`]);

/**
 * Runs `serverless package` offline, as `npx serverless package` would (no AWS credentials).
 * Throws with serverless's output when packaging is refused.
 */
export function runPackage(args: string[]): void {
  execFileSync('npx', ['serverless', 'package', ...args], {
    cwd: root,
    env: {
      ...process.env,
      AWS_ACCESS_KEY_ID: '',
      AWS_SECRET_ACCESS_KEY: '',
      AWS_PROFILE: '',
      SLS_TELEMETRY_DISABLED: '1',
    },
    stdio: 'pipe',
  });
}

/** Packages `stage` with `params` into a temporary directory and returns its CloudFormation template. */
export function packageTemplate(stage: string, params: Record<string, string>): Template {
  const dir = mkdtempSync(join(tmpdir(), `fairway-${stage}-`));
  try {
    runPackage(['--stage', stage, '--package', dir, ...paramArgs(params)]);
    return JSON.parse(readFileSync(join(dir, 'cloudformation-template-update-stack.json'), 'utf8')) as Template;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const ofType = (template: Template, type: string) =>
  Object.entries(template.Resources).filter(([, r]) => r.Type === type);

/** The logical id a `Ref` or `Fn::GetAtt` points at. */
export const ref = (value: any): string | undefined => value?.['Fn::GetAtt']?.[0] ?? value?.Ref;
