import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

const root = join(__dirname, '../..');

/** The `--param`s of the deploy command docs/deploying.md shows, in order. */
export function documentedDeployParams(): Record<string, string> {
  const doc = readFileSync(join(root, 'docs/deploying.md'), 'utf8');
  const command = /```sh\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
  const params = Object.fromEntries(
    [...command.matchAll(/--param=(["'])(\w+)=(.*?)\1/g)].map((m) => [m[2]!, m[3]!] as const),
  );
  const known = Object.keys(serverlessParams());
  for (const name of Object.keys(params)) {
    if (!known.includes(name))
      throw new Error(`docs/deploying.md passes --param ${name}, which serverless.yml does not define`);
  }
  return params;
}

/** The `--param`s docs/deploying.md adds to that command to go live (delete for real), after the dry run. */
export function documentedGoLiveParams(): Record<string, string> {
  const doc = readFileSync(join(root, 'docs/deploying.md'), 'utf8');
  const live = /^\d+\. \*\*Go live\*\*.*$/m.exec(doc)?.[0] ?? '';
  const params = Object.fromEntries([...live.matchAll(/--param="(\w+)=(.*?)"/g)].map((m) => [m[1]!, m[2]!] as const));
  if (Object.keys(params).length === 0) throw new Error('docs/deploying.md has no "Go live" step with a --param');
  return params;
}

/** The default params block of serverless.yml. */
export function serverlessParams(): Record<string, unknown> {
  return parse(readFileSync(join(root, 'serverless.yml'), 'utf8'), { merge: true }).params.default;
}
