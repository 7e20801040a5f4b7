import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { knownVariables } from '../../lib/wiring/variables';
import { root } from './package';

/**
 * Issue 35: every setting a deployment can choose has a serverless.yml param. The few that no param
 * sets are fixed by the template or the platform, each for the reason given here.
 */
const FIXED_BY_TEMPLATE: Readonly<Record<string, string>> = {
  AWS_REGION: 'Lambda sets it to the function’s own region',
  DYNAMODB_ENDPOINT: 'only for local or embedded DynamoDB (the local stack, tests, benches); AWS uses its own',
  LAMBDA_ENDPOINT: 'only for the local stack and the benches; AWS uses its own',
  DISTRIBUTOR_FUNCTION_NAME: 'the stack’s own distributor function, named by the template',
  DISTRIBUTOR_TABLE: 'the stack’s own table (Ref)',
  TENANT_TABLE: 'the stack’s own table (Ref)',
  STAGING_TABLE: 'the stack’s own table (Ref)',
  CLEANUP_TABLE: 'the stack’s own table (Ref)',
};

const template = readFileSync(join(root, 'serverless.yml'), 'utf8');
/** Variable → the param that sets it (`VARIABLE: ${param:name}`), wherever a function's environment has it. */
const paramOf = new Map(
  [...template.matchAll(/^\s*([A-Z][A-Z0-9_]*): \$\{param:(\w+)\}/gm)].map((m) => [m[1]!, m[2]!]),
);
/** Variables the template sets to something other than a param (a Ref, a name). */
const setOtherwise = new Set([...template.matchAll(/^\s*([A-Z][A-Z0-9_]*): (?!\$\{param:)/gm)].map((m) => m[1]!));
/** The params block's names. */
const params = new Set([...template.matchAll(/^ {4}(\w+):/gm)].map((m) => m[1]!));

describe('serverless.yml sets every setting', () => {
  it('from a param, unless the template or the platform fixes it for a stated reason', () => {
    const missing = knownVariables.filter((name) => !paramOf.has(name) && FIXED_BY_TEMPLATE[name] === undefined);
    expect(missing).toEqual([]);
  });

  it('each param it reads is declared with a default', () => {
    expect([...paramOf.values()].filter((param) => !params.has(param))).toEqual([]);
  });

  it('the fixed ones are set by the template where a deployed function needs them, not from a param', () => {
    for (const name of [
      'DISTRIBUTOR_FUNCTION_NAME',
      'DISTRIBUTOR_TABLE',
      'TENANT_TABLE',
      'STAGING_TABLE',
      'CLEANUP_TABLE',
    ]) {
      expect(setOtherwise.has(name)).toBe(true);
    }
    for (const name of ['AWS_REGION', 'DYNAMODB_ENDPOINT', 'LAMBDA_ENDPOINT']) expect(template).not.toMatch(`${name}:`);
  });

  it('no setting is fixed that Fairway no longer reads (the list stays true)', () => {
    expect(Object.keys(FIXED_BY_TEMPLATE).filter((name) => !knownVariables.includes(name))).toEqual([]);
  });

  it('at most 40 settings in all (issue 35)', () => {
    expect(knownVariables.length).toBeLessThanOrEqual(40);
  });
});
