import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import type { Env } from '../../../lib/platform/config';
import { BrokerError, ConfigError, ManagementApiError } from '../../../lib/platform/errors';
import {
  checkConnections,
  databaseConnections,
  rabbitmqConnections,
  SecretCredentials,
} from '../../../lib/platform/secrets';
import { type Handler, isAuthenticationFailure, withSecrets } from '../../../lib/wiring/lambda-function';

const secretsManager = mockClient(SecretsManagerClient);
const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:fairway/prod/rabbitmq-AbCdEf';
const secret = (password: string) => ({ SecretString: JSON.stringify({ username: 'fair way', password }) });
const context = {} as Context;
/** The configuration is the environment itself here. */
const asIs = (env: Env) => env;

/** A stand-in for a part's handler: it answers with the URLs it was built with, or fails as told. */
function recordingBuild(fail?: () => Error) {
  const built: { env: Env; closed: boolean }[] = [];
  const build = (env: Env): Handler<unknown, string | undefined> => {
    const record = { env, closed: false };
    built.push(record);
    return Object.assign(
      async () => {
        if (fail) throw fail();
        return env.AMQP_URL;
      },
      {
        close: async () => {
          record.closed = true;
        },
      },
    );
  };
  return { built, build };
}

/** A handler for the AMQP URL of a broker whose credentials are in the secret ARN. */
const brokerHandler = (build: (env: Env) => Handler<unknown, string | undefined>) =>
  withSecrets(
    { AMQP_URL: 'amqps://broker.example:5671', RABBITMQ_SECRET_ARN: ARN },
    rabbitmqConnections,
    asIs,
    build,
    new SecretCredentials(new SecretsManagerClient({})),
  );

beforeEach(() => secretsManager.reset());

