// Spec: "Families and children" (children); CONTRACT.md §7 (children rows).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { keyedRead } from '../../auth/keyed-read-fast-path.js';
import { requirePrincipal } from '../../auth/principal.js';
import type { ProductSurface } from '../../auth/product-surface.js';
import { DateTime, Name, Uuid } from '../../http/common-schemas.js';
import { ERASURE_ID_HEADER, erasedResponse } from '../erasure/schemas.js';
import type { ErasureService } from '../erasure/service.js';
import { FamilyParams } from '../families/schemas.js';
import { AgeRatings, ageRatings } from '../ratings/routes.js';
import type { ChildrenService } from './service.js';

const TAGS = ['Children'];

export const Child = Type.Object(
  {
    id: Uuid(),
    family_id: Uuid(),
    name: Type.String(),
    birth_date: DateTime('the birth date at midnight UTC'),
    avatar_url: Type.Union([Type.String(), Type.Null()], { description: 'profile image' }),
    age: Type.Integer({ description: "whole years since the birth date on the family's clock" }),
    age_group: Type.Enum(['toddler', 'child', 'preteen', 'teen', 'young_adult'], {
      description: 'the band of `effective_age`: the one the age rules are derived for',
    }),
    effective_age: Type.Integer({
      description:
        'the age Haven protects for: the smallest of `age` and the upper bound of every counting age signal',
    }),
    age_conflict: Type.Boolean({
      description: 'the birth-date age lies outside the range of a counting age signal',
    }),
    next_age_change_on: Type.String({
      format: 'date',
      description:
        'YYYY-MM-DD (UTC): the next birthday, when `age` changes (a 29 February birthday counts on 1 March in other years)',
    }),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { $id: 'Child' },
);

const BirthDate = Type.String({ maxLength: 32, description: 'YYYY-MM-DD' });
const AvatarUrl = Type.Union([Type.String({ maxLength: 2048 }), Type.Null()]);

const CreateChildBody = Type.Object({
  name: Name(),
  birth_date: BirthDate,
  avatar_url: Type.Optional(AvatarUrl),
});

const UpdateChildBody = Type.Object({
  name: Type.Optional(Name()),
  birth_date: Type.Optional(BirthDate),
  avatar_url: Type.Optional(AvatarUrl),
});

export const ChildParams = Type.Object({ childID: Uuid() });

export function childRoutes(
  children: ChildrenService,
  erasure: Pick<ErasureService, 'eraseChild'>,
): FastifyPluginAsyncTypebox<ProductSurface> {
  return async (app, surface) => {
    const read = { auth: surface.auth, scope: 'read:children' as const, errors: [401, 403, 404] };
    const write = { ...read, scope: 'write:children' as const, errors: [401, 403, 404, 422] };
    const route = (operationId: string, summary: string) => ({
      operationId: surface.operationId(operationId),
      summary,
      tags: TAGS,
      security: surface.security,
    });

    app.post(
      '/families/:familyID/children',
      {
        config: write,
        schema: {
          ...route('createChild', 'Add a child to a family (owner or parent)'),
          params: FamilyParams,
          body: CreateChildBody,
          response: { 201: Child },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(
            await children.createChild(
              requirePrincipal(request),
              request.params.familyID,
              request.body,
            ),
          ),
    );

    const listChildren = keyedRead((principal, params) =>
      children.listChildren(principal, params.familyID as string),
    );
    app.get(
      '/families/:familyID/children',
      {
        config: { ...read, keyedRead: listChildren },
        schema: {
          ...route('listChildren', 'The children of a family, newest first'),
          params: FamilyParams,
          response: { 200: Type.Array(Child) },
        },
      },
      async (request) => listChildren(requirePrincipal(request), request.params),
    );

    const getChild = keyedRead((principal, params) =>
      children.getChild(principal, params.childID as string),
    );
    app.get(
      '/children/:childID',
      {
        config: { ...read, keyedRead: getChild },
        schema: {
          ...route('getChild', 'One child'),
          params: ChildParams,
          response: { 200: Child },
        },
      },
      async (request) => getChild(requirePrincipal(request), request.params),
    );

    app.patch(
      '/children/:childID',
      {
        config: write,
        schema: {
          ...route('updateChild', 'Change a child’s name, birth date or avatar (owner or parent)'),
          params: ChildParams,
          body: UpdateChildBody,
          response: { 200: Child },
        },
      },
      async (request) =>
        children.updateChild(requirePrincipal(request), request.params.childID, request.body),
    );

    app.delete(
      '/children/:childID',
      {
        config: write,
        schema: {
          ...route(
            'deleteChild',
            'Erase a child with everything Haven holds about it (owner or parent)',
          ),
          description:
            "In one transaction: the child, its age signals, policies, rules, devices and keys, reports, viewing history, enforcement jobs, the family's webhook messages about it and the record of what Haven applied on the family's partner profiles, which a job holding the credentials sealed (7 days at most) releases first. The family's audit log keeps its entries (they hold no personal value) and records `child.erased`; `child.deleted` carries the ids only. The receipt: GET /erasures/{Haven-Erasure-Id}.",
          params: ChildParams,
          response: { 204: erasedResponse('child') },
        },
      },
      async (request, reply) => {
        const id = await erasure.eraseChild(requirePrincipal(request), request.params.childID);
        return reply.code(204).header(ERASURE_ID_HEADER, id).send(null);
      },
    );

    app.get(
      '/children/:childID/age-ratings',
      {
        config: { ...read, scope: 'read:ratings' },
        schema: {
          ...route('getChildAgeRatings', 'The child’s age, band and maximum ratings today'),
          params: ChildParams,
          response: { 200: AgeRatings },
        },
      },
      async (request) => {
        const child = await children.getChild(requirePrincipal(request), request.params.childID);
        return ageRatings(Math.max(0, child.age));
      },
    );
  };
}
