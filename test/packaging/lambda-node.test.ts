import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { paramArgs, root, runPackage, startableParams, type Template, takeTurnsPackaging } from './package';

takeTurnsPackaging();

const serverless = parse(readFileSync(join(root, 'serverless.yml'), 'utf8'));
const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const lambdaMajor = Number(/^nodejs(\d+)\.x$/.exec(serverless.provider.runtime)?.[1]);
const bundlePath = 'infra/tls/rds-ca-bundle.pem';

/** The PEM blocks of a bundle, each parsed. */
const certificates = (pem: string) =>
  (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map(
    (block) => new X509Certificate(block),
  );

// Lambda's Node (issue 26): the runtime, the bundle's target, `engines` and the Node the tests run on agree.
describe('Lambda’s Node major', () => {
  it('is one Node major in provider.runtime, the esbuild target and package.json engines', () => {
    expect(lambdaMajor).toBeGreaterThanOrEqual(22);
    expect(serverless.custom.esbuild.target).toBe(`node${lambdaMajor}`);
    expect(packageJson.engines.node).toBe(`>=${lambdaMajor}`);
  });

  // Issue 38, item 7: no .nvmrc told a developer's version manager which Node to use.
  it('is the major of .nvmrc', () => {
    expect(readFileSync(join(root, '.nvmrc'), 'utf8').trim()).toBe(String(lambdaMajor));
  });

  it('is the Node these tests run on, or an older one is not (bash .ci/run puts Lambda’s first on PATH)', () => {
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(lambdaMajor);
  });
});

describe('the CA bundle every function trusts on Lambda (docs/tls.md)', () => {
  let dir: string;
  let template: Template;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'fairway-tls-package-'));
    runPackage(['--stage', 'dev', '--package', dir, ...paramArgs(startableParams)]);
    template = JSON.parse(readFileSync(join(dir, 'cloudformation-template-update-stack.json'), 'utf8'));
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is NODE_EXTRA_CA_CERTS of every function, a path inside its package', () => {
    const functions = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function');
    expect(functions).toHaveLength(5);
    for (const fn of functions)
      expect(fn.Properties.Environment.Variables.NODE_EXTRA_CA_CERTS).toBe(`/var/task/${bundlePath}`);
    const zips = readdirSync(dir).filter((name) => name.endsWith('.zip'));
    expect(zips).toHaveLength(5);
    // A zip names its entries in plain text in its central directory.
    for (const zip of zips) expect(readFileSync(join(dir, zip)).includes(bundlePath)).toBe(true);
  });

  it('holds only Amazon RDS root CAs, each valid for at least another year, the default region’s among them', () => {
    const bundle = certificates(readFileSync(join(root, bundlePath), 'utf8'));
    expect(bundle.length).toBeGreaterThan(0);
    const inAYear = Date.now() + 365 * 86_400_000;
    for (const certificate of bundle) {
      expect(certificate.ca).toBe(true);
      expect(certificate.subject).toContain('OU=Amazon RDS');
      expect(certificate.issuer).toBe(certificate.subject);
      expect(certificate.checkIssued(certificate)).toBe(true);
      expect(new Date(certificate.validTo).getTime()).toBeGreaterThan(inAYear);
    }
    const region = serverless.provider.region.match(/'([a-z0-9-]+)'/)?.[1];
    expect(bundle.map((c) => c.subject)).toContainEqual(
      expect.stringContaining(`CN=Amazon RDS ${region} Root CA RSA2048 G1`),
    );
  });
});
