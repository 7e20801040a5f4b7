import { loadAwsServiceSpecSync } from '@aws-cdk/aws-service-spec';
import type { PropertyType, Resource, SpecDatabase, TypeDefinition } from '@aws-cdk/service-spec-types';

/**
 * Checks a CloudFormation template against the resource specification (`@aws-cdk/aws-service-spec`):
 * every resource type exists, every property name is known, required properties are present, and
 * scalar values have their type. A value built by an intrinsic function (`Ref`, `Fn::*`) is taken on
 * trust, as CloudFormation resolves it only at deploy time. Returns one line per problem.
 */
export function specProblems(template: { Resources: Record<string, unknown> }, db: SpecDatabase = spec()): string[] {
  const problems: string[] = [];
  for (const [id, raw] of Object.entries(template.Resources)) {
    const resource = raw as { Type: string; Properties?: Record<string, unknown> };
    for (const key of Object.keys(resource)) {
      if (!RESOURCE_ATTRIBUTES.has(key)) problems.push(`${id}: unknown resource attribute ${key}`);
    }
    const definition = db.lookup('resource', 'cloudFormationType', 'equals', resource.Type)[0] as Resource | undefined;
    if (!definition) {
      problems.push(`${id}: unknown resource type ${resource.Type}`);
      continue;
    }
    checkObject(db, definition.properties, resource.Properties ?? {}, `${id}.Properties`, problems);
  }
  return problems;
}

let cached: SpecDatabase | undefined;
/** The specification database, loaded once per test file (about half a second). */
export const spec = () => {
  cached ??= loadAwsServiceSpecSync();
  return cached;
};

const RESOURCE_ATTRIBUTES = new Set([
  'Type',
  'Properties',
  'DependsOn',
  'DeletionPolicy',
  'UpdateReplacePolicy',
  'Condition',
  'Metadata',
  'CreationPolicy',
  'UpdatePolicy',
]);

const isIntrinsic = (value: unknown) =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  Object.keys(value).length === 1 &&
  /^(Ref|Fn::\w+|Condition)$/.test(Object.keys(value)[0]!);

function checkObject(
  db: SpecDatabase,
  properties: TypeDefinition['properties'],
  value: unknown,
  path: string,
  problems: string[],
) {
  if (isIntrinsic(value)) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push(`${path}: must be an object`);
    return;
  }
  const given = value as Record<string, unknown>;
  for (const [name, property] of Object.entries(properties)) {
    if (property.required && !(name in given)) problems.push(`${path}: missing required property ${name}`);
  }
  for (const [name, item] of Object.entries(given)) {
    const property = properties[name];
    if (!property) problems.push(`${path}: unknown property ${name}`);
    else checkValue(db, [property.type, ...(property.previousTypes ?? [])], item, `${path}.${name}`, problems);
  }
}

/** Accepts `value` if it matches any of `types` (a property's current type or one it had before). */
function checkValue(db: SpecDatabase, types: PropertyType[], value: unknown, path: string, problems: string[]) {
  if (isIntrinsic(value)) return;
  const attempts = types.flatMap((type) => (type.type === 'union' ? type.types : [type]));
  const failures = attempts.map((type) => {
    const found: string[] = [];
    checkOne(db, type, value, path, found);
    return found;
  });
  if (failures.some((found) => found.length === 0)) return;
  problems.push(...failures.reduce((fewest, found) => (found.length < fewest.length ? found : fewest)));
}

function checkOne(db: SpecDatabase, type: PropertyType, value: unknown, path: string, problems: string[]) {
  const scalar = (ok: boolean, what: string) => {
    if (!ok) problems.push(`${path}: must be ${what}`);
  };
  switch (type.type) {
    case 'string':
    case 'date-time':
      // CloudFormation turns numbers and booleans given for a string into their text.
      return scalar(['string', 'number', 'boolean'].includes(typeof value), 'a string');
    case 'integer':
      return scalar(Number.isInteger(Number(value)) && value !== '' && typeof value !== 'boolean', 'an integer');
    case 'number':
      return scalar(Number.isFinite(Number(value)) && value !== '' && typeof value !== 'boolean', 'a number');
    case 'boolean':
      return scalar(value === true || value === false || value === 'true' || value === 'false', 'a boolean');
    case 'json':
      return scalar(typeof value === 'object' || typeof value === 'string', 'a JSON object');
    case 'null':
      return scalar(value === null, 'null');
    case 'tag':
      return checkTag(value, path, problems);
    case 'array':
      if (!Array.isArray(value)) return scalar(false, 'a list');
      value.forEach((item, i) => {
        checkValue(db, [type.element], item, `${path}[${i}]`, problems);
      });
      return;
    case 'map':
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return scalar(false, 'a map');
      for (const [key, item] of Object.entries(value)) checkValue(db, [type.element], item, `${path}.${key}`, problems);
      return;
    case 'ref': {
      const definition = db.get('typeDefinition', type.reference) as TypeDefinition;
      return checkObject(db, definition.properties, value, path, problems);
    }
    case 'union':
      return checkValue(db, type.types, value, path, problems);
  }
}

function checkTag(value: unknown, path: string, problems: string[]) {
  const tag = value as Record<string, unknown>;
  if (typeof tag !== 'object' || tag === null || !('Key' in tag) || !('Value' in tag)) {
    problems.push(`${path}: must be a tag { Key, Value }`);
  }
}
