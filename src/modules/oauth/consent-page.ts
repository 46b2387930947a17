// The consent page of GET /oauth/authorize without `decision` (CONTRACT.md §6). One
// self-contained document: no script, no external asset, one inline style allowed by its
// hash. Approve and Deny are links to this same URL with every parameter kept and
// `decision` set, so the page needs no form (and no form-action exception for the client's
// origin, which the browser would otherwise check on the redirect that follows).
import { createHash } from 'node:crypto';
import type { ChildProfile, SandboxAccount } from './profiles.js';

const STYLE = [
  'body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;',
  'color:#1b1b1b;line-height:1.5}',
  'h1{font-size:1.4rem}',
  '.note{color:#555;font-size:.9rem}',
  '.actions{display:flex;gap:1rem;margin-top:2rem}',
  '.button{display:inline-block;padding:.6rem 1.4rem;border-radius:.4rem;',
  'text-decoration:none;font-weight:600;border:1px solid #1d4ed8}',
  '.approve{background:#1d4ed8;color:#fff}',
  '.deny{background:#fff;color:#1d4ed8}',
].join('');

const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/**
 * Nothing loads, nothing runs, nothing frames the page, nothing posts: only the one style.
 * Static, so no request data ever reaches a header.
 */
export const CONSENT_PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${STYLE_HASH}'`,
  "form-action 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Safe in text and in quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] ?? char);
}

export interface ConsentPageInput {
  /** Every query parameter of the request, in order, repeated ones included. */
  params: URLSearchParams;
  account: SandboxAccount;
  profiles: ChildProfile[];
  redirectUri: URL;
  clientId: string | undefined;
}

/** `?…&decision=<decision>`: this same URL with the decision set and the rest kept. */
function decisionHref(params: URLSearchParams, decision: 'approve' | 'deny'): string {
  const next = new URLSearchParams();
  for (const [name, value] of params) {
    if (name !== 'decision') {
      next.append(name, value);
    }
  }
  next.append('decision', decision);
  return `?${next.toString()}`;
}

function sharedProfiles(profiles: ChildProfile[]): string {
  if (profiles.length === 0) {
    return '<p>This account has no child profiles: nothing will be shared.</p>';
  }
  const items = profiles.map((profile) => `<li>${escapeHtml(profile.displayName)}</li>`);
  return `<p>It will see these child profiles:</p>\n<ul>${items.join('')}</ul>`;
}

export function renderConsentPage(input: ConsentPageInput): string {
  const client = input.clientId ? `“${escapeHtml(input.clientId)}”` : 'An application';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Sandbox provider: allow access?</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>Sandbox provider: allow access?</h1>
<p>${client} asks to read the child profiles of the sandbox account
<strong>${escapeHtml(input.account)}</strong>.</p>
${sharedProfiles(input.profiles)}
<p class="note">You will be sent back to ${escapeHtml(input.redirectUri.origin)}.
This is the sandbox reference provider: no real account is involved.</p>
<div class="actions">
<a class="button approve" href="${escapeHtml(decisionHref(input.params, 'approve'))}">Approve</a>
<a class="button deny" href="${escapeHtml(decisionHref(input.params, 'deny'))}">Deny</a>
</div>
</main>
</body>
</html>
`;
}
