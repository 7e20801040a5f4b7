import { z } from 'zod';
import type { Problem } from '../platform/errors';

/**
 * What AMQP 0-9-1 and its client can encode, checked before publishing so that a message that
 * cannot be sent is a bad event naming its field, not a broker failure retried five times.
 */

/** A shortstr (every string property, every table key) holds at most 255 UTF-8 bytes. */
export const MAX_SHORTSTR_BYTES = 255;

/**
 * amqplib encodes a header table into a 64 KiB buffer and throws beyond it; that is also well
 * below RabbitMQ's default frame_max (128 KiB), which the whole content header must fit in.
 */
export const MAX_HEADER_TABLE_BYTES = 65_536;

/** A string property that must fit a shortstr. */
export const shortString = () =>
  z.string().superRefine((value, ctx) => {
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes > MAX_SHORTSTR_BYTES) {
      ctx.addIssue({ code: 'custom', message: `is ${bytes} bytes; AMQP allows at most ${MAX_SHORTSTR_BYTES}` });
    }
  });

/** A problem inside a header table: the keys leading to it, and what is wrong. */
interface HeaderIssue {
  path: string[];
  reason: string;
}

/**
 * Problems with a header table as amqplib would encode it: keys over 255 bytes (at any depth),
 * objects carrying amqplib's type marker `!` (it would reinterpret them), and the encoded size.
 */
export function headerTableIssues(headers: Record<string, unknown>): HeaderIssue[] {
  const issues: HeaderIssue[] = [];
  const size = tableSize(headers, [], issues);
  if (issues.length === 0 && size > MAX_HEADER_TABLE_BYTES) {
    issues.push({ path: [], reason: `encode to ${size} bytes; AMQP headers allow at most ${MAX_HEADER_TABLE_BYTES}` });
  }
  return issues;
}

/** The same, as problems of an event field (`field` is where the table is). */
export function headerTableProblems(headers: Record<string, unknown>, field: string): Problem[] {
  return headerTableIssues(headers).map(({ path, reason }) => ({ field: [field, ...path].join('.'), reason }));
}

/** A header table schema that refuses what amqplib cannot encode. */
export const headerTable = <T extends z.ZodType<Record<string, unknown>>>(schema: T) =>
  schema.superRefine((headers, ctx) => {
    for (const { path, reason } of headerTableIssues(headers)) ctx.addIssue({ code: 'custom', path, message: reason });
  });

/** Encoded size of a field table: 4 length bytes, then per entry a shortstr key and a tagged value. */
function tableSize(table: Record<string, unknown>, path: string[], issues: HeaderIssue[]): number {
  if (Object.hasOwn(table, '!')) {
    issues.push({ path, reason: 'must not have a key "!" (the AMQP client reads it as a type marker)' });
    return 0;
  }
  let size = 4;
  for (const [key, value] of Object.entries(table)) {
    if (value === undefined) continue;
    const keyBytes = Buffer.byteLength(key, 'utf8');
    if (keyBytes > MAX_SHORTSTR_BYTES) {
      issues.push({ path, reason: `has a key of ${keyBytes} bytes; AMQP allows at most ${MAX_SHORTSTR_BYTES}` });
      continue;
    }
    size += 1 + keyBytes + valueSize(value, [...path, key], issues);
  }
  return size;
}

/** A tagged field value as amqplib encodes it (its own choice of integer width). */
function valueSize(value: unknown, path: string[], issues: HeaderIssue[]): number {
  const tag = 1;
  if (typeof value === 'string') return tag + 4 + Buffer.byteLength(value, 'utf8');
  if (typeof value === 'boolean') return tag + 1;
  if (typeof value === 'number') return tag + numberSize(value);
  if (value === null) return tag;
  if (Buffer.isBuffer(value)) return tag + 4 + value.length;
  if (Array.isArray(value))
    return tag + 4 + value.reduce((sum: number, item) => sum + valueSize(item, path, issues), 0);
  if (typeof value === 'object') return tag + tableSize(value as Record<string, unknown>, path, issues);
  issues.push({ path, reason: `is a ${typeof value}, which AMQP headers cannot carry` });
  return 0;
}

function numberSize(n: number): number {
  const floating = n >= 0x8000000000000000 || (Math.abs(n) < 0x4000000000000 && Math.floor(n) !== n);
  if (floating) return 8;
  if (n >= -0x80 && n < 0x80) return 1;
  if (n >= -0x8000 && n < 0x8000) return 2;
  if (n >= -0x80000000 && n < 0x80000000) return 4;
  return 8;
}
