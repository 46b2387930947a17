// The export documents (CONTRACT.md §12.2): every list in the shape the API's own GET answers.
// The reply is streamed, never passed through a serializer: these schemas document it.
import { type TSchema, Type } from 'typebox';
import { DateTime } from '../../http/common-schemas.js';
import { AgeSignal } from '../age/signals-routes.js';
import { AuditEntrySchema } from '../audit/schemas.js';
import { Child } from '../children/routes.js';
import { Connection } from '../connections/routes.js';
import { Device } from '../devices/schemas.js';
import { EnforcementJob } from '../enforcement/schemas.js';
import { Family, FamilyMember } from '../families/schemas.js';
import { McpToken } from '../mcp-tokens/schemas.js';
import { Policy, Rule } from '../policies/routes.js';
import { ViewingEntry } from '../viewing-history/routes.js';
import { Webhook, WebhookDelivery } from '../webhooks/schemas.js';

const list = (item: TSchema, description: string) => Type.Array(item, { description });

const ChildWithSignals = Type.Object({
  ...Child.properties,
  age_signals: list(AgeSignal, 'every age signal recorded for the child, oldest observation first'),
});

const PolicyWithRules = Type.Object({
  ...Policy.properties,
  rules: list(Rule, 'its rules, by category'),
});

const DeviceReport = Type.Object({
  id: Type.String({ format: 'uuid' }),
  device_id: Type.String({ format: 'uuid' }),
  child_id: Type.String({ format: 'uuid' }),
  report_type: Type.String(),
  payload: Type.Unsafe<Record<string, unknown>>({
    type: 'object',
    additionalProperties: true,
    description: 'as the device sent it',
  }),
  reported_at: DateTime('when the device observed it'),
  received_at: DateTime(),
});

/** What a family export and a child export both hold. */
const childParts = {
  exported_at: DateTime("when the export began, on the family's clock"),
  family: Family,
  children: list(ChildWithSignals, 'as GET /children/{childID} answers, with `age_signals`'),
  policies: list(PolicyWithRules, 'the policies of those children, with `rules`'),
  devices: list(Device, 'their devices: the key’s prefix, never the key or its hash'),
  device_reports: list(DeviceReport, 'what those devices reported (kept for the retention period)'),
  enforcement_jobs: list(EnforcementJob, 'oldest first'),
  viewing_history: list(ViewingEntry, 'each child’s, oldest first'),
};

export const FamilyExport = Type.Object(
  {
    exported_at: childParts.exported_at,
    family: childParts.family,
    members: list(FamilyMember, 'the people of the family and their roles'),
    children: childParts.children,
    policies: childParts.policies,
    connections: list(
      Connection,
      'whether credentials are held (`has_credentials`), never the credentials',
    ),
    devices: childParts.devices,
    device_reports: childParts.device_reports,
    enforcement_jobs: childParts.enforcement_jobs,
    viewing_history: childParts.viewing_history,
    webhooks: list(Webhook, 'without their signing secrets'),
    deliveries: list(WebhookDelivery, 'the delivery attempts of those webhooks'),
    mcp_tokens: list(McpToken, 'the MCP tokens bound to the family: prefixes only'),
    audit_log: list(AuditEntrySchema, "the family's audit chain, oldest first (seq 1 up)"),
  },
  {
    $id: 'FamilyExport',
    description:
      'Everything Haven holds about the family. No secret: no credential, key, token, signing secret or hash of one, only their prefixes.',
  },
);

export const ChildExport = Type.Object(
  {
    ...childParts,
    children: list(ChildWithSignals, 'the one child, with `age_signals`'),
    audit_log: list(
      AuditEntrySchema,
      "the entries of the family's chain about the child: whose target is the child or one of its policies, devices, age signals or enforcement jobs; oldest first",
    ),
  },
  {
    $id: 'ChildExport',
    description:
      'What Haven holds about one child: the family, the child, its signals, policies, devices, jobs, viewing history and its audit entries. No secret.',
  },
);

/** How a streamed document is told apart from the house envelope, and what it tells. */
export const STREAMED =
  'Streamed as it is read: memory does not grow with the family. A failure after the answer began cannot become an error status; the connection is then closed before the end (the body is cut short and is not valid JSON; a chunked response lacks its last chunk), so a client must treat an incomplete document as a failed export.';
