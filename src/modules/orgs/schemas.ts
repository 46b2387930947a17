// Request and response shapes of developer orgs and members (spec: DeveloperOrg,
// DeveloperOrgMember; CONTRACT.md §3).
import { type Static, Type } from 'typebox';
import { DateTime, Name, Uuid } from '../../http/common-schemas.js';

export const OrgRoleSchema = Type.Enum(['owner', 'admin', 'member']);

export const DeveloperOrg = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    slug: Type.String({ description: 'the name plus a short random suffix' }),
    description: Type.String({ description: 'empty string when unset' }),
    website_url: Type.String(),
    logo_url: Type.String({ description: 'empty until set' }),
    owner_user_id: Uuid(),
    tier: Type.String({ description: '`free` until an accreditation review grants more' }),
    rate_limit_rpm: Type.Integer({ description: 'requests per minute shared by the org keys' }),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { $id: 'DeveloperOrg' },
);

export const CreateOrgBody = Type.Object({
  name: Name('display name'),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  website_url: Type.Optional(Type.String({ maxLength: 2048 })),
});
export type CreateOrgBody = Static<typeof CreateOrgBody>;

export const OrgParams = Type.Object({ orgId: Uuid() });
export const OrgMemberParams = Type.Object({ orgId: Uuid(), userId: Uuid() });

export const DeveloperOrgMember = Type.Object(
  {
    id: Uuid(),
    org_id: Uuid(),
    user_id: Uuid(),
    role: OrgRoleSchema,
    created_at: DateTime(),
  },
  { $id: 'DeveloperOrgMember' },
);

export const AddMemberBody = Type.Object({
  user_id: Uuid('the internal user id (GET /api/v1/auth/me)'),
  role: OrgRoleSchema,
});
