import { describe, expect, it } from 'vitest';
import { canonicalJson, type JsonValue } from './canonical-json.js';
import { OcssError } from './ocss-error.js';

function doubleFromHex(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

describe('RFC 8785 Appendix B: number serialization', () => {
  const rows: [string, string][] = [
    ['0000000000000000', '0'],
    ['8000000000000000', '0'], // minus zero
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ];
  it.each(rows)('%s → %s', (hex, expected) => {
    expect(canonicalJson(doubleFromHex(hex))).toBe(expected);
  });

  it.each([
    ['7fffffffffffffff', 'NaN'],
    ['7ff0000000000000', 'Infinity'],
  ])('%s (%s) is refused', (hex) => {
    expect(() => canonicalJson(doubleFromHex(hex))).toThrow(OcssError);
  });
});

describe('RFC 8785 §3.2.2 and §3.2.3 samples', () => {
  it('§3.2.2: primitives are written canonically and members sorted', () => {
    const input = JSON.parse(String.raw`{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }`) as JsonValue;
    expect(canonicalJson(input)).toBe(
      String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
    );
  });

  it('§3.2.3: member names sort by UTF-16 code units', () => {
    const input = JSON.parse(String.raw`{
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis"
    }`) as JsonValue;
    // \r, 1, U+0080, ö, €, U+1F600 (as surrogates D83D DE00), U+FB33: code-unit order.
    expect(canonicalJson(input)).toBe(
      `{"\\r":"Carriage Return","1":"One","\u0080":"Control",` +
        `"\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",` +
        `"\u{1f600}":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}`,
    );
  });
});

function sparseArray(): unknown[] {
  const array = [1];
  array[2] = 3;
  return array;
}

describe('values JSON cannot hold', () => {
  const refused: [string, unknown][] = [
    ['undefined', undefined],
    ['an undefined member', { a: 1, b: undefined }],
    ['an undefined array item', [1, undefined]],
    ['a sparse array', sparseArray()],
    ['NaN inside', { a: [Number.NaN] }],
    ['-Infinity', Number.NEGATIVE_INFINITY],
    ['a bigint', 1n],
    ['a function', { f: () => 1 }],
    ['a symbol', Symbol('s')],
    ['a Date', new Date(0)],
    ['a Map', new Map([['a', 1]])],
    ['a lone surrogate', '\ud800'],
    ['a lone surrogate in a name', { '\udfff': 1 }],
  ];
  it.each(refused)('refuses %s with an OcssError', (_name, value) => {
    expect(() => canonicalJson(value as JsonValue)).toThrow(OcssError);
  });

  it('refuses a cycle but accepts the same object twice', () => {
    const shared = { v: 1 };
    expect(canonicalJson({ b: shared, a: shared })).toBe('{"a":{"v":1},"b":{"v":1}}');
    const cyclic: { self?: unknown } = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic as JsonValue)).toThrow(/circular/);
  });

  it('accepts objects without a prototype', () => {
    const bare = Object.assign(Object.create(null) as Record<string, JsonValue>, { b: 1, a: 2 });
    expect(canonicalJson(bare)).toBe('{"a":2,"b":1}');
  });
});
