// The shared API-key security contract, applied to the family routes served to keys.
import { describeKeyAuthContract } from '../../../test/key-auth-contract.js';

describeKeyAuthContract({
  name: 'GET /api/v1/developer/families',
  scope: 'read:families',
  okStatus: 200,
  request: () => ({ method: 'GET', url: '/api/v1/developer/families' }),
});

describeKeyAuthContract({
  name: 'POST /api/v1/developer/families',
  scope: 'write:families',
  okStatus: 201,
  request: () => ({
    method: 'POST',
    url: '/api/v1/developer/families',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ name: 'Rivera Family' }),
  }),
});
