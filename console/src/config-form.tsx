// A rule's config as a form, drawn from its category's JSON Schema (GET /rules/categories):
// numbers and integers as number fields (their range shown), booleans as checkboxes, enums as
// selects, sets of enum values as a group of checkboxes, lists of strings as a list editor,
// lists of objects as repeated groups, nested objects as fieldsets. The API stays the judge of
// what is valid: the form does not block a value the schema refuses, it shows the API's 400.
import type { ComponentChildren } from 'preact';

export type JsonSchema = {
  type?: string;
  title?: string;
  description?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
};

type Json = unknown;

/** Words of property names that are read as letters (rating systems, `app_id`, `block_iap`). */
const ACRONYMS = new Set(['csm', 'esrb', 'mpaa', 'pegi', 'tvpg', 'iap', 'id', 'dns', 'vpn']);

/** `daily_minutes` → `Daily minutes`, `esrb` → `ESRB`; a schema's own title wins. */
export function labelFor(name: string, schema?: JsonSchema): string {
  if (schema?.title) {
    return schema.title;
  }
  const words = name
    .split('_')
    .filter(Boolean)
    .map((word) => (ACRONYMS.has(word) ? word.toUpperCase() : word))
    .join(' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** An enum value as people read it: `lock_device` → `lock device` (ratings stay as they are). */
export function valueLabel(value: unknown): string {
  return String(value).replace(/_/g, ' ');
}

/** What a new item of a list starts as. */
export function initialValue(schema: JsonSchema): Json {
  switch (schema.type) {
    case 'boolean':
      return false;
    case 'integer':
    case 'number':
      return schema.minimum ?? 0;
    case 'string':
      return schema.enum?.[0] ?? '';
    case 'array':
      return [];
    case 'object':
      return Object.fromEntries(
        Object.entries(schema.properties ?? {})
          .filter(([name]) => (schema.required ?? []).includes(name))
          .map(([name, property]) => [name, initialValue(property)]),
      );
    default:
      return null;
  }
}

/**
 * The config to send: an optional property left empty is left out (the schema's `required`
 * says which may be); everything else goes as entered, for the API to check.
 */
export function cleanConfig(schema: JsonSchema, value: Json): Json {
  if (schema.type === 'object' && value && typeof value === 'object' && !Array.isArray(value)) {
    const required = schema.required ?? [];
    const out: Record<string, Json> = {};
    for (const [name, item] of Object.entries(value as Record<string, Json>)) {
      const property = schema.properties?.[name];
      if (!required.includes(name) && (item === undefined || item === '')) {
        continue;
      }
      out[name] = property ? cleanConfig(property, item) : item;
    }
    return out;
  }
  if (schema.type === 'array' && Array.isArray(value) && schema.items) {
    const items = schema.items;
    return value.map((item) => cleanConfig(items, item));
  }
  return value;
}

const CLOCK_EXAMPLE = '07:00';

/** A hint under a field: its range, its format or its length. */
function hintFor(schema: JsonSchema): string | null {
  if (schema.type === 'integer' || schema.type === 'number') {
    if (schema.minimum !== undefined && schema.maximum !== undefined) {
      return `${schema.minimum} to ${schema.maximum}`;
    }
    return null;
  }
  if (schema.type === 'string' && !schema.enum) {
    if (schema.pattern && new RegExp(schema.pattern).test(CLOCK_EXAMPLE)) {
      return 'HH:MM, 24-hour clock';
    }
    if (schema.pattern?.includes('[A-Z]{3}')) {
      return 'three capital letters, e.g. EUR';
    }
  }
  return null;
}

interface FieldProps {
  /** Unique within the page: the field's control id, and the prefix of its children's. */
  id: string;
  label: string;
  schema: JsonSchema;
  value: Json;
  onChange: (value: Json) => void;
}

function Hinted(props: { id: string; hint: string | null; children: ComponentChildren }) {
  return (
    <>
      {props.children}
      {props.hint && (
        <span class="field-hint" id={`${props.id}-hint`}>
          {props.hint}
        </span>
      )}
    </>
  );
}

/** One field for one schema: picks the control by the schema's type. */
export function SchemaField(props: FieldProps) {
  const { id, label, schema, value, onChange } = props;
  const hint = hintFor(schema);
  const described = hint ? `${id}-hint` : undefined;
  switch (schema.type) {
    case 'boolean':
      return (
        <div class="field field-check">
          <input
            type="checkbox"
            id={id}
            checked={value === true}
            onChange={(event) => onChange((event.target as HTMLInputElement).checked)}
          />
          <label for={id}>{label}</label>
        </div>
      );
    case 'integer':
    case 'number':
      return (
        <div class="field">
          <label for={id}>{label}</label>
          <Hinted id={id} hint={hint}>
            <input
              type="number"
              id={id}
              inputMode={schema.type === 'integer' ? 'numeric' : 'decimal'}
              min={schema.minimum}
              max={schema.maximum}
              step={schema.type === 'integer' ? 1 : 'any'}
              value={value === undefined || value === null ? '' : String(value)}
              aria-describedby={described}
              onInput={(event) => {
                const raw = (event.target as HTMLInputElement).value;
                const number = raw.trim() === '' ? Number.NaN : Number(raw);
                onChange(Number.isFinite(number) ? number : raw);
              }}
            />
          </Hinted>
        </div>
      );
    case 'string':
      if (schema.enum) {
        return (
          <div class="field">
            <label for={id}>{label}</label>
            <select
              id={id}
              value={String(value ?? '')}
              onChange={(event) => onChange((event.target as HTMLSelectElement).value)}
            >
              {schema.enum.map((option) => (
                <option key={String(option)} value={String(option)}>
                  {valueLabel(option)}
                </option>
              ))}
            </select>
          </div>
        );
      }
      return (
        <div class="field">
          <label for={id}>{label}</label>
          <Hinted id={id} hint={hint}>
            <input
              type="text"
              id={id}
              value={typeof value === 'string' ? value : value == null ? '' : String(value)}
              maxLength={schema.maxLength}
              aria-describedby={described}
              onInput={(event) => onChange((event.target as HTMLInputElement).value)}
            />
          </Hinted>
        </div>
      );
    case 'array':
      if (schema.items?.enum) {
        return <EnumSetField {...props} />;
      }
      if (schema.items?.type === 'object') {
        return <ObjectListField {...props} />;
      }
      return <ListField {...props} />;
    case 'object':
      return (
        <fieldset class="field-group">
          <legend>{label}</legend>
          <ObjectFields id={id} schema={schema} value={value} onChange={onChange} />
        </fieldset>
      );
    default:
      return <JsonField {...props} />;
  }
}

/** The properties of an object, each a field; the caller draws the group around them. */
export function ObjectFields(props: {
  id: string;
  schema: JsonSchema;
  value: Json;
  onChange: (value: Json) => void;
}) {
  const current =
    props.value && typeof props.value === 'object' && !Array.isArray(props.value)
      ? (props.value as Record<string, Json>)
      : {};
  const required = props.schema.required ?? [];
  return (
    <>
      {Object.entries(props.schema.properties ?? {}).map(([name, property]) => {
        const label = labelFor(name, property);
        return (
          <SchemaField
            key={name}
            id={`${props.id}-${name}`}
            label={required.includes(name) ? label : `${label} (optional)`}
            schema={property}
            value={current[name]}
            onChange={(next) => props.onChange({ ...current, [name]: next })}
          />
        );
      })}
    </>
  );
}

function asList(value: Json): Json[] {
  return Array.isArray(value) ? value : [];
}

/** A subset of fixed values: one checkbox each, in the schema's order. */
function EnumSetField(props: FieldProps) {
  const chosen = asList(props.value);
  const options = props.schema.items?.enum ?? [];
  return (
    <fieldset class="field-group">
      <legend>{props.label}</legend>
      <div class="field-choices">
        {options.map((option, i) => {
          const optionId = `${props.id}-${i}`;
          return (
            <span class="choice" key={String(option)}>
              <input
                type="checkbox"
                id={optionId}
                checked={chosen.includes(option)}
                onChange={(event) => {
                  const on = (event.target as HTMLInputElement).checked;
                  props.onChange(
                    options.filter((candidate) =>
                      candidate === option ? on : chosen.includes(candidate),
                    ),
                  );
                }}
              />
              <label for={optionId}>{valueLabel(option)}</label>
            </span>
          );
        })}
      </div>
    </fieldset>
  );
}

/** A list of strings (or numbers): each item editable and removable, a new one added below. */
function ListField(props: FieldProps) {
  const items = asList(props.value);
  const itemSchema = props.schema.items ?? { type: 'string' };
  const full = props.schema.maxItems !== undefined && items.length >= props.schema.maxItems;
  const newId = `${props.id}-new`;
  const add = () => {
    const input = document.getElementById(newId) as HTMLInputElement | null;
    const text = input?.value.trim() ?? '';
    if (!input || text === '') {
      return;
    }
    const number = Number(text);
    const item =
      itemSchema.type === 'integer' || itemSchema.type === 'number'
        ? Number.isFinite(number)
          ? number
          : text
        : text;
    props.onChange([...items, item]);
    input.value = '';
    input.focus();
  };
  return (
    <fieldset class="field-group">
      <legend>{props.label}</legend>
      {items.length === 0 ? (
        <p class="muted field-empty">None yet.</p>
      ) : (
        <ul class="list-editor">
          {items.map((item, i) => {
            const itemId = `${props.id}-${i}`;
            const itemName = `${props.label} ${i + 1}`;
            return (
              <li key={i}>
                <input
                  type="text"
                  id={itemId}
                  aria-label={itemName}
                  value={String(item ?? '')}
                  onInput={(event) => {
                    const next = [...items];
                    next[i] = (event.target as HTMLInputElement).value;
                    props.onChange(next);
                  }}
                />
                <button
                  type="button"
                  aria-label={`Remove ${itemName}`}
                  onClick={() => props.onChange(items.filter((_, j) => j !== i))}
                >
                  Remove
                </button>
              </li>
            );
          })}
        </ul>
      )}
      <div class="inline">
        <input
          type="text"
          id={newId}
          aria-label={`New item for ${props.label}`}
          disabled={full}
          onKeyDown={(event) => {
            if (event.key === 'Enter') {
              event.preventDefault();
              add();
            }
          }}
        />
        <button type="button" aria-label={`Add to ${props.label}`} disabled={full} onClick={add}>
          Add
        </button>
      </div>
    </fieldset>
  );
}

/** A list of objects: one group per item, each removable; a new item starts from its schema. */
function ObjectListField(props: FieldProps) {
  const items = asList(props.value);
  const itemSchema = props.schema.items ?? { type: 'object' };
  const full = props.schema.maxItems !== undefined && items.length >= props.schema.maxItems;
  return (
    <fieldset class="field-group">
      <legend>{props.label}</legend>
      {items.length === 0 && <p class="muted field-empty">None yet.</p>}
      {items.map((item, i) => {
        const itemName = `${props.label} ${i + 1}`;
        return (
          <fieldset class="field-group field-item" key={i}>
            <legend>{itemName}</legend>
            <ObjectFields
              id={`${props.id}-${i}`}
              schema={itemSchema}
              value={item}
              onChange={(next) => {
                const list = [...items];
                list[i] = next;
                props.onChange(list);
              }}
            />
            <button
              type="button"
              aria-label={`Remove ${itemName}`}
              onClick={() => props.onChange(items.filter((_, j) => j !== i))}
            >
              Remove
            </button>
          </fieldset>
        );
      })}
      <button
        type="button"
        disabled={full}
        onClick={() => props.onChange([...items, initialValue(itemSchema)])}
      >
        Add to {props.label}
      </button>
    </fieldset>
  );
}

/** A schema the form has no control for: its JSON, edited as text. */
function JsonField(props: FieldProps) {
  return (
    <div class="field">
      <label for={props.id}>{props.label} (JSON)</label>
      <textarea
        id={props.id}
        rows={3}
        value={JSON.stringify(props.value ?? null)}
        onChange={(event) => {
          const text = (event.target as HTMLTextAreaElement).value;
          try {
            props.onChange(JSON.parse(text));
          } catch {
            props.onChange(text);
          }
        }}
      />
    </div>
  );
}

/** A config in a line or a few, for the rules table: `Daily minutes: 120`. */
export function summarise(config: Record<string, unknown>, schema?: JsonSchema): string[] {
  return Object.entries(config).map(
    ([name, value]) =>
      `${labelFor(name, schema?.properties?.[name])}: ${summariseValue(value, schema?.properties?.[name])}`,
  );
}

const SHOWN_ITEMS = 4;

/** A label inside a line: `weekday`, `ESRB`. */
function inlineLabel(name: string, schema?: JsonSchema): string {
  const label = labelFor(name, schema);
  return ACRONYMS.has(name.split('_')[0] ?? '') || schema?.title
    ? label
    : label.charAt(0).toLowerCase() + label.slice(1);
}

function summariseValue(value: unknown, schema?: JsonSchema): string {
  if (typeof value === 'boolean') {
    return value ? 'yes' : 'no';
  }
  if (Array.isArray(value)) {
    if (value.length === 0) {
      return 'none';
    }
    const shown = value.slice(0, SHOWN_ITEMS).map((item) => summariseValue(item, schema?.items));
    const more = value.length > SHOWN_ITEMS ? `, +${value.length - SHOWN_ITEMS} more` : '';
    return `${shown.join(value.some((item) => typeof item === 'object') ? '; ' : ', ')}${more}`;
  }
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    // {start, end} reads as a range.
    const record = value as Record<string, unknown>;
    if (entries.length === 2 && 'start' in record && 'end' in record) {
      return `${String(record.start)}–${String(record.end)}`;
    }
    return entries
      .map(
        ([name, item]) =>
          `${inlineLabel(name, schema?.properties?.[name])} ${summariseValue(item, schema?.properties?.[name])}`,
      )
      .join(', ');
  }
  if (value === null || value === undefined) {
    return '—';
  }
  return schema?.enum ? valueLabel(value) : String(value);
}
