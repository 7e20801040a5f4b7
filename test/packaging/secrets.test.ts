import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { documentedDeployParams } from '../harness/documented-deploy';
import { paramArgs, ref, root, runPackage, type Template, takeTurnsPackaging } from './package';

takeTurnsPackaging();

const PASSWORD = 'Recognisable-Pa55word-7f3a';
const outputs = ['.serverless', '.esbuild'].map((dir) => join(root, dir));

/** Every file under `dir` whose bytes contain `text`. */
function filesContaining(dir: string, text: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((file) => readFileSync(file).includes(text));
}

/** Output of a refused `serverless package`, or undefined if it packaged. */
function refusal(args: string[]): string | undefined {
  try {
    runPackage(args);
    return undefined;
  } catch (error) {
    const { stdout, stderr } = error as { stdout: Buffer; stderr: Buffer };
    return `${stdout}${stderr}`;
  }
}

// docs/deploying.md "Secrets": the template carries secret ARNs, never a password.
describe('serverless package --stage prod keeps passwords out of .serverless/', () => {
  const documented = documentedDeployParams();
  let template: Template;
  beforeAll(() => {
    for (const dir of outputs) rmSync(dir, { recursive: true, force: true });
    runPackage(['--stage', 'prod', ...paramArgs(documented)]);
    template = JSON.parse(readFileSync(join(root, '.serverless/cloudformation-template-update-stack.json'), 'utf8'));
  }, 120_000);

  it('the documented params name each connection by a URL without credentials and a secret ARN', () => {
    for (const name of ['amqpUrl', 'rabbitmqManagementUrl', 'nxrgDatabaseUrl', 'openxdsDatabaseUrl']) {
      const url = new URL(documented[name]!);
      expect([url.username, url.password]).toEqual(['', '']);
    }
    for (const name of ['rabbitmqSecretArn', 'nxrgDatabaseSecretArn', 'openxdsDatabaseSecretArn'])
      expect(documented[name]).toMatch(/^arn:aws:secretsmanager:/);
  });

  it.each([
    ['RouterRole', ['rabbitmqSecretArn']],
    ['DistributorRole', ['rabbitmqSecretArn']],
    ['RegistryTimebasedCleanupRole', ['nxrgDatabaseSecretArn']],
    ['RegistryStatus90CleanupRole', ['nxrgDatabaseSecretArn']],
    ['RepositoryCleanupRole', ['nxrgDatabaseSecretArn', 'openxdsDatabaseSecretArn']],
  ])('%s may read exactly the secrets of %s', (role, params) => {
    const statements = template.Resources[role]!.Properties.Policies.flatMap((p: any) => p.PolicyDocument.Statement);
    const grants = statements
      .map((s: any) => s['Fn::If']?.[1] ?? s)
      .filter((s: any) => [s.Action].flat().some((a: string) => a.startsWith('secretsmanager:')));
    for (const grant of grants) expect(grant.Action).toBe('secretsmanager:GetSecretValue');
    expect(grants.map((g: any) => g.Resource).sort()).toEqual(params.map((p) => documented[p]).sort());
  });

  it('each function is told the ARNs of the secrets it may read, and no other', () => {
    const variables = (fn: string) => template.Resources[fn]!.Properties.Environment.Variables;
    expect(variables('RouterLambdaFunction').RABBITMQ_SECRET_ARN).toBe(documented.rabbitmqSecretArn);
    expect(variables('RegistryTimebasedCleanupLambdaFunction').NXRG_DATABASE_SECRET_ARN).toBe(
      documented.nxrgDatabaseSecretArn,
    );
    expect(variables('RegistryTimebasedCleanupLambdaFunction').OPENXDS_DATABASE_SECRET_ARN).toBeUndefined();
    expect(variables('RepositoryCleanupLambdaFunction').OPENXDS_DATABASE_SECRET_ARN).toBe(
      documented.openxdsDatabaseSecretArn,
    );
    expect(ref(template.Resources.RouterLambdaFunction!.Properties.Role)).toBe('RouterRole');
  });

  it('a password put in a connection URL is refused, named by variable, and written nowhere', () => {
    const withPassword = {
      ...documented,
      amqpUrl: `amqps://fairway:${PASSWORD}@b-1234.mq.eu-west-1.amazonaws.com:5671`,
      nxrgDatabaseUrl: `postgres://fairway:${PASSWORD}@nxrg.example:5432/nxrg`,
    };
    const message = refusal(['--stage', 'prod', ...paramArgs(withPassword)]);
    expect(message).toContain('router: AMQP_URL looks like a URL with credentials');
    expect(message).toContain('registryTimebasedCleanup: NXRG_DATABASE_URL looks like a URL with credentials');
    expect(message).not.toContain(PASSWORD);
    expect(outputs.flatMap((dir) => filesContaining(dir, PASSWORD))).toEqual([]);
  }, 60_000);
});
