// Turns the first schema violation into the message a developer reads: it names the field
// ("name is required", "scopes[0] must be a string"). A schema may carry its own wording in
// the `x-error-message` keyword when the contract fixes the words.
import type { FastifySchemaValidationError } from 'fastify';

export const ERROR_MESSAGE_KEYWORD = 'x-error-message';

type Part = 'body' | 'querystring' | 'params' | 'headers' | string | undefined;

interface VerboseError extends FastifySchemaValidationError {
  parentSchema?: Record<string, unknown>;
  data?: unknown;
}

/** `/rules/0/category` -> `rules[0].category`. */
function fieldName(instancePath: string, child?: string): string {
  const segments = instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) {
    segments.push(child);
  }
  return segments.reduce(
    (name, segment) =>
      /^\d+$/.test(segment) ? `${name}[${segment}]` : name ? `${name}.${segment}` : segment,
    '',
  );
}

/** `orgId` -> `org`, `familyID` -> `family`, `deliveryID` -> `delivery`. */
function thingOfParam(param: string): string {
  const base = param.replace(/I[dD]$/, '');
  return base.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function describeType(type: unknown): string {
  const types = Array.isArray(type) ? type : [type];
  return types.map((t) => article(String(t))).join(' or ');
}

export function validationMessage(errors: FastifySchemaValidationError[], part: Part): string {
  const error = errors[0] as VerboseError | undefined;
  if (!error) {
    return 'invalid request';
  }
  const params = (error.params ?? {}) as Record<string, unknown>;
  const custom = error.parentSchema?.[ERROR_MESSAGE_KEYWORD];
  if (typeof custom === 'string' && error.keyword !== 'required') {
    return custom;
  }
  if (error.keyword === 'required') {
    return `${fieldName(error.instancePath, String(params.missingProperty))} is required`;
  }
  const field = fieldName(error.instancePath);
  if (part === 'params' && error.keyword === 'format') {
    return `invalid ${thingOfParam(field)} ID`;
  }
  if (field === '') {
    // The whole body (or query) is of the wrong shape: say what it must be.
    if (part === 'body' && (error.data === undefined || error.data === null)) {
      return 'request body is required';
    }
    return `${part === 'body' ? 'request body' : part} must be ${describeType(params.type ?? 'object')}`;
  }
  switch (error.keyword) {
    case 'type':
      return `${field} must be ${describeType(params.type)}`;
    case 'minLength':
      return params.limit === 1
        ? `${field} must not be empty`
        : `${field} must be at least ${params.limit} characters`;
    case 'maxLength':
      return `${field} must be at most ${params.limit} characters`;
    case 'minimum':
    case 'exclusiveMinimum':
    case 'maximum':
    case 'exclusiveMaximum':
      return `${field} ${error.message ?? 'is out of range'}`;
    case 'minItems':
      return `${field} must have at least ${params.limit} items`;
    case 'maxItems':
      return `${field} must have at most ${params.limit} items`;
    case 'enum':
      return `${field} must be one of: ${(params.allowedValues as unknown[]).join(', ')}`;
    case 'const':
      return `${field} must be ${JSON.stringify(params.allowedValue)}`;
    case 'format':
      return `${field} must be a valid ${params.format}`;
    case 'pattern':
      return `${field} has an invalid format`;
    case 'additionalProperties':
      return `${fieldName(error.instancePath, String(params.additionalProperty))} is not allowed`;
    default:
      return `${field} is invalid`;
  }
}
