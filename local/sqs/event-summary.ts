import { parseAfterProcessRecord } from '../../lib/routing/event';

/** Whose an after-process event is and where it goes, read from a body the router may have rejected. */
export interface EventSummary {
  tenant?: string;
  target?: string;
  workflow?: string;
}

/**
 * The router's own reading when the event is valid; otherwise whatever of `tenantId`/`target`
 * (Fairway's shape) or `to`/`customData.tenantId` (a task message) is readable, so that a
 * rejected event can still be listed and redriven by tenant or target.
 */
export function summarizeEvent(body: string): EventSummary {
  try {
    const { tenantId, target, workflowName } = parseAfterProcessRecord({ body, messageAttributes: {} });
    return { tenant: tenantId, target, ...(workflowName ? { workflow: workflowName } : {}) };
  } catch {
    return leniently(body);
  }
}

function leniently(body: string): EventSummary {
  const json = parseJson(body);
  if (!isObject(json)) return {};
  if ('taskData' in json) {
    const taskData =
      typeof json.taskData === 'string' ? parseJson(Buffer.from(json.taskData, 'base64').toString()) : {};
    const customData = isObject(taskData) && isObject(taskData.customData) ? taskData.customData : {};
    return pick({ tenant: customData.tenantId, target: json.to });
  }
  return pick({ tenant: json.tenantId, target: json.target, workflow: json.workflowName });
}

function pick(fields: Record<keyof EventSummary, unknown> | Omit<Record<keyof EventSummary, unknown>, 'workflow'>) {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => typeof v === 'string')) as EventSummary;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
