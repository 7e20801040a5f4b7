import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../../../lib/platform/errors';
import {
  checkVariableNames,
  closest,
  editDistance,
  FAIRWAY_PREFIXES,
  knownVariables,
  REMOVED_VARIABLES,
} from '../../../lib/wiring/variables';
import { functionEnvironment } from '../../../local/stack/environment';
import { loadConfigModules } from '../../harness/config-modules';

/** Issue 23, item 10: a misspelled variable with a Fairway prefix is refused, naming the closest known one. */
const root = join(__dirname, '../../..');

const problemsOf = (env: Record<string, string>): readonly string[] => {
  try {
    checkVariableNames(env);
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
};

describe('checkVariableNames', () => {
  it('refuses a misspelled variable, naming the closest known one and never the value', () => {
    const problems = problemsOf({ TENANT_PRIORITY_RESET_SECOND: '60', ROUTER_TARGET: 's3cret' });
    expect(problems).toEqual([
      'ROUTER_TARGET: is not a variable Fairway reads (did you mean ROUTER_TARGETS?)',
      'TENANT_PRIORITY_RESET_SECOND: is not a variable Fairway reads (did you mean TENANT_PRIORITY_RESET_SECONDS?)',
    ]);
  });

  it.each(FAIRWAY_PREFIXES.map((prefix) => [prefix]))('refuses an unknown variable starting with %s', (prefix) => {
    expect(problemsOf({ [`${prefix}NO_SUCH_SETTING`]: '1' })).toHaveLength(1);
  });

  it('lets through every known variable, and the variables of AWS, Lambda, Powertools and the tests', () => {
    const env = Object.fromEntries(knownVariables.map((name) => [name, '1']));
    const foreign = [
      'AWS_LAMBDA_FUNCTION_NAME',
      'LAMBDA_TASK_ROOT',
      'POWERTOOLS_SERVICE_NAME',
      'TEST_AMQP_URL',
      'PATH',
    ];
    expect(problemsOf({ ...env, ...Object.fromEntries(foreign.map((name) => [name, '1'])) })).toEqual([]);
  });

  it('knows every variable serverless.yml and the local stack give a function', () => {
    const deployed = [...readFileSync(join(root, 'serverless.yml'), 'utf8').matchAll(/^\s+([A-Z][A-Z0-9_]*):/gm)].map(
      (m) => m[1]!,
    );
    const local = functionEnvironment(
      {
        dynamoEndpoint: 'http://d',
        amqpUrl: 'amqp://a',
        managementUrl: 'http://m',
        vhost: 'v',
        nxrgUrl: 'n',
        openxdsUrl: 'o',
      },
      { stage: 'dev', speed: 1, documentTypes: ['referral'], distributor: { functionName: 'f', endpoint: 'http://l' } },
    );
    expect(problemsOf(Object.fromEntries([...deployed, ...Object.keys(local)].map((name) => [name, '1'])))).toEqual([]);
  });
});

describe('a variable a release removed (issue 35)', () => {
  it('is refused at cold start, naming what replaced it and never the value', () => {
    expect(problemsOf({ DISTRIBUTOR_BOARD_POLL_MS: 's3cret' })).toEqual([
      'DISTRIBUTOR_BOARD_POLL_MS: was removed in 0.2: the distributor now reads the work board every 250 ms while it waits; unset it',
    ]);
  });

  it('is refused beside a misspelled one, each with its own message', () => {
    expect(problemsOf({ TENANT_PRIORITY_SKIP_WINDOW_SECONDS: '30', ROUTER_TARGET: '{}' })).toEqual([
      'ROUTER_TARGET: is not a variable Fairway reads (did you mean ROUTER_TARGETS?)',
      'TENANT_PRIORITY_SKIP_WINDOW_SECONDS: was removed in 0.2: the skip window is now derived: a 25th of TENANT_PRIORITY_RESET_SECONDS, at most 60 s; unset it',
    ]);
  });

  it.each(Object.keys(REMOVED_VARIABLES).map((name) => [name]))(
    '%s is refused, and no schema reads it any more',
    (name) => {
      expect(knownVariables).not.toContain(name);
      expect(problemsOf({ [name]: '1' })).toEqual([
        expect.stringMatching(new RegExp(`^${name}: was removed in 0.2: .+; unset it$`)),
      ]);
    },
  );

  it('is refused even without a Fairway prefix (a table entry alone decides)', () => {
    const unprefixed = Object.keys(REMOVED_VARIABLES).filter(
      (name) => !FAIRWAY_PREFIXES.some((prefix) => name.startsWith(prefix)),
    );
    for (const name of unprefixed) expect(problemsOf({ [name]: '1' })).toHaveLength(1);
  });
});

describe('the known variables', () => {
  it('are every setting of every schema of the config modules (lib/wiring/variables.ts lists them)', async () => {
    const read = new Set<string>();
    for (const exports of Object.values(await loadConfigModules(root))) {
      for (const value of Object.values(exports)) {
        if (value instanceof z.ZodObject) for (const key of Object.keys(value.shape)) read.add(key);
      }
    }
    expect([...knownVariables].sort()).toEqual([...read].sort());
  });

  it('each start with a Fairway prefix, but for the two that share theirs with AWS and Lambda', () => {
    const unprefixed = knownVariables.filter((name) => !FAIRWAY_PREFIXES.some((prefix) => name.startsWith(prefix)));
    expect(unprefixed.sort()).toEqual(['AWS_REGION', 'LAMBDA_ENDPOINT']);
  });

  it('no prefix is one that AWS or Lambda set variables under', () => {
    for (const prefix of FAIRWAY_PREFIXES) expect(['AWS_', 'LAMBDA_', '_']).not.toContain(prefix);
  });
});

describe('closest', () => {
  it.each([
    ['kitten', 'sitting', 3],
    ['', 'abc', 3],
    ['CLEANUP_DRYRUN', 'CLEANUP_DRY_RUN', 1],
    ['same', 'same', 0],
  ])('edit distance of %s and %s is %d', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
    expect(editDistance(b, a)).toBe(distance);
  });

  it('picks the nearest name', () => {
    expect(closest('RABBITMQ_VHOTS', knownVariables)).toBe('RABBITMQ_VHOST');
    expect(closest('DISTRIBUTOR_WEIGHT', knownVariables)).toBe('DISTRIBUTOR_WEIGHTS');
  });
});
