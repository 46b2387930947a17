// Shapes of families (spec: Family).
import { Type } from 'typebox';
import { DateTime, Name, Uuid } from '../../http/common-schemas.js';

export const Family = Type.Object(
  { id: Uuid(), name: Type.String(), created_at: DateTime(), updated_at: DateTime() },
  { $id: 'Family' },
);

export const CreateFamilyBody = Type.Object({ name: Name() });
