import fc from 'fast-check';
import {
  defaultMutators,
  parseStagingQueueName,
  type QueueNameMutator,
  STAGING_SEPARATOR,
  type StagingDestination,
  type StagingKey,
  stagingDestination,
  stagingQueueName,
} from '../../../lib/staging/staging-names';

describe('stagingQueueName', () => {
  it.each<[string, StagingKey, string]>([
    // MessageRouterTests.processDocumentMessageRouter (reference implementation)
    [
      'tenant and workflow',
      { target: 'dataprocessing-entity-extract-in', tenantId: 'poc-tenant', workflowName: 'enrichment' },
      'dataprocessing-entity-extract-in»/poc-tenant/enrichment',
    ],
    // WorkflowWorkerTest.tenantIdRerouteTest (worker-workflow)
    [
      'numeric tenant',
      { target: 'action_1-in', tenantId: '1', workflowName: 'sample-message-prioritization-workflow' },
      'action_1-in»/1/sample-message-prioritization-workflow',
    ],
    ['tenant only', { target: 'worker-input', tenantId: 'tenant1' }, 'worker-input»/tenant1'],
    ['a target with a slash', { target: 'a/b', tenantId: 't' }, 'a/b»/t'],
  ])('%s', (_, key, name) => {
    expect(stagingQueueName(key)).toBe(name);
  });

  it('is the target itself when no mutator adds a discriminator', () => {
    expect(stagingQueueName({ target: 'worker-input', tenantId: 't' }, [])).toBe('worker-input');
  });

  it('runs a chain a user extended, in order', () => {
    type Regional = StagingKey & { region?: string };
    const chain: QueueNameMutator<Regional>[] = [
      ...defaultMutators,
      { field: 'region', discriminator: (k) => k.region },
    ];
    const keys: Regional[] = [
      { target: 'q', tenantId: 't', workflowName: 'w', region: 'eu' },
      { target: 'q', tenantId: 't', region: 'eu' },
    ];
    expect(keys.map((k) => stagingQueueName(k, chain))).toEqual(['q»/t/w/eu', 'q»/t/eu']);
  });

  it.each<[string, StagingKey, RegExp]>([
    ['a tenant containing »', { target: 'q', tenantId: 'a»b' }, /^tenantId: must not contain "»"/],
    ['a tenant containing /', { target: 'q', tenantId: 'other/x' }, /^tenantId: must not contain "\/"/],
    [
      'a workflow containing /',
      { target: 'q', tenantId: 't', workflowName: 'w/x' },
      /^workflowName: must not contain "\/"/,
    ],
    ['a target containing »', { target: 'q»/other', tenantId: 't' }, /^target: must not contain "»"/],
    ['an empty target', { target: '', tenantId: 't' }, /^target: must not be empty$/],
    ['a reserved target', { target: 'amq.direct', tenantId: 't' }, /^target: names starting with "amq." are reserved/],
    ['a target over 255 bytes', { target: 'x'.repeat(256), tenantId: 't' }, /^target: is 256 bytes/],
  ])('rejects %s, never rewrites it', (_, key, message) => {
    expect(() => stagingQueueName(key)).toThrow(message);
  });

  it.each<[string, StagingKey, StagingDestination]>([
    ['an empty workflow: none', { target: 'q', tenantId: 't', workflowName: '' }, { queue: 'q»/t' }],
    ['an empty tenant: none', { target: 'q', tenantId: '' }, { queue: 'q' }],
    ['no tenant: the workflow alone', { target: 'q', workflowName: 'w' }, { queue: 'q»/w' }],
    ['neither: the target', { target: 'q' }, { queue: 'q' }],
    [
      'a workflow too long: dropped, the tenant keeps its queue',
      { target: 'q', tenantId: 't', workflowName: 'w'.repeat(250) },
      { queue: 'q»/t', shortened: 'discriminators-dropped' },
    ],
    [
      'a tenant too long: straight to the target',
      { target: 'q', tenantId: 'é'.repeat(126), workflowName: 'w' },
      { queue: 'q', shortened: 'target' },
    ],
  ])('routes %s', (_, key, destination) => {
    expect(stagingDestination(key)).toEqual(destination);
  });

  it('accepts a name of exactly 255 bytes', () => {
    const name = stagingQueueName({ target: 'q', tenantId: 'x'.repeat(251) });
    expect(Buffer.byteLength(name)).toBe(255);
  });
});

describe('parseStagingQueueName', () => {
  it.each([
    [
      'worker-input»/tenant1/workflow1',
      { target: 'worker-input', tenant: 'tenant1', workflow: 'workflow1', discriminators: ['tenant1', 'workflow1'] },
    ],
    ['worker-input»/tenant1', { target: 'worker-input', tenant: 'tenant1', discriminators: ['tenant1'] }],
    // the reference's integration tests and README write no slash after »
    [
      'elastic-query-worker»tenant1',
      { target: 'elastic-query-worker', tenant: 'tenant1', discriminators: ['tenant1'] },
    ],
    [
      'worker-input»tenant1/workflow1',
      { target: 'worker-input', tenant: 'tenant1', workflow: 'workflow1', discriminators: ['tenant1', 'workflow1'] },
    ],
    ['q»/t/w/eu', { target: 'q', tenant: 't', workflow: 'w', discriminators: ['t', 'w', 'eu'] }],
    ['q»', { target: 'q', discriminators: [] }],
  ])('%s', (name, parts) => {
    expect(parseStagingQueueName(name)).toEqual(parts);
  });

  it.each(['worker-input', '»/t', ''])('%j is not a staging queue', (name) => {
    expect(parseStagingQueueName(name)).toBeUndefined();
  });

  const id = fc
    .string({ minLength: 1, maxLength: 40, unit: 'grapheme' })
    .filter((s) => !s.includes('/') && !s.includes(STAGING_SEPARATOR));
  const target = fc
    .string({ minLength: 1, maxLength: 60, unit: 'grapheme' })
    .filter((s) => !s.includes(STAGING_SEPARATOR) && !s.startsWith('amq.'));
  const key = fc.record(
    { target, tenantId: id, workflowName: fc.option(id, { nil: undefined }) },
    { requiredKeys: ['target', 'tenantId'] },
  );

  // "." and ".." are refused as targets (the management API cannot address them).
  const fits = (k: StagingKey) =>
    k.target !== '.' &&
    k.target !== '..' &&
    Buffer.byteLength(`${k.target}»/${k.tenantId}/${k.workflowName ?? ''}`) <= 255;

  it('inverts stagingQueueName for every valid key', () => {
    fc.assert(
      fc.property(key, (k) => {
        fc.pre(fits(k));
        const { target, tenant, workflow } = parseStagingQueueName(stagingQueueName(k))!;
        expect({ target, tenant, workflow }).toEqual({
          target: k.target,
          tenant: k.tenantId,
          workflow: k.workflowName,
        });
      }),
    );
  });

  it('never gives two different keys the same staging queue', () => {
    fc.assert(
      fc.property(key, key, (a, b) => {
        fc.pre(fits(a) && fits(b));
        const same = a.target === b.target && a.tenantId === b.tenantId && a.workflowName === b.workflowName;
        expect(stagingQueueName(a) === stagingQueueName(b)).toBe(same);
      }),
    );
  });
});
