import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { startSqsEmulator } from '../../../local/sqs/emulator';

const reachable = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host, port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });

describe('the SQS emulator (fauxqs)', () => {
  it('listens on 127.0.0.1 only, not on the machine’s other addresses', async () => {
    const emulator = await startSqsEmulator();
    try {
      const { hostname, port } = new URL(emulator.endpoint);
      expect(hostname).toBe('127.0.0.1');
      expect(await reachable('127.0.0.1', Number(port))).toBe(true);
      const external = Object.values(networkInterfaces())
        .flat()
        .filter((a) => a && a.family === 'IPv4' && !a.internal)
        .map((a) => a!.address);
      for (const address of external) expect(await reachable(address, Number(port))).toBe(false);
    } finally {
      await emulator.stop();
    }
  });
});