describe('withSecrets', () => {
  it('without a secret builds at once from the environment as it is (local runs and tests)', () => {
    const { built, build } = recordingBuild();
    withSecrets({ AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672' }, rabbitmqConnections, asIs, build);
    expect(built.map((b) => b.env.AMQP_URL)).toEqual(['amqp://guest:guest@127.0.0.1:5672']);
  });

  it("with a secret builds on the first invocation with the secret's credentials in every URL naming it", async () => {
    secretsManager.on(GetSecretValueCommand, { SecretId: ARN }).resolves(secret('p@ss:w/rd%'));
    const { built, build } = recordingBuild();
    const env = {
      AMQP_URL: 'amqps://broker.example:5671',
      RABBITMQ_MANAGEMENT_URL: 'https://broker.example',
      RABBITMQ_SECRET_ARN: ARN,
    };
    const handler = withSecrets(
      env,
      rabbitmqConnections,
      asIs,
      build,
      new SecretCredentials(new SecretsManagerClient({})),
    );
    expect(built).toHaveLength(0);
    await handler({}, context);
    await handler({}, context);
    expect(built).toHaveLength(1);
    for (const variable of ['AMQP_URL', 'RABBITMQ_MANAGEMENT_URL']) {
      const url = new URL(built[0]!.env[variable]!);
      expect([decodeURIComponent(url.username), decodeURIComponent(url.password)]).toEqual(['fair way', 'p@ss:w/rd%']);
    }
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(1);
  });

  it('close ends the handler built with the secret, and the next invocation builds anew', async () => {
    secretsManager.on(GetSecretValueCommand, { SecretId: ARN }).resolves(secret('pw'));
    const { built, build } = recordingBuild();
    const handler = brokerHandler(build);
    await handler.close?.();
    await handler({}, context);
    await handler.close?.();
    expect(built.map((b) => b.closed)).toEqual([true]);
    await handler({}, context);
    expect(built.map((b) => b.closed)).toEqual([true, false]);
  });

  it('after a refused login reads the secret again and rebuilds with the rotated password, closing the old handler', async () => {
    secretsManager.on(GetSecretValueCommand).resolvesOnce(secret('old')).resolves(secret('rotated'));
    let refuse = true;
    const { built, build } = recordingBuild();
    const failing = (env: Env) => {
      const inner = build(env);
      return Object.assign(async (event: unknown, ctx: Context) => {
        if (refuse && env.AMQP_URL?.includes(':old@'))
          throw new BrokerError('Cannot connect to RabbitMQ', {
            cause: new Error('Handshake terminated by server: 403 (ACCESS-REFUSED)'),
          });
        return inner(event, ctx);
      }, inner);
    };
    const handler = brokerHandler(failing);
    await expect(handler({}, context)).rejects.toThrow(BrokerError);
    refuse = false;
    expect(await handler({}, context)).toBe('amqps://fair%20way:rotated@broker.example:5671');
    expect(built.map((b) => b.closed)).toEqual([true, false]);
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(2);
  });

  it('checks the configuration at cold start even when the credentials come later', () => {
    const load = (env: Env) => {
      if (!env.TENANT_TABLE) throw new ConfigError(['TENANT_TABLE: is required']);
      return env;
    };
    const { build } = recordingBuild();
    expect(() =>
      withSecrets({ AMQP_URL: 'amqps://broker.example', RABBITMQ_SECRET_ARN: ARN }, rabbitmqConnections, load, build),
    ).toThrow(ConfigError);
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(0);
  });

  it('a failure that is not about credentials does not read the secret again', async () => {
    secretsManager.on(GetSecretValueCommand).resolves(secret('same'));
    const { build } = recordingBuild(() => new BrokerError('Cannot connect to RabbitMQ: ECONNREFUSED'));
    const handler = brokerHandler(build);
    await expect(handler({}, context)).rejects.toThrow(BrokerError);
    await expect(handler({}, context)).rejects.toThrow(BrokerError);
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(1);
  });
});

describe('checkConnections', () => {
  const problems = (env: Env) => {
    try {
      checkConnections(env, databaseConnections);
      return [];
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).not.toContain('hunter2');
      return (error as ConfigError).problems;
    }
  };

  it.each<[string, Env, string[]]>([
    ['a local URL with its password', { NXRG_DATABASE_URL: 'postgres://u:hunter2@localhost/nxrg' }, []],
    [
      'a URL with credentials beside a secret',
      { NXRG_DATABASE_URL: 'postgres://u:hunter2@db/nxrg', NXRG_DATABASE_SECRET_ARN: 'arn:nxrg' },
      ['NXRG_DATABASE_URL: must not carry credentials when NXRG_DATABASE_SECRET_ARN names the secret that holds them'],
    ],
    [
      'a password in the environment of a Lambda function',
      { AWS_LAMBDA_FUNCTION_NAME: 'fairway-prod-x', OPENXDS_DATABASE_URL: 'postgres://u:hunter2@db/openxds' },
      [
        'OPENXDS_DATABASE_URL: carries credentials; keep them in Secrets Manager and name the secret in OPENXDS_DATABASE_SECRET_ARN',
      ],
    ],
    [
      'a Lambda function with URLs and secrets',
      { AWS_LAMBDA_FUNCTION_NAME: 'f', NXRG_DATABASE_URL: 'postgres://db/nxrg', NXRG_DATABASE_SECRET_ARN: 'arn:nxrg' },
      [],
    ],
  ])('%s', (_, env, expected) => {
    expect(problems(env)).toEqual(expected);
  });
});

describe('isAuthenticationFailure', () => {
  const pgError = (code: string) => Object.assign(new Error('password authentication failed'), { code });
  it.each<[string, unknown, boolean]>([
    ['PostgreSQL invalid password', pgError('28P01'), true],
    ['PostgreSQL invalid authorization, wrapped', new Error('step failed', { cause: pgError('28000') }), true],
    ['management API 401', new ManagementApiError('GET /api/queues answered 401', { status: 401 }), true],
    ['RabbitMQ ACCESS_REFUSED', new BrokerError('x', { cause: new Error('403 (ACCESS-REFUSED) with message') }), true],
    ['connection refused', new BrokerError('ECONNREFUSED'), false],
    ['PostgreSQL unique violation', pgError('23505'), false],
    ['management API 500', new ManagementApiError('boom', { status: 500 }), false],
  ])('%s: %s', (_, error, expected) => {
    expect(isAuthenticationFailure(error)).toBe(expected);
  });
});
