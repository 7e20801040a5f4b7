import type { DocumentPort } from '../../platform/aws';
import { DeadLetters } from './dead-letters';
import { StackClaims } from './stack-claims';
import { StackItems } from './stack-items';
import { StackMarks } from './stack-marks';
import { StackPushes } from './stack-pushes';
import { StackReads } from './stack-reads';

export type { Claim } from './stack-claims';
/** The one DynamoDB call the engine makes; tests wrap it to inject failures at any call. */
export type { DocumentPort };

/**
 * Every read and write of one job's stack, by job: `reads` (what to claim, what an operator sees),
 * `claims` (a step's lease on an item), `pushes` (children), `marks` (times kept beside the stack),
 * `deadLetters` (operations set aside). Each write is a single-item conditional write (DESIGN.md)
 * but the children's batch put (see StackPushes).
 */
export class StackStore {
  readonly reads: StackReads;
  readonly claims: StackClaims;
  readonly pushes: StackPushes;
  readonly marks: StackMarks;
  readonly deadLetters: DeadLetters;

  constructor(doc: DocumentPort, table: string, job: string, batchSize = 25) {
    const items = new StackItems(doc, table, job);
    this.reads = new StackReads(items);
    this.claims = new StackClaims(items, this.reads);
    this.pushes = new StackPushes(items, batchSize);
    this.marks = new StackMarks(items);
    this.deadLetters = new DeadLetters(items, this.claims, this.pushes);
  }
}
