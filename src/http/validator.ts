// Request validation. Bodies are checked exactly as sent (no coercion: `{"name": 5}` is a 400,
// never the string "5"); path, query and headers are text on the wire, so they are coerced.
import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { ERROR_MESSAGE_KEYWORD } from './validation-message.js';

// ajv-formats is CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type FormatCheck = (value: string) => boolean;

/**
 * RFC 3339 admits instants neither side can hold: a leap second (`23:59:60`), which
 * JavaScript's Date cannot parse, and year 0000, which PostgreSQL does not have. A date-time
 * field takes what both can store, so such a value is a 400, never a failed insert.
 */
function restrictDateTime(ajv: Ajv): void {
  const rfc3339 = ajv.formats['date-time'] as FormatCheck | { validate: FormatCheck };
  const isRfc3339 = typeof rfc3339 === 'function' ? rfc3339 : rfc3339.validate;
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (value: string) => {
      if (!isRfc3339(value)) {
        return false;
      }
      const at = Date.parse(value);
      const year = new Date(at).getUTCFullYear();
      return Number.isFinite(at) && year >= 1 && year <= 9999;
    },
  });
}

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({
    allErrors: false,
    verbose: true,
    useDefaults: true,
    removeAdditional: true,
    strict: false,
    ...options,
  });
  addFormats(ajv);
  restrictDateTime(ajv);
  ajv.addKeyword({ keyword: ERROR_MESSAGE_KEYWORD, schemaType: 'string' });
  return ajv;
}

export function installValidators(app: FastifyInstance): void {
  const bodies = makeAjv({ coerceTypes: false });
  const text = makeAjv({ coerceTypes: 'array' });
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? bodies : text).compile(schema),
  );
}
