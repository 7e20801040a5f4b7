import {
  BrokerError,
  ConfigError,
  errorText,
  FairwayError,
  InvalidEventError,
  ManagementApiError,
} from '../../../lib/platform/errors';

describe('Fairway errors', () => {
  it.each([
    [new ConfigError(['A: is required']), 'ConfigError'],
    [new InvalidEventError('tenantId', 'is required'), 'InvalidEventError'],
    [new BrokerError('closed', { replyCode: 406 }), 'BrokerError'],
    [new ManagementApiError('answered 500', { status: 500 }), 'ManagementApiError'],
  ])('%s is a FairwayError named after its class', (error, name) => {
    expect(error).toBeInstanceOf(FairwayError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
  });

  it('keeps the reply code, the status and the cause', () => {
    const cause = new Error('socket hang up');
    expect(new BrokerError('lost', { cause, replyCode: 320 })).toMatchObject({ cause, replyCode: 320 });
    expect(new ManagementApiError('down', { cause, status: 503 })).toMatchObject({ cause, status: 503 });
  });

  it('a configuration error names every problem and says what to do', () => {
    expect(new ConfigError(['A: is required', 'B: must be a number']).message).toBe(
      'Invalid configuration: A: is required; B: must be a number. Fix these environment variables and redeploy.',
    );
    expect(new ConfigError(['A: is required'], 'Fix your environment.').message).toMatch(/Fix your environment\.$/);
  });

  it('an invalid event names each field', () => {
    const error = new InvalidEventError([
      { field: 'tenantId', reason: 'is required' },
      { field: 'message.body', reason: 'must be a string' },
    ]);
    expect(error.message).toBe('tenantId: is required; message.body: must be a string');
    expect(error.fields).toEqual(['tenantId', 'message.body']);
  });

  it.each([
    [new Error('plain'), 'Error: plain'],
    ['a string', 'a string'],
    [
      new BrokerError('Cannot publish', { cause: new Error('Channel closed') }),
      'BrokerError: Cannot publish (caused by Error: Channel closed)',
    ],
    [
      new FairwayError('a', { cause: new FairwayError('b', { cause: 'c' }) }),
      'FairwayError: a (caused by FairwayError: b (caused by c))',
    ],
  ])('errorText(%p) is one line with its causes', (error, text) => {
    expect(errorText(error)).toBe(text);
  });
});
