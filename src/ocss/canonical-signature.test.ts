// The canonical reading of Signature-Input and Signature (signature-input.ts) against the
// general RFC 8941 parser it stands in for: whatever it reads, it reads as the parser and
// serializer do (members, parameters, the `@signature-params` text, the signature's bytes);
// whatever is not the canonical form it leaves to the parser. Checked on generated fields
// and on every one-character change of them.
import { randomBytes } from 'node:crypto';
import {
  type BareItem,
  type InnerList,
  type Item,
  parseDictionary,
  serializeInnerList,
} from 'structured-headers';
import { describe, expect, it } from 'vitest';
import { parseReceivedSignature, readCanonicalSignature } from './signature-input.js';

/** A deterministic generator: the same fields every run, failures reproducible. */
function generator(seed: number) {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  return { next, pick };
}

const COMPONENT_NAMES = [
  '@method',
  '@target-uri',
  '@authority',
  '@path',
  'content-digest',
  'ocss-spec-version',
  'content-type',
  'x-custom_header.1',
];
const STRING_VALUES = [
  'did:ocss:reader#k1',
  '',
  'ed25519',
  'n-1',
  "a;b=c (d) 'e' ~!",
  'x'.repeat(40),
];
const INTEGER_VALUES = [0, 1, 1_700_000_000, -42, 999_999_999_999_999];

function generatedFields(seed: number): { input: string; signature: string } {
  const { next, pick } = generator(seed);
  const label = pick(['sig1', 'sig', 'a*b.c_d-e', '*x']);
  const names = COMPONENT_NAMES.filter(() => next() < 0.5);
  const parameters = ['created', 'expires', 'keyid', 'alg', 'nonce', 'tag', 'other']
    .filter(() => next() < 0.6)
    .map((name) =>
      next() < 0.5 ? `;${name}=${pick(INTEGER_VALUES)}` : `;${name}="${pick(STRING_VALUES)}"`,
    )
    .join('');
  return {
    input: `${label}=(${names.map((name) => `"${name}"`).join(' ')})${parameters}`,
    signature: `${label}=:${randomBytes(64).toString('base64')}:`,
  };
}

/** What the general parser and serializer make of the two fields, or undefined if not one signature. */
function generalReading(input: string, signature: string) {
  try {
    const inputs = parseDictionary(input);
    const signatures = parseDictionary(signature);
    const [[label, member]] = [...inputs] as [[string, Item | InnerList]];
    const signed = signatures.get(label);
    if (inputs.size !== 1 || signatures.size !== 1 || !signed || !Array.isArray(member[0])) {
      return undefined;
    }
    const list = member as InnerList;
    return {
      label,
      names: list[0].map(([name, parameters]) => ({ name, parameters: parameters.size })),
      parameters: new Map<string, BareItem>(list[1]),
      signatureParams: serializeInnerList(list),
      signature: Buffer.from(signed[0] as ArrayBuffer),
    };
  } catch {
    return undefined;
  }
}

function expectSameReading(input: string, signature: string): boolean {
  const canonical = readCanonicalSignature(input, signature);
  if (canonical === undefined) {
    return false;
  }
  expect(generalReading(input, signature), `${input}\n${signature}`).toEqual({
    label: canonical.label,
    names: canonical.items.map(([name, parameters]) => ({ name, parameters: parameters.size })),
    parameters: canonical.parameters,
    signatureParams: canonical.signatureParams,
    signature: canonical.signature,
  });
  // The canonical form is the one the serializer writes: the text is its own serialization.
  expect(canonical.signatureParams).toBe(input.slice(input.indexOf('=') + 1));
  return true;
}

describe('the canonical reading of the signature fields', () => {
  it('reads generated canonical fields exactly as the general parser does', () => {
    for (let seed = 1; seed <= 400; seed++) {
      const { input, signature } = generatedFields(seed);
      expect(expectSameReading(input, signature), `${input}\n${signature}`).toBe(true);
    }
  });

  it('reads a one-character change as the parser does, or leaves it to the parser', () => {
    const alphabet = ' "();=:,-*.a0A9+/\\?@';
    let read = 0;
    let left = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const { input, signature } = generatedFields(seed);
      for (const [field, text] of [
        ['input', input],
        ['signature', signature],
      ] as const) {
        for (let at = 0; at <= text.length; at++) {
          for (const change of [...alphabet, '']) {
            const changed = `${text.slice(0, at)}${change}${text.slice(at + (change ? 0 : 1))}`;
            const [i, s] = field === 'input' ? [changed, signature] : [input, changed];
            if (expectSameReading(i, s)) {
              read++;
            } else {
              left++;
            }
          }
        }
      }
    }
    // Both branches ran: changes that stay canonical and changes that do not.
    expect(read).toBeGreaterThan(100);
    expect(left).toBeGreaterThan(1000);
  });

  it('leaves every non-canonical spelling to the general parser', () => {
    const signature = `sig1=:${Buffer.alloc(64, 7).toString('base64')}:`;
    const nonCanonical = [
      'sig1=("@method");created=01',
      'sig1=("@method");created=-0',
      'sig1=("@method"); created=1',
      'sig1=( "@method")',
      'sig1=("@method"  "@path")',
      'sig1=("@method");keyid="a\\"b"',
      'sig1=("@method");keyid=token',
      'sig1=("@method");flag',
      'sig1=("@method");flag=?1',
      'sig1=("@method");ratio=1.5',
      'sig1=("@method");created=1;created=2',
      'sig1=("@method";req)',
      'sig1=("Content-Type")',
      'sig1=("@method"), sig2=("@path")',
      'sig1="@method"',
      'sig1=("@method");created=1234567890123456',
    ];
    for (const input of nonCanonical) {
      expect(readCanonicalSignature(input, signature), input).toBeUndefined();
    }
    const input = 'sig1=("@method");created=1';
    const bytes = Buffer.alloc(64, 7).toString('base64');
    for (const odd of [
      `sig1=:${bytes.slice(0, -2)}:`,
      `sig1=:${bytes.slice(0, 85)}B==:`,
      `sig2=:${bytes}:`,
      `sig1=:${bytes}:;alg="x"`,
      `sig1=:${bytes}:, sig2=:${bytes}:`,
      `sig1=:${Buffer.alloc(32).toString('base64')}:`,
    ]) {
      expect(readCanonicalSignature(input, odd), odd).toBeUndefined();
    }
  });

  it('gives parseReceivedSignature the same signature either way', () => {
    const input =
      'sig1=("@method" "@target-uri" "content-digest");created=1700000000;keyid="k";alg="ed25519";nonce="n"';
    const signature = `sig1=:${Buffer.alloc(64, 9).toString('base64')}:`;
    // The same fields with insignificant whitespace are read by the general parser.
    const spaced = input.replace('" "', '"  "');
    expect(readCanonicalSignature(input, signature)).toBeDefined();
    expect(readCanonicalSignature(spaced, signature)).toBeUndefined();
    expect(parseReceivedSignature(input, signature)).toEqual(
      parseReceivedSignature(spaced, signature),
    );
  });
});
