import type { StagingKey } from '../staging/staging-names';
import type { MessageProperties } from './message-properties';

/** A validated event: where it goes, whose it is, and the message to publish. */
export interface RoutableMessage extends StagingKey {
  body: Buffer;
  properties: MessageProperties;
}
