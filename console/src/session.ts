// The signed-in session: the token lives in sessionStorage (gone with the tab), and the
// client every screen uses is made from it. A 401 from any screen signs the user out with
// a message instead of leaving a broken page.
import { Haven, HavenError } from '@haven/sdk';

const TOKEN_KEY = 'haven.console.token';
const baseUrl = window.location.origin;

export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function storeToken(token: string | null): void {
  if (token === null) {
    sessionStorage.removeItem(TOKEN_KEY);
  } else {
    sessionStorage.setItem(TOKEN_KEY, token);
  }
}

export function clientFor(token: string): Haven {
  return new Haven({ baseUrl, sessionToken: token, maxRetries: 1 });
}

export const anonymousClient = (): Haven => new Haven({ baseUrl, maxRetries: 1 });

/** What to show for a failed call: the API's own message. */
export function messageOf(error: unknown): string {
  if (error instanceof HavenError) {
    return error.status === 0 ? `Haven could not be reached: ${error.message}` : error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

export function isSignedOut(error: unknown): boolean {
  return error instanceof HavenError && error.status === 401;
}

export { baseUrl };
