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
  const canonical = readCanonicalSignature(signatureInput, signature);
  if (canonical) {
    return {
      label: canonical.label,
      components: coveredComponents(canonical.items),
      parameters: signatureParameters(canonical.parameters),
      signatureParams: canonical.signatureParams,
      signature: canonical.signature,
    };
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

// What nearly every signer sends is the fields' canonical serialization (RFC 8941 §4.1):
// one member each, component names and string parameters without escapes, integers without
// leading zeros, a padded 64-byte signature. The general parser and serializer cost ~22 µs
// a request on the bench VM, a sixth of a signed read's main thread (docs/performance.md);
// these expressions recognise that form only and read it as the parser would, serialized
// inner list included (it is the text itself). Anything else, however valid, goes to the
// general parser.
const KEY = '[a-z*][a-z0-9_.*-]*';
const COMPONENT = '"[a-z0-9@!#$%&\'*+.^_`|~-]+"';
const INTEGER_VALUE = '0|-?[1-9][0-9]{0,14}';
const STRING_VALUE = '"[\\x20\\x21\\x23-\\x5b\\x5d-\\x7e]*"';
const CANONICAL_INPUT = new RegExp(
  `^(${KEY})=(\\((?:${COMPONENT}(?: ${COMPONENT})*)?\\)((?:;${KEY}=(?:${INTEGER_VALUE}|${STRING_VALUE}))*))$`,
);
const CANONICAL_PARAMETER = new RegExp(`;(${KEY})=(${INTEGER_VALUE}|${STRING_VALUE})`, 'g');
/** 86 base64 characters carry 516 bits: the last one must leave the 4 spare bits zero. */
const CANONICAL_SIGNATURE = /^([a-z*][a-z0-9_.*-]*)=:([A-Za-z0-9+/]{85}[AQgw]==):$/;
const NO_PARAMETERS: Map<string, BareItem> = new Map();

interface CanonicalSignature {
  label: string;
  items: Item[];
  parameters: Map<string, BareItem>;
  signatureParams: string;
  signature: Buffer;
}

/** The two fields read in their canonical form, or undefined: the general parser reads them. */
export function readCanonicalSignature(
  signatureInput: string,
  signature: string,
): CanonicalSignature | undefined {
  const input = CANONICAL_INPUT.exec(signatureInput);
  const signed = input && CANONICAL_SIGNATURE.exec(signature);
  if (!input || !signed || signed[1] !== input[1]) {
    return undefined;
  }
  const innerList = input[2] as string;
  const listEnd = innerList.indexOf(')');
  const names = listEnd === 1 ? [] : innerList.slice(2, listEnd - 1).split('" "');
  const parameters = new Map<string, BareItem>();
  const parameterText = input[3] as string;
  // exec from lastIndex, not matchAll: matchAll clones the expression on every call (a new
  // RegExp and an iterator a request). Always reset first: a return from inside the loop
  // leaves lastIndex where it stopped.
  CANONICAL_PARAMETER.lastIndex = 0;
  for (
    let match = CANONICAL_PARAMETER.exec(parameterText);
    match !== null;
    match = CANONICAL_PARAMETER.exec(parameterText)
  ) {
    const name = match[1] as string;
    if (parameters.has(name)) {
      // A repeated parameter serializes once: not the canonical form.
      return undefined;
    }
    const text = match[2] as string;
    parameters.set(name, text.startsWith('"') ? text.slice(1, -1) : Number(text));
  }
  return {
    label: input[1] as string,
    items: names.map((name): Item => [name, NO_PARAMETERS]),
    parameters,
    signatureParams: innerList,
    signature: Buffer.from(signed[2] as string, 'base64'),
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
