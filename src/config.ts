// The environment contract (CONTRACT.md §1), read and validated once at start.
import { createPrivateKey } from 'node:crypto';
import { isIP } from 'node:net';
import type { OtlpProtocol, TracingSettings } from './telemetry/tracing.js';

export type AppEnv = 'sandbox' | 'production';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
/** Fastify's `trustProxy`: off, on (any hop), a hop count, or the proxies' addresses. */
export type TrustProxy = boolean | number | string[];

export interface Config {
  port: number;
  host: string;
  appEnv: AppEnv;
  databaseUrl: string | undefined;
  /** Directory of the embedded database, or `memory` for none on disk. */
  dataDir: string;
  redisUrl: string | undefined;
  publicBaseUrl: string;
  authJwksUrl: string | undefined;
  authIssuer: string | undefined;
  authAudience: string | undefined;
  trustProxy: TrustProxy;
  logLevel: LogLevel;
  /**
   * AES-256 keys for platform credentials at rest (CREDENTIALS_KEY, comma-separated base64):
   * the first encrypts, every one decrypts, so a key can be rotated in.
   */
  credentialKeys: Buffer[] | undefined;
  /** The steward's Ed25519 key (PKCS#8 PEM); unset in sandbox: generated once, kept in the database. */
  stewardKeyPem: string | undefined;
  stewardDid: string;
  /** Bounds on anonymous sandbox sessions (X-Sandbox-Session), so invented ids cannot grow storage. */
  sandboxSessions: { max: number; idleMs: number };
  /** `inline`: this process runs the job workers too; `off`: it only queues (`npm run worker` runs them). */
  workers: WorkersMode;
  /** Where the live partner adapters find the partners' APIs (CONTRACT.md §10.4). */
  partnerApiUrls: { nextdns: string; controld: string };
  /** How many days each kind of record is kept (CONTRACT.md §12.4), RETENTION_<NAME>_DAYS. */
  retention: RetentionDays;
  /**
   * Bearers GET /metrics accepts (METRICS_TOKEN, comma-separated so a new one can be rolled
   * in beside the old); unset: open in the sandbox, 404 in production.
   */
  metricsTokens: string[] | undefined;
  /** OTLP/HTTP trace export (the standard OTEL_* variables); undefined: tracing off. */
  tracing: TracingSettings | undefined;
  /** Where `npm run worker` serves its probes and metrics (WORKER_PORT, default 8081). */
  workerPort: number;
  /**
   * On SIGTERM, how long /health/ready answers 503 while requests are still served, so load
   * balancers stop sending before the drain refuses (SHUTDOWN_DELAY_SECONDS, default 0).
   */
  shutdownDelayMs: number;
}

/** The retention policy as GET /api/v1/retention answers it. */
export interface RetentionDays {
  viewing_history_days: number;
  device_reports_days: number;
  webhook_deliveries_days: number;
  usage_days: number;
  audit_log_days: number;
  erasure_receipts_days: number;
}

export const RETENTION_DEFAULTS: Readonly<RetentionDays> = {
  viewing_history_days: 90,
  device_reports_days: 30,
  webhook_deliveries_days: 30,
  usage_days: 400,
  audit_log_days: 400,
  erasure_receipts_days: 400,
};

/** A century: longer would put the purge's cutoff before any date the database stores. */
const MAX_RETENTION_DAYS = 36_500;

export type WorkersMode = 'inline' | 'off';

/** A bad variable: the message is the one line the process prints before it stops. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`${variable}: ${reason}`);
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS: readonly LogLevel[] = [
  'fatal',
  'error',
  'warn',
  'info',
  'debug',
  'trace',
  'silent',
];

const DAY_MS = 24 * 60 * 60 * 1000;

type Env = Record<string, string | undefined>;

/** Empty strings count as unset, as a shell `VAR=` usually means "no value". */
function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function parsePort(raw: string | undefined, name = 'PORT', fallback = 8080): number {
  if (raw === undefined) {
    return fallback;
  }
  if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) {
    throw new ConfigError(name, `must be an integer from 0 to 65535, got "${raw}"`);
  }
  return Number(raw);
}

