import { SQSClient } from '@aws-sdk/client-sqs';
import { buildApp } from 'fauxqs';

/** The SQS emulator of `npm start` and the integration tests: fauxqs, in process, on loopback only. */
export interface SqsEmulator {
  /** `http://127.0.0.1:<port>`: the endpoint for `@aws-sdk/client-sqs` (`SQS_ENDPOINT`). */
  endpoint: string;
  region: string;
  /** A client for this emulator; the caller destroys it. */
  client(): SQSClient;
  stop(): Promise<void>;
}

export const emulatorRegion = 'us-east-1';

/**
 * Starts fauxqs (pinned at 1.9.2, README of docs/sqs-local.md says why). Its `startFauxqs` always
 * listens on 0.0.0.0, so the app is built with `buildApp` and listened on 127.0.0.1 here: nothing
 * on the network can read or inject after-process events.
 */
export async function startSqsEmulator(): Promise<SqsEmulator> {
  const app = buildApp({ logger: false, defaultRegion: emulatorRegion });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const endpoint = new URL(address).origin;
  return {
    endpoint,
    region: emulatorRegion,
    client: () => sqsClient(endpoint),
    stop: () => app.close(),
  };
}

/** A client for a local emulator: any credentials do, and real ones must never be picked up by accident. */
export function sqsClient(endpoint: string): SQSClient {
  return new SQSClient({
    endpoint,
    region: emulatorRegion,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
}
