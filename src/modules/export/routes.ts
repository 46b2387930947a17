// CONTRACT.md §12.2: GET /families/{familyID}/export and GET /children/{childID}/export.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePrincipal } from '../../auth/principal.js';
import type { ProductSurface } from '../../auth/product-surface.js';
import { ChildParams } from '../children/routes.js';
import { FamilyParams } from '../families/schemas.js';
import { sendDownload } from './download.js';
import { ChildExport, FamilyExport, STREAMED } from './schemas.js';
import type { ExportService } from './service.js';

/** The 200 as documented: a JSON download (the schema describes it; nothing serializes it). */
function download(schema: typeof FamilyExport | typeof ChildExport, filename: string) {
  return {
    description: `The export, as a download (${filename})`,
    headers: {
      'content-disposition': Type.String({ description: `attachment; filename="${filename}"` }),
    },
    content: { 'application/json': { schema } },
  };
}

export function exportRoutes(exports: ExportService): FastifyPluginAsyncTypebox<ProductSurface> {
  return async (app, surface) => {
    // Owners and parents only (guardians read but do not take the family's data away); a
    // key needs read:families, whichever of the two documents it asks for.
    const config = { auth: surface.auth, scope: 'read:families' as const, errors: [401, 403, 404] };
    const route = (operationId: string, tag: string, summary: string) => ({
      operationId: surface.operationId(operationId),
      summary,
      description: `Owner or parent (a key: read:families). No secret is exported: no credential, key, token or signing secret, nor a hash of one; their prefixes only. ${STREAMED}`,
      tags: [tag],
      security: surface.security,
    });

    app.get(
      '/families/:familyID/export',
      {
        config,
        schema: {
          ...route(
            'exportFamily',
            'Families',
            'Everything Haven holds about the family, as one JSON download',
          ),
          params: FamilyParams,
          response: { 200: download(FamilyExport, 'haven-family-<id>.json') },
        },
      },
      async (request, reply) => {
        const { familyID } = request.params;
        const document = await exports.familyExport(requirePrincipal(request), familyID);
        return sendDownload(reply, `haven-family-${familyID}.json`, document);
      },
    );

    app.get(
      '/children/:childID/export',
      {
        config,
        schema: {
          ...route(
            'exportChild',
            'Children',
            'Everything Haven holds about one child, as one JSON download',
          ),
          params: ChildParams,
          response: { 200: download(ChildExport, 'haven-child-<id>.json') },
        },
      },
      async (request, reply) => {
        const { childID } = request.params;
        const document = await exports.childExport(requirePrincipal(request), childID);
        return sendDownload(reply, `haven-child-${childID}.json`, document);
      },
    );
  };
}