function parseUrl(name: string, raw: string | undefined, protocols: string[]): string | undefined {
  if (raw === undefined) {
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be an absolute URL');
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(
      name,
      `must use ${protocols.map((p) => p.replace(':', '')).join(' or ')}`,
    );
  }
  return raw;
}

function parseTrustProxy(raw: string | undefined): TrustProxy {
  if (raw === undefined) {
    return false;
  }
  const lower = raw.toLowerCase();
  if (['true', 'yes', 'on'].includes(lower)) {
    return true;
  }
  if (['false', 'no', 'off', '0'].includes(lower)) {
    return false;
  }
  if (/^\d+$/.test(raw)) {
    return Number(raw);
  }
  const entries = raw.split(',').map((part) => part.trim());
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address ?? '');
    const maxBits = family === 6 ? 128 : 32;
    const bitsOk = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= maxBits);
    if (family === 0 || !bitsOk || extra !== undefined) {
      throw new ConfigError(
        'TRUST_PROXY',
        'must be true, false, a hop count, or a comma-separated list of proxy IPs/CIDRs',
      );
    }
  }
  return entries;
}

function parseLogLevel(raw: string | undefined): LogLevel {
  if (raw === undefined) {
    return 'info';
  }
  const level = raw.toLowerCase() as LogLevel;
  if (!LOG_LEVELS.includes(level)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  }
  return level;
}

function parsePositiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) {
    return fallback;
  }
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1) {
    throw new ConfigError(name, `must be a positive integer, got "${raw}"`);
  }
  return Number(raw);
}

/** A bounded wait in whole seconds: 0 to an hour. */
function parseNonNegativeInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) {
    return fallback;
  }
  if (!/^\d{1,4}$/.test(raw) || Number(raw) > 3600) {
    throw new ConfigError(name, `must be an integer from 0 to 3600, got "${raw}"`);
  }
  return Number(raw);
}

/** RETENTION_VIEWING_HISTORY_DAYS for viewing_history_days, and so on. */
export function retentionVariable(field: keyof RetentionDays): string {
  return `RETENTION_${field.toUpperCase()}`;
}

function parseRetention(env: Env): RetentionDays {
  const days = { ...RETENTION_DEFAULTS };
  for (const field of Object.keys(days) as Array<keyof RetentionDays>) {
    const name = retentionVariable(field);
    const raw = read(env, name);
    if (raw === undefined) {
      continue;
    }
    if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_RETENTION_DAYS) {
      throw new ConfigError(
        name,
        `must be a positive integer number of days up to ${MAX_RETENTION_DAYS}, got "${raw}"`,
      );
    }
    days[field] = Number(raw);
  }
  return days;
}

function parseCredentialKeys(raw: string | undefined): Buffer[] | undefined {
  if (raw === undefined) {
    return undefined;
  }
  return raw.split(',').map((part) => {
    const text = part.trim();
    const key = Buffer.from(text, 'base64');
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text) || key.length !== 32) {
      throw new ConfigError(
        'CREDENTIALS_KEY',
        'must be base64 of 32 random bytes (comma-separated to rotate keys)',
      );
    }
    return key;
  });
}

/** A shell or .env file often carries a PEM on one line with literal \n. */
function parseStewardKey(raw: string | undefined): string | undefined {
  if (raw === undefined) {
    return undefined;
  }
  const pem = raw.replace(/\\n/g, '\n');
  let type: string | undefined;
  try {
    type = createPrivateKey(pem).asymmetricKeyType;
  } catch {
    type = undefined;
  }
  if (type !== 'ed25519' || !pem.includes('-----BEGIN PRIVATE KEY-----')) {
    throw new ConfigError('OCSS_STEWARD_KEY', 'must be an Ed25519 private key in PKCS#8 PEM');
  }
  return pem;
}

