// Reading the RFC 9421 `Signature-Input` and `Signature` fields (RFC 8941 dictionaries) into
// the one signature Haven accepts. Everything wrong with them is `signature_invalid`: the
// contract files "missing" and "unparsable" signatures there, and a second signature is just
// another way for the signature fields not to be what a signed OCSS request carries.
import {
  type BareItem,
  type Dictionary,
  type InnerList,
  type Item,
  parseDictionary,
  serializeInnerList,
} from 'structured-headers';
import { ED25519_SIGNATURE_BYTES } from './ed25519-key.js';
import { OcssError } from './ocss-error.js';

/** The derived components (RFC 9421 §2.2) Haven can rebuild for a request. */
export const DERIVED_COMPONENTS = [
  '@method',
  '@target-uri',
  '@authority',
  '@scheme',
  '@request-target',
  '@path',
  '@query',
] as const;

/** The metadata of RFC 9421 §2.3 that Haven reads, each checked for its registered type. */
export interface SignatureParameters {
  created?: number;
  expires?: number;
  keyid?: string;
  alg?: string;
  nonce?: string;
  tag?: string;
}

export interface ReceivedSignature {
  label: string;
  /** Covered component names in signed order (lowercase; no component parameters). */
  components: string[];
  parameters: SignatureParameters;
  /**
   * The `@signature-params` value: the received inner list serialized by the RFC 8941 rules
   * (RFC 9421 §3.2 step 5), so insignificant whitespace in the received field cannot change
   * it; a signer that signed a non-canonical spelling fails verification.
   */
  signatureParams: string;
  signature: Buffer;
}

/** HTTP field names are tokens; RFC 9421 §2.1 has them lowercased in component identifiers. */
const FIELD_NAME = /^[a-z0-9!#$%&'*+.^_`|~-]+$/;
const INTEGER_PARAMETERS = ['created', 'expires'] as const;
const STRING_PARAMETERS = ['keyid', 'alg', 'nonce', 'tag'] as const;
/** Bounds on what a signer may make Haven remember or look up. */
const MAX_STRING_PARAMETER_LENGTH = 1024;

export function parseReceivedSignature(
  signatureInput: string | undefined,
  signature: string | undefined,
): ReceivedSignature {
  if (signatureInput === undefined || signature === undefined) {
    throw OcssError.signatureInvalid('Signature-Input and Signature are required');
  }
  const inputs = parseSignatureField(signatureInput, 'Signature-Input');
  const signatures = parseSignatureField(signature, 'Signature');
  if (inputs.size !== 1 || signatures.size !== 1) {
    throw OcssError.signatureInvalid('exactly one signature is accepted');
  }
  const [[label, input]] = [...inputs] as [[string, Item | InnerList]];
  const signed = signatures.get(label);
  if (signed === undefined) {
    throw OcssError.signatureInvalid(`Signature has no member ${label} to match Signature-Input`);
  }
  if (!isInnerList(input)) {
    throw OcssError.signatureInvalid('the Signature-Input member is not an inner list');
  }
  return {
    label,
    components: coveredComponents(input[0]),
    parameters: signatureParameters(input[1]),
    signatureParams: serializeSignatureParams(input),
    signature: signatureBytes(signed),
  };
}

function parseSignatureField(value: string, fieldName: string): Dictionary {
  try {
    return parseDictionary(value);
  } catch {
    throw OcssError.signatureInvalid(`${fieldName} is not a structured dictionary`);
  }
}

function isInnerList(member: Item | InnerList): member is InnerList {
  return Array.isArray(member[0]);
}

function coveredComponents(items: Item[]): string[] {
  const names: string[] = [];
  for (const [name, parameters] of items) {
    if (typeof name !== 'string') {
      throw OcssError.signatureInvalid('a covered component identifier is not a string');
    }
    if (parameters.size > 0) {
      // RFC 9421 §3.2: a verifier that does not understand a component parameter must fail.
      throw OcssError.signatureInvalid(`component parameters are not supported (on "${name}")`);
    }
    if (name.startsWith('@')) {
      if (!(DERIVED_COMPONENTS as readonly string[]).includes(name)) {
        throw OcssError.signatureInvalid(`derived component ${name} is not supported`);
      }
    } else if (!FIELD_NAME.test(name)) {
      throw OcssError.signatureInvalid(`"${name}" is not a lowercase HTTP field name`);
    }
    if (names.includes(name)) {
      throw OcssError.signatureInvalid(`component "${name}" is covered twice`);
    }
    names.push(name);
  }
  return names;
}

function signatureParameters(parameters: Map<string, BareItem>): SignatureParameters {
  const result: SignatureParameters = {};
  for (const name of INTEGER_PARAMETERS) {
    const value = parameters.get(name);
    if (value === undefined) {
      continue;
    }
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
      throw OcssError.signatureInvalid(`signature parameter ${name} must be an integer`);
    }
    result[name] = value;
  }
  for (const name of STRING_PARAMETERS) {
    const value = parameters.get(name);
    if (value === undefined) {
      continue;
    }
    if (typeof value !== 'string') {
      throw OcssError.signatureInvalid(`signature parameter ${name} must be a string`);
    }
    if (value.length > MAX_STRING_PARAMETER_LENGTH) {
      throw OcssError.signatureInvalid(`signature parameter ${name} is too long`);
    }
    result[name] = value;
  }
  return result;
}

function serializeSignatureParams(input: InnerList): string {
  try {
    return serializeInnerList(input);
  } catch {
    throw OcssError.signatureInvalid('Signature-Input cannot be serialized again');
  }
}

function signatureBytes(member: Item | InnerList): Buffer {
  const [value] = member;
  if (!(value instanceof ArrayBuffer)) {
    throw OcssError.signatureInvalid('the Signature member is not a byte sequence');
  }
  if (value.byteLength !== ED25519_SIGNATURE_BYTES) {
    throw OcssError.signatureInvalid('an Ed25519 signature is 64 bytes');
  }
  return Buffer.from(value);
}
