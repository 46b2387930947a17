// Shapes of families (spec: Family).
import { Type } from 'typebox';
import { DateTime, Name, Uuid } from '../../http/common-schemas.js';

const TestClockId = Type.Union([Uuid(), Type.Null()], {
  description:
    'sandbox: the test clock the family lives by (ages, birthdays, created_at of its rows); null: the real clock',
});

export const Family = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    test_clock_id: TestClockId,
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { $id: 'Family' },
);

export const CreateFamilyBody = Type.Object({
  name: Name(),
  test_clock_id: Type.Optional(TestClockId),
});

export const UpdateFamilyBody = Type.Object({
  name: Type.Optional(Name()),
  test_clock_id: Type.Optional(TestClockId),
});

export const FamilyParams = Type.Object({ familyID: Uuid() });
export const FamilyMemberParams = Type.Object({ familyID: Uuid(), memberID: Uuid() });

export const FamilyRoleSchema = Type.Enum(['owner', 'parent', 'guardian'], {
  description: 'owners and parents write; guardians read',
});

export const FamilyMember = Type.Object(
  {
    id: Uuid(),
    family_id: Uuid(),
    user_id: Uuid(),
    role: FamilyRoleSchema,
    joined_at: DateTime(),
  },
  { $id: 'FamilyMember' },
);

export const AddFamilyMemberBody = Type.Object({ user_id: Uuid(), role: FamilyRoleSchema });
export const ChangeFamilyMemberBody = Type.Object({ role: FamilyRoleSchema });
