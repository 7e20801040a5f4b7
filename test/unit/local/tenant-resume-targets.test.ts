import { targetsOf } from '../../../local/ops/tenant-controls';

/** Issue 34: a resume asks for passes over the targets where the tenant has staging queues. */
describe('targetsOf: the targets a control key has staging queues on', () => {
  const queues = [
    'scan»/acme/ocr',
    'scan»/acme/index',
    'ocr»/acme',
    'scan»/other/ocr',
    'print»/acmeco',
    'scan',
    'x»/ocr',
  ];
  it.each([
    ['acme', ['ocr', 'scan']],
    ['acme/ocr', ['scan']],
    ['acme/nothing', []],
    ['other', ['scan']],
    ['acm', []],
    // `x»/ocr` reads as tenant ocr (the name cannot tell a workflow-only queue): an extra request costs nothing.
    ['ocr', ['x']],
  ])('%s → %j', (key, targets) => {
    expect(targetsOf(key, queues)).toEqual(targets);
  });
});
