// CONTRACT.md §8 device rows, the product side: POST/GET /children/{childID}/devices,
// DELETE /devices/{deviceID} (read/write:devices).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePrincipal } from '../../auth/principal.js';
import type { ProductSurface } from '../../auth/product-surface.js';
import {
  ChildParams,
  CreateDeviceBody,
  Device,
  DeviceParams,
  RegisteredDevice,
} from './schemas.js';
import type { DevicesService } from './service.js';

const TAGS = ['Devices'];

export function deviceRoutes(devices: DevicesService): FastifyPluginAsyncTypebox<ProductSurface> {
  return async (app, surface) => {
    const read = { auth: surface.auth, scope: 'read:devices' as const, errors: [401, 403, 404] };
    const write = { ...read, scope: 'write:devices' as const };
    const route = (operationId: string, summary: string) => ({
      operationId: surface.operationId(operationId),
      summary,
      tags: TAGS,
      security: surface.security,
    });

    app.post(
      '/children/:childID/devices',
      {
        config: write,
        schema: {
          ...route('registerDevice', 'Register a device of a child; its key is shown once'),
          params: ChildParams,
          body: CreateDeviceBody,
          response: { 201: RegisteredDevice },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(
            await devices.registerDevice(
              requirePrincipal(request),
              request.params.childID,
              request.body,
            ),
          ),
    );

    app.get(
      '/children/:childID/devices',
      {
        config: read,
        schema: {
          ...route('listDevices', 'The child’s devices, newest first (revoked ones included)'),
          params: ChildParams,
          response: { 200: Type.Array(Device) },
        },
      },
      async (request) => devices.listDevices(requirePrincipal(request), request.params.childID),
    );

    app.delete(
      '/devices/:deviceID',
      {
        config: write,
        schema: {
          ...route('revokeDevice', 'Revoke a device: its key stops working at once'),
          params: DeviceParams,
          response: { 204: Type.Null() },
        },
      },
      async (request, reply) => {
        await devices.revokeDevice(requirePrincipal(request), request.params.deviceID);
        return reply.code(204).send(null);
      },
    );
  };
}
