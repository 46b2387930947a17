// A statement's parameters again with fresh ids: how the embedded quick setup's floor
// (embedded-write-server.mjs) writes a new setup per request from one recorded statement, as
// each of Haven's calls makes its own ids. Plain JavaScript: the floor runs under bare node.

/**
 * A function giving `parameters` with each of `freshIds` (wherever it appears in a string
 * parameter, the rules' JSON included) replaced by a new `randomUUID`, one per id per call,
 * and the new id of each.
 */
export function freshIdWriter(parameters, freshIds) {
  const pattern = new RegExp(freshIds.join('|'), 'g');
  return () => {
    const newIds = new Map(freshIds.map((id) => [id, crypto.randomUUID()]));
    return {
      parameters: parameters.map((value) =>
        typeof value === 'string' ? value.replace(pattern, (id) => newIds.get(id)) : value,
      ),
      newIds,
    };
  };
}
