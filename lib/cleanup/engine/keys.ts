/**
 * Item layout of a job's stack in the cleanup table (one partition per job):
 *
 * | pk           | sk                        | what |
 * |--------------|---------------------------|------|
 * | `<job>`      | `op#<seq:12>#<pos:6>`     | one operation; a descending Query on `op#` reads the newest first |
 * | `<job>`      | `fill#<generation:12>`    | one fill of the empty stack: the default operation, kept as a record once done |
 * | `<job>`      | `seq`                     | the push sequence counter (one increment per parent that pushes children) |
 * | `<job>`      | `mark#<name>`             | a time the job keeps beside its stack (`JobMarks`), moved only forward |
 * | `<job>#dead` | the operation's own sk    | a dead-lettered operation with its last error |
 *
 * Children of one parent share the parent's push sequence and differ by position, so they sit
 * together on top of everything pushed before them, in the (shuffled) order of their positions.
 */
export const OPERATION_PREFIX = 'op#';
export const FILL_PREFIX = 'fill#';
export const SEQUENCE_KEY = 'seq';
export const MARK_PREFIX = 'mark#';

const SEQUENCE_DIGITS = 12;
const POSITION_DIGITS = 6;
/** Children one parent may push at once; a supplier with more returns a page and a continuation. */
export const MAX_CHILDREN_PER_PUSH = 10 ** POSITION_DIGITS - 1;

const pad = (value: number, digits: number) => String(value).padStart(digits, '0');

export const stackPartition = (job: string) => job;
export const deadLetterPartition = (job: string) => `${job}#dead`;
export const operationKey = (sequence: number, position: number) =>
  `${OPERATION_PREFIX}${pad(sequence, SEQUENCE_DIGITS)}#${pad(position, POSITION_DIGITS)}`;
export const fillKey = (generation: number) => `${FILL_PREFIX}${pad(generation, SEQUENCE_DIGITS)}`;
export const markKey = (name: string) => `${MARK_PREFIX}${name}`;
export const isFillKey = (sk: string) => sk.startsWith(FILL_PREFIX);
export const fillGeneration = (sk: string) => Number(sk.slice(FILL_PREFIX.length));
