import { startDelayProxy } from './delay-proxy';
import { serveSideProcess } from './side-process';

/**
 * Delay proxies in a process of their own (their timers must not wait behind the bench's work):
 * `delay-server.ts <delayMs> <host:port>…` answers with the port of a proxy to each upstream.
 */
async function main(): Promise<void> {
  const [delay, ...upstreams] = process.argv.slice(2);
  const delayMs = Number(delay);
  const ports: number[] = [];
  for (const upstream of upstreams) {
    const [host, port] = upstream.split(':');
    ports.push((await startDelayProxy({ host: host!, port: Number(port) }, delayMs)).port);
  }
  serveSideProcess({ ports }, {});
}

main().catch((error: Error) => {
  console.error(error.stack ?? error.message);
  process.exit(1);
});
