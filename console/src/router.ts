// Where the console is: one view per URL fragment (`#/families/<id>`), so a reload reopens
// the same view and the browser's back and forward move between views. A hash, not a path:
// the API serves the console at /console alone, and a fragment never reaches the server.
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { view: 'developers' }
  | { view: 'families' }
  | { view: 'family'; familyId: string }
  | { view: 'policy'; familyId: string; childId: string }
  | { view: 'audit-log' };

const SEGMENT = /^[0-9a-zA-Z-]{1,64}$/;

/** The route a fragment names; anything unknown is the developers' view. */
export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  const [first, second, third, fourth] = parts;
  if (first === 'families' && parts.length === 1) {
    return { view: 'families' };
  }
  if (first === 'families' && second && SEGMENT.test(second)) {
    if (parts.length === 2) {
      return { view: 'family', familyId: second };
    }
    if (third === 'children' && fourth && SEGMENT.test(fourth) && parts[4] === 'policy') {
      return { view: 'policy', familyId: second, childId: fourth };
    }
  }
  if (first === 'audit-log' && parts.length === 1) {
    return { view: 'audit-log' };
  }
  return { view: 'developers' };
}

/** The fragment of a route, for links. */
export function href(route: Route): string {
  switch (route.view) {
    case 'developers':
      return '#/developers';
    case 'families':
      return '#/families';
    case 'family':
      return `#/families/${route.familyId}`;
    case 'policy':
      return `#/families/${route.familyId}/children/${route.childId}/policy`;
    case 'audit-log':
      return '#/audit-log';
  }
}

/** The current route, following the fragment as links, back and forward change it. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const follow = () => {
      setRoute(parseRoute(location.hash));
      // A new view starts at its top, as a new page would.
      window.scrollTo(0, 0);
    };
    window.addEventListener('hashchange', follow);
    return () => window.removeEventListener('hashchange', follow);
  }, []);
  return route;
}
