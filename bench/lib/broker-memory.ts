import type { BenchVhost } from './services';

/**
 * The broker node's memory held by classic queue processes (its memory breakdown's `queue_procs`,
 * GET /api/nodes/<node>?memory=true), in bytes: the median of `reads` readings half a second apart
 * (other tests share the broker; the median resists one of them declaring or deleting queues).
 */
export async function queueProcsBytes(vhost: BenchVhost, reads = 3): Promise<number> {
  const nodes = await vhost.api<{ name: string }[]>('GET', '/api/nodes');
  const node = encodeURIComponent(nodes[0]!.name);
  const values: number[] = [];
  for (let i = 0; i < reads; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 500));
    const answer = await vhost.api<{ memory: { queue_procs: number } }>('GET', `/api/nodes/${node}?memory=true`);
    values.push(answer.memory.queue_procs);
  }
  values.sort((a, b) => a - b);
  return values[Math.floor(values.length / 2)]!;
}