export const DID_PATTERN = /^did:ocss:[a-z0-9._-]{1,64}$/;

function parseDid(name: string, raw: string | undefined, fallback: string): string {
  const did = raw ?? fallback;
  if (!DID_PATTERN.test(did)) {
    throw new ConfigError(name, 'must be did:ocss: followed by 1-64 of a-z 0-9 . _ -');
  }
  return did;
}

function parseWorkers(raw: string | undefined): WorkersMode {
  if (raw === undefined || raw === 'inline' || raw === 'off') {
    return raw ?? 'inline';
  }
  throw new ConfigError('WORKERS', `must be inline or off, got "${raw}"`);
}

function parseAppEnv(raw: string | undefined): AppEnv {
  if (raw === undefined) {
    return 'sandbox';
  }
  if (raw !== 'sandbox' && raw !== 'production') {
    throw new ConfigError('APP_ENV', `must be "sandbox" or "production", got "${raw}"`);
  }
  return raw;
}

/** Shorter would be guessable; the token guards what the process's metrics reveal. */
const MIN_METRICS_TOKEN_LENGTH = 16;

function parseMetricsTokens(raw: string | undefined): string[] | undefined {
  if (raw === undefined) {
    return undefined;
  }
  const tokens = raw.split(',').map((token) => token.trim());
  if (tokens.some((token) => token.length < MIN_METRICS_TOKEN_LENGTH || /\s/.test(token))) {
    throw new ConfigError(
      'METRICS_TOKEN',
      `each token must be at least ${MIN_METRICS_TOKEN_LENGTH} characters, without spaces`,
    );
  }
  return tokens;
}

const OTLP_PROTOCOLS: readonly OtlpProtocol[] = ['http/protobuf', 'http/json'];

/**
 * The OpenTelemetry SDK's own variables, as its specification reads them: the traces
 * endpoint is used as given, the general one gets `/v1/traces` appended; the protocol
 * defaults to http/protobuf. gRPC is not carried (no gRPC stack in the process).
 */
