import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { projectRoot } from '../../local/paths';

/**
 * A service the bench runs in a process of its own (dynalite, the delay proxies), so that its
 * work does not share the bench's event loop and skew what the bench times. It answers
 * requests over the IPC channel.
 */
export interface SideProcess<Ready> {
  /** What the process sent once it was listening (its ports). */
  ready: Ready;
  request<T>(type: string, body?: unknown): Promise<T>;
  stop(): Promise<void>;
}

interface Answer {
  id: number;
  result?: unknown;
  error?: string;
}

/** Starts `entry` (a .ts file of this repository, bundled by scripts/run-ts.mjs) with `args`. */
export async function startSideProcess<Ready>(entry: string, args: string[]): Promise<SideProcess<Ready>> {
  // A bundle (scripts/run-ts.mjs) lives in node_modules/.cache, which a git worktree shares with the main
  // checkout through a symlink: the entry point's own tree is the one whose side processes to run.
  const root = projectRoot(
    __dirname.includes('node_modules') && process.argv[1] ? dirname(process.argv[1]) : __dirname,
  );
  const child: ChildProcess = spawn(process.execPath, [join(root, 'scripts/run-ts.mjs'), join(root, entry), ...args], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // The SDK's Node 20 notice (a plain Warning, which --disable-warning cannot single out) once per process is noise.
    env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  });
  const waiting = new Map<number, (answer: Answer) => void>();
  let nextId = 0;
  const ready = await new Promise<Ready>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${entry} exited with ${code} before it was ready`)));
    child.once('message', (message) => resolve((message as { ready: Ready }).ready));
  });
  child.removeAllListeners('exit');
  child.on('message', (message) => {
    const answer = message as Answer;
    waiting.get(answer.id)?.(answer);
    waiting.delete(answer.id);
  });
  return {
    ready,
    request<T>(type: string, body?: unknown) {
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        waiting.set(id, (answer) =>
          answer.error === undefined ? resolve(answer.result as T) : reject(new Error(answer.error)),
        );
        child.send({ id, type, body });
      });
    },
    stop() {
      if (child.exitCode !== null) return Promise.resolve();
      return new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.disconnect(); // the child exits on disconnect, cleaning up after itself
      });
    },
  };
}

/** The side process's half: announces `ready`, then answers each request with its handler's result. */
export function serveSideProcess(ready: unknown, handlers: Record<string, (body: unknown) => unknown>): void {
  process.on('message', async (message: { id: number; type: string; body: unknown }) => {
    try {
      const handler = handlers[message.type];
      if (!handler) throw new Error(`no handler for ${message.type}`);
      process.send!({ id: message.id, result: await handler(message.body) });
    } catch (error) {
      process.send!({ id: message.id, error: (error as Error).message });
    }
  });
  // The bench's end (or its crash) ends this process too.
  process.on('disconnect', () => process.exit(0));
  process.send!({ ready });
}
