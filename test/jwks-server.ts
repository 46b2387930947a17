// A real identity provider key set served over HTTP on a local port, for session tests.
import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

export interface SigningKey {
  kid: string;
  privateKey: PrivateKey;
  jwk: JWK;
}

export async function newSigningKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  return {
    kid,
    privateKey,
    jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' },
  };
}

export class JwksServer {
  readonly keys: JWK[] = [];
  requests = 0;
  private server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((_request, response) => {
      this.requests++;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ keys: this.keys }));
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as { port: number };
    this.url = `http://127.0.0.1:${port}/jwks.json`;
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

export function signSession(
  key: SigningKey,
  claims: {
    iss: string;
    sub: string;
    aud?: string;
    iat: number;
    exp: number;
    nbf?: number;
    email?: string;
  },
): Promise<string> {
  const { iss, sub, aud, iat, exp, nbf, ...rest } = claims;
  let jwt = new SignJWT(rest)
    .setProtectedHeader({ alg: 'RS256', kid: key.kid })
    .setIssuer(iss)
    .setSubject(sub)
    .setIssuedAt(iat)
    .setExpirationTime(exp);
  if (aud) {
    jwt = jwt.setAudience(aud);
  }
  if (nbf !== undefined) {
    jwt = jwt.setNotBefore(nbf);
  }
  return jwt.sign(key.privateKey);
}
