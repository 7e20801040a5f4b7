import type { Env } from '../../lib/platform/config';
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

/**
 * The settings of a command that reads a stage's tables and broker (`tenants`, `queues`, `stack`):
 * with `--stage` or FAIRWAY_STAGE, as deploymentEnv derives them (the stage's table names); else
 * this shell's alone, as `npm start` prints them.
 */
export function commandEnv(option: unknown, shellEnv: Env): Env {
  const staged = typeof option === 'string' || Boolean(shellEnv.FAIRWAY_STAGE);
  return staged ? deploymentEnv(shellEnv, stageOf(option, shellEnv)) : shellEnv;
}
