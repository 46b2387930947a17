// Rule writes are checked against the closed registry: an unregistered category is refused,
// and a config must satisfy its category's JSON Schema (CONTRACT.md §7).
import { Ajv, type ValidateFunction } from 'ajv';
import type { FastifySchemaValidationError } from 'fastify';
import { BadRequestError } from '../../http/errors.js';
import { validationMessage } from '../../http/validation-message.js';
import { findRuleCategory } from '../rules/registry.js';
import type { RuleWrite } from './store.js';

const ajv = new Ajv({ strict: false, allErrors: false });
const compiled = new Map<string, ValidateFunction>();

function validatorFor(category: string): ValidateFunction {
  let validate = compiled.get(category);
  if (!validate) {
    const entry = findRuleCategory(category);
    if (!entry) {
      throw new BadRequestError(`unknown rule_category: ${category}`);
    }
    validate = ajv.compile(entry.config_schema);
    compiled.set(category, validate);
  }
  return validate;
}

/** `at` is where the rule sits in the request body, e.g. `/rules/3` (empty for one rule). */
export function checkRule(
  rule: RuleWrite,
  at = '',
  options: { categoryOnly?: boolean } = {},
): RuleWrite {
  if (!findRuleCategory(rule.category)) {
    throw new BadRequestError(`unknown rule_category: ${rule.category}`);
  }
  if (options.categoryOnly) {
    return rule;
  }
  const validate = validatorFor(rule.category);
  if (!validate(rule.config)) {
    const errors = (validate.errors ?? []).map((error) => ({
      ...error,
      instancePath: `${at}/config${error.instancePath}`,
    })) as unknown as FastifySchemaValidationError[];
    throw new BadRequestError(validationMessage(errors, 'body'));
  }
  return rule;
}
