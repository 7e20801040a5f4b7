import { z } from 'zod';
import { loadCleanupConfig } from '../../../lib/cleanup/config';
import { parseEnv, setting } from '../../../lib/platform/config';
import { ConfigError } from '../../../lib/platform/errors';
import { loadRouterConfig } from '../../../lib/routing/config';

const schema = z.object({
  NAME: setting.text(),
  URL: setting.url(['amqp', 'amqps']),
  COUNT: setting.int(10, 1, 100),
  FLAG: setting.bool(false),
  WEIGHTS: setting.json(z.record(z.string(), z.number().positive()), {}),
});

const valid = { NAME: 'n', URL: 'amqp://user:secret@host:5672' };

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    parseEnv(schema, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('parseEnv', () => {
  it('applies defaults and parses every kind', () => {
    expect(parseEnv(schema, valid)).toEqual({ ...valid, COUNT: 10, FLAG: false, WEIGHTS: {} });
    expect(parseEnv(schema, { ...valid, COUNT: '7', FLAG: 'true', WEIGHTS: '{"a":2}' })).toEqual({
      ...valid,
      COUNT: 7,
      FLAG: true,
      WEIGHTS: { a: 2 },
    });
  });

  it.each([
    [{ URL: valid.URL }, 'NAME: is required'],
    [{ ...valid, NAME: '' }, 'NAME: is required'],
    [{ NAME: 'n', URL: 'not a url' }, 'URL: must be a URL starting with amqp:// or amqps://'],
    [{ NAME: 'n', URL: 'http://host' }, 'URL: must be a URL starting with amqp:// or amqps://'],
    [{ ...valid, COUNT: 'ten' }, 'COUNT: must be an integer'],
    [{ ...valid, COUNT: '1.5' }, 'COUNT: must be an integer'],
    [{ ...valid, COUNT: '0' }, 'COUNT: must be at least 1'],
    [{ ...valid, COUNT: '101' }, 'COUNT: must be at most 100'],
    [{ ...valid, FLAG: 'yes' }, 'FLAG: must be true or false'],
    [{ ...valid, WEIGHTS: '{' }, 'WEIGHTS: must be valid JSON'],
  ])('names the variable and the problem: %j', (env, problem) => {
    expect(problemsOf(env)).toContain(problem);
  });

  it('reports every problem at once, and never a value', () => {
    const env = { URL: 'amqp://user:hunter2@', COUNT: 'x' };
    let message = '';
    try {
      parseEnv(schema, { ...env, URL: 'hunter2 is not a url' });
    } catch (error) {
      message = (error as Error).message;
      expect((error as ConfigError).problems).toHaveLength(3);
    }
    expect(message).toMatch(/NAME: is required.*URL: must be a URL.*COUNT: must be an integer/);
    expect(message).not.toContain('hunter2');
  });
});

describe('function configuration', () => {
  it('the router needs its table and RabbitMQ settings', () => {
    expect(() => loadRouterConfig({})).toThrow(
      /AMQP_URL: is required.*RABBITMQ_MANAGEMENT_URL: is required.*TENANT_TABLE/,
    );
  });

  it('cleanup defaults to a real run only when told, and reads DYNAMODB_ENDPOINT for local use', () => {
    const config = loadCleanupConfig({
      CLEANUP_TABLE: 't',
      NXRG_DATABASE_URL: 'postgres://h/nxrg',
      OPENXDS_DATABASE_URL: 'postgres://h/xds',
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
    });
    expect(config).toMatchObject({
      CLEANUP_DRY_RUN: false,
      AWS_REGION: 'us-east-1',
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
    });
  });
});
