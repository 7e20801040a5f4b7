import type { Env } from '../../lib/config/env';
import { stageEnvironment } from '../service';

/**
 * The settings `fairway doctor` and `fairway setup` work with: the shell's environment over what
 * serverless.yml gives the functions of `stage` (a variable set empty counts as not set).
 */
export function deploymentEnv(shellEnv: Env, stage: string): Env {
  const defined = Object.entries(shellEnv).filter(([, value]) => value !== undefined && value !== '');
  return { ...stageEnvironment(stage), ...Object.fromEntries(defined) };
}

/** The stage a command works on: `--stage`, else FAIRWAY_STAGE, else dev. */
export const stageOf = (option: unknown, env: Env): string =>
  typeof option === 'string' ? option : (env.FAIRWAY_STAGE ?? 'dev');
