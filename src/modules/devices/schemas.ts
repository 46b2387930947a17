// Shapes of devices and of what their agents send and read (CONTRACT.md §8 device rows).
import { Type } from 'typebox';
import { DateTime, Name, NullableDateTime, Uuid } from '../../http/common-schemas.js';
import { REPORT_TYPES } from './agent-service.js';

const JsonObject = (description: string) =>
  Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, description });

const OptionalText = (description: string) =>
  Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()], { description }));

export const Device = Type.Object(
  {
    id: Uuid(),
    child_id: Uuid(),
    family_id: Uuid(),
    device_name: Type.String(),
    platform_id: Type.Union([Type.String(), Type.Null()]),
    device_model: Type.Union([Type.String(), Type.Null()]),
    os_version: Type.Union([Type.String(), Type.Null()]),
    app_version: Type.Union([Type.String(), Type.Null()]),
    status: Type.Enum(['active', 'revoked']),
    key_prefix: Type.String({ description: '`svcdev_` and the first 8 characters of the key' }),
    last_seen_at: NullableDateTime('may lag a few seconds'),
    acknowledged_version: Type.Union([Type.Integer(), Type.Null()], {
      description: 'the policy version the device last said it enforces',
    }),
    enforcement_status: Type.Union(
      [JsonObject('the payload of its latest enforcement_status report'), Type.Null()],
      { description: 'null until the device sends an enforcement_status report' },
    ),
    created_at: DateTime(),
    updated_at: DateTime(),
    revoked_at: NullableDateTime(),
  },
  { $id: 'Device' },
);

export const RegisteredDevice = Type.Object(
  {
    device: Device,
    device_key: Type.String({
      description: '`svcdev_…`: shown only here; send it as `X-Device-Key`',
    }),
  },
  { $id: 'RegisteredDevice' },
);

export const CreateDeviceBody = Type.Object({
  device_name: Name('1-255 characters after trimming'),
  platform_id: OptionalText('e.g. a catalog platform id'),
  device_model: OptionalText('e.g. "Pixel 8"'),
  os_version: OptionalText('e.g. "Android 15"'),
  app_version: OptionalText('the agent’s own version'),
});

export const ChildParams = Type.Object({ childID: Uuid() });
export const DeviceParams = Type.Object({ deviceID: Uuid() });

export const CompiledPolicy = Type.Object(
  {
    child_id: Uuid(),
    policy_id: Uuid(),
    version: Type.Integer({ description: 'the active policy’s version' }),
    generated_at: DateTime(),
    rules: Type.Array(
      Type.Object({ category: Type.String(), config: JsonObject('the rule’s configuration') }),
      { description: 'enabled rules only; engagement categories are never included' },
    ),
    monitoring_notice: Type.Object(
      {
        required: Type.Boolean({
          description:
            'true when an enabled rule watches the child: show the child it is monitored',
        }),
        categories: Type.Array(Type.String(), {
          description: 'the categories of those rules, sorted; empty when `required` is false',
        }),
      },
      { description: 'CONTRACT.md §11.5: whether the agent must tell the child it is monitored' },
    ),
  },
  { $id: 'CompiledPolicy' },
);

export const PolicyQuery = Type.Object({
  since_version: Type.Optional(
    Type.Integer({ minimum: 0, description: 'the version the device holds: 304 while current' }),
  ),
});

const RfcDateTime = (description: string) =>
  Type.String({ format: 'date-time', maxLength: 64, description });

/** A `viewing` report names what was watched: one viewing-history entry. */
const ViewingPayload = Type.Object({
  platform: Type.String({ minLength: 1, maxLength: 255 }),
  title: Type.String({ minLength: 1, maxLength: 1000 }),
  series_title: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
  watched_at: RfcDateTime('RFC 3339'),
});

export const ReportBody = Type.Object(
  {
    report_type: Type.Enum([...REPORT_TYPES]),
    payload: JsonObject(
      'free-form per type; `viewing`: {platform, title, series_title?, watched_at}; ' +
        '`enforcement_status` becomes the device’s enforcement_status',
    ),
    reported_at: RfcDateTime('RFC 3339: when the device observed it'),
  },
  {
    if: { required: ['report_type'], properties: { report_type: { const: 'viewing' } } },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, not a thenable
    then: { properties: { payload: ViewingPayload } },
  },
);

export const ReportAccepted = Type.Object({ status: Type.Literal('accepted') });

export const AckBody = Type.Object({
  // The bound of the column (PostgreSQL integer): more is a 400, never a failed write.
  version: Type.Integer({
    minimum: 1,
    maximum: 2_147_483_647,
    description: 'the policy version now enforced',
  }),
});

export const AckResult = Type.Object({ acknowledged_version: Type.Integer() });
