import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
  SecretsManagerServiceException,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { errorText } from '../../../lib/platform/errors';
import { SECRET_MAX_AGE_SECONDS, SecretCredentials, SecretError } from '../../../lib/platform/secrets';

// Secrets Manager cannot be made to rotate, vanish or refuse on demand here: a stand-in answers.
const secretsManager = mockClient(SecretsManagerClient);
const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:fairway/prod/nxrg-AbCdEf';
const PASSWORD = 'Recognisable-Pa55word-7f3a';
const secret = (password: string) => ({ SecretString: JSON.stringify({ username: 'fairway', password }) });

/** What a failure shows anywhere: message, causes, stack. */
const everything = (error: unknown) => `${errorText(error)} ${(error as Error).stack}`;

async function failure(promise: Promise<unknown>): Promise<SecretError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SecretError);
  return error as SecretError;
}

beforeEach(() => {
  secretsManager.reset();
  jest.useRealTimers();
});

describe('SecretCredentials', () => {
  it('reads the credentials once per container while they are fresh', async () => {
    secretsManager.on(GetSecretValueCommand, { SecretId: ARN }).resolves(secret(PASSWORD));
    const credentials = new SecretCredentials(new SecretsManagerClient({}));
    expect(await credentials.get(ARN)).toEqual({ username: 'fairway', password: PASSWORD });
    expect(await credentials.get(ARN)).toEqual({ username: 'fairway', password: PASSWORD });
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(1);
  });

  it('after a rotation: the cached password until it expires or is refreshed, then the new one', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] });
    secretsManager.on(GetSecretValueCommand).resolvesOnce(secret('before-rotation')).resolves(secret('after-rotation'));
    const credentials = new SecretCredentials(new SecretsManagerClient({}));
    expect((await credentials.get(ARN)).password).toBe('before-rotation');
    expect((await credentials.get(ARN)).password).toBe('before-rotation');

    expect((await credentials.refresh(ARN)).password).toBe('after-rotation');

    const expiring = new SecretCredentials(new SecretsManagerClient({}));
    secretsManager.reset();
    secretsManager.on(GetSecretValueCommand).resolvesOnce(secret('before-rotation')).resolves(secret('after-rotation'));
    expect((await expiring.get(ARN)).password).toBe('before-rotation');
    jest.advanceTimersByTime((SECRET_MAX_AGE_SECONDS + 1) * 1000);
    expect((await expiring.get(ARN)).password).toBe('after-rotation');
  });

  it('a missing secret says so and what to do', async () => {
    secretsManager
      .on(GetSecretValueCommand)
      .rejects(
        new ResourceNotFoundException({ message: "Secrets Manager can't find the specified secret.", $metadata: {} }),
      );
    const error = await failure(new SecretCredentials(new SecretsManagerClient({})).get(ARN));
    expect(error.message).toBe(
      `Secret ${ARN} does not exist (or is scheduled for deletion): create it, or fix the ARN the stage passes.`,
    );
    expect((error.cause as Error).name).toBe('ResourceNotFoundException');
  });

  it('a denied call names the permission the role lacks', async () => {
    secretsManager.on(GetSecretValueCommand).rejects(
      new SecretsManagerServiceException({
        name: 'AccessDeniedException',
        $fault: 'client',
        message: 'User is not authorized to perform: secretsmanager:GetSecretValue',
        $metadata: {},
      }),
    );
    const error = await failure(new SecretCredentials(new SecretsManagerClient({})).get(ARN));
    expect(error.message).toContain(`Secret ${ARN} may not be read`);
    expect(error.message).toContain('secretsmanager:GetSecretValue');
  });

  it.each([
    ['not JSON', PASSWORD],
    ['JSON without a user name', JSON.stringify({ password: PASSWORD })],
    ['JSON with a number for a password', JSON.stringify({ username: 'fairway', pass: PASSWORD, password: 7 })],
  ])('a secret that is %s is refused without quoting it', async (_, text) => {
    secretsManager.on(GetSecretValueCommand).resolves({ SecretString: text });
    const error = await failure(new SecretCredentials(new SecretsManagerClient({})).get(ARN));
    expect(error.message).toBe(`Secret ${ARN} must be a JSON object with string fields "username" and "password".`);
    expect(everything(error)).not.toContain(PASSWORD);
  });
});