function parseTracing(env: Env): TracingSettings | undefined {
  if (read(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') {
    return undefined;
  }
  if (read(env, 'OTEL_TRACES_EXPORTER')?.toLowerCase() === 'none') {
    return undefined;
  }
  const traces = read(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const general = read(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const url =
    parseUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', traces, ['http:', 'https:']) ??
    parseUrl('OTEL_EXPORTER_OTLP_ENDPOINT', general, ['http:', 'https:'])?.replace(
      /\/*$/,
      '/v1/traces',
    );
  if (url === undefined) {
    return undefined;
  }
  const protocolName = read(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL')
    ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
    : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = read(env, protocolName) ?? 'http/protobuf';
  if (!OTLP_PROTOCOLS.includes(protocol as OtlpProtocol)) {
    throw new ConfigError(
      protocolName,
      `must be http/protobuf or http/json (gRPC is not supported), got "${protocol}"`,
    );
  }
  const delay = read(env, 'OTEL_BSP_SCHEDULE_DELAY');
  if (delay !== undefined && !/^\d{1,7}$/.test(delay)) {
    throw new ConfigError('OTEL_BSP_SCHEDULE_DELAY', `must be milliseconds, got "${delay}"`);
  }
  return {
    url,
    protocol: protocol as OtlpProtocol,
    serviceName: read(env, 'OTEL_SERVICE_NAME') ?? 'haven',
    ...(delay === undefined ? {} : { exportDelayMs: Number(delay) }),
  };
}

/** Reads the whole contract; throws ConfigError on the first bad variable. */
export function loadConfig(env: Env = process.env): Config {
  const port = parsePort(read(env, 'PORT'));
  const host = read(env, 'HOST') ?? '127.0.0.1';
  const appEnv = parseAppEnv(read(env, 'APP_ENV'));
  const databaseUrl = parseUrl('DATABASE_URL', read(env, 'DATABASE_URL'), [
    'postgres:',
    'postgresql:',
  ]);
  const redisUrl = parseUrl('REDIS_URL', read(env, 'REDIS_URL'), ['redis:', 'rediss:']);
  const publicBaseUrl = (
    parseUrl('PUBLIC_BASE_URL', read(env, 'PUBLIC_BASE_URL'), ['http:', 'https:']) ??
    `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  ).replace(/\/+$/, '');
  const authJwksUrl = parseUrl('AUTH_JWKS_URL', read(env, 'AUTH_JWKS_URL'), ['http:', 'https:']);
  const authIssuer = read(env, 'AUTH_ISSUER');
  const authAudience = read(env, 'AUTH_AUDIENCE');

  if (appEnv === 'production' && authJwksUrl === undefined) {
    throw new ConfigError('AUTH_JWKS_URL', 'is required when APP_ENV=production');
  }
  if (authJwksUrl !== undefined && authIssuer === undefined) {
    throw new ConfigError('AUTH_ISSUER', 'is required when AUTH_JWKS_URL is set');
  }
  const stewardKeyPem = parseStewardKey(read(env, 'OCSS_STEWARD_KEY'));
  if (appEnv === 'production' && stewardKeyPem === undefined) {
    throw new ConfigError('OCSS_STEWARD_KEY', 'is required when APP_ENV=production');
  }
  // Every instance takes webhook deliveries and enforcement jobs off the shared queues, and
  // both need this key (to sign, to open a partner's credentials): an instance without it
  // would take work it cannot do. docs/decisions.md "Production refuses to start without
  // the secrets its work needs".
  const credentialKeys = parseCredentialKeys(read(env, 'CREDENTIALS_KEY'));
  if (appEnv === 'production' && credentialKeys === undefined) {
    throw new ConfigError('CREDENTIALS_KEY', 'is required when APP_ENV=production');
  }

  return {
    port,
    host,
    appEnv,
    databaseUrl,
    dataDir: read(env, 'DATA_DIR') ?? './.data',
    redisUrl,
    publicBaseUrl,
    authJwksUrl,
    authIssuer,
    authAudience,
    trustProxy: parseTrustProxy(read(env, 'TRUST_PROXY')),
    logLevel: parseLogLevel(read(env, 'LOG_LEVEL')),
    stewardKeyPem,
    stewardDid: parseDid(
      'OCSS_STEWARD_DID',
      read(env, 'OCSS_STEWARD_DID'),
      'did:ocss:haven-steward',
    ),
    credentialKeys,
    sandboxSessions: {
      max: parsePositiveInt('SANDBOX_MAX_SESSIONS', read(env, 'SANDBOX_MAX_SESSIONS'), 10_000),
      idleMs:
        parsePositiveInt('SANDBOX_SESSION_IDLE_DAYS', read(env, 'SANDBOX_SESSION_IDLE_DAYS'), 30) *
        DAY_MS,
    },
    workers: parseWorkers(read(env, 'WORKERS')),
    partnerApiUrls: {
      nextdns:
        parseUrl('NEXTDNS_API_URL', read(env, 'NEXTDNS_API_URL'), ['http:', 'https:']) ??
        'https://api.nextdns.io',
      controld:
        parseUrl('CONTROLD_API_URL', read(env, 'CONTROLD_API_URL'), ['http:', 'https:']) ??
        'https://api.controld.com',
    },
    retention: parseRetention(env),
    metricsTokens: parseMetricsTokens(read(env, 'METRICS_TOKEN')),
    tracing: parseTracing(env),
    workerPort: parsePort(read(env, 'WORKER_PORT'), 'WORKER_PORT', 8081),
    shutdownDelayMs:
      parseNonNegativeInt('SHUTDOWN_DELAY_SECONDS', read(env, 'SHUTDOWN_DELAY_SECONDS'), 0) * 1000,
  };
}
