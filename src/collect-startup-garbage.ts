// One full garbage collection between building the app and taking the first request.
//
// Why: every object that starts as `{}` starts from one shared map, and V8 remembers the map
// each first key leads to as a transition of that map, up to 1 536 of them. Building the app
// compiles a serializer per route and status, and each compile keys a throwaway `{}` by a
// schema id of its own (fast-json-stringify's `__fjs_root_N`, ~840 of them; Ajv's compiles
// add more), which fills that list. From then on, until a full collection clears the dead
// entries, an object built from `{}` whose first key is not already there (the header object
// Node builds for each request, a reply's headers, a row) gets a map of its own: each
// property goes through the runtime's slow path, and every inline cache that sees such
// objects turns megamorphic. Under a light load a full collection may not come for hours;
// on the bench the trust list's 304 spent ~4 µs a request in that path (perf).
// docs/decisions.md "The empty object's transitions".
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's full collection, whether or not node was started with --expose-gc. */
function fullCollection(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) {
    return exposed;
  }
  // The flag only decides whether a new context gets a `gc` global: this one context gets
  // it, and the flag is put back at once, so nothing else in the process sees `gc`.
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as () => void;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

export function collectStartupGarbage(): void {
  fullCollection()();
}
