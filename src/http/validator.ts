// Request validation. Bodies are checked exactly as sent (no coercion: `{"name": 5}` is a 400,
// never the string "5"); path, query and headers are text on the wire, so they are coerced.
import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { ERROR_MESSAGE_KEYWORD } from './validation-message.js';

// ajv-formats is CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

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
