import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CREDENTIALS_KEY, STEWARD_KEY_PEM } from '../test/production.js';
import { ConfigError, loadConfig } from './config.js';

function failure(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected the configuration to be refused');
}

describe('configuration (CONTRACT.md §1)', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({})).toEqual({
      port: 8080,
      host: '127.0.0.1',
      appEnv: 'sandbox',
      databaseUrl: undefined,
      dataDir: './.data',
      redisUrl: undefined,
      publicBaseUrl: 'http://127.0.0.1:8080',
      authJwksUrl: undefined,
      authIssuer: undefined,
      authAudience: undefined,
      trustProxy: false,
      logLevel: 'info',
      credentialKeys: undefined,
      stewardKeyPem: undefined,
      stewardDid: 'did:ocss:haven-steward',
      sandboxSessions: { max: 10_000, idleMs: 30 * 24 * 60 * 60 * 1000 },
      workers: 'inline',
      partnerApiUrls: { nextdns: 'https://api.nextdns.io', controld: 'https://api.controld.com' },
      retention: {
        viewing_history_days: 90,
        device_reports_days: 30,
        webhook_deliveries_days: 30,
        usage_days: 400,
        audit_log_days: 400,
        erasure_receipts_days: 400,
      },
      metricsTokens: undefined,
      tracing: undefined,
      workerPort: 8081,
      shutdownDelayMs: 0,
    });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '0',
      HOST: '0.0.0.0',
      APP_ENV: 'production',
      OCSS_STEWARD_KEY: STEWARD_KEY_PEM,
      OCSS_STEWARD_DID: 'did:ocss:acme-steward',
      DATABASE_URL: 'postgres://u@db:5432/haven',
      DATA_DIR: 'memory',
      REDIS_URL: 'redis://cache:6379',
      PUBLIC_BASE_URL: 'https://api.haven.dev/',
      AUTH_JWKS_URL: 'https://id.example/jwks.json',
      AUTH_ISSUER: 'https://id.example/',
      AUTH_AUDIENCE: 'haven',
      TRUST_PROXY: '10.0.0.0/8, 192.168.1.1',
      LOG_LEVEL: 'warn',
      SANDBOX_MAX_SESSIONS: '50',
      CREDENTIALS_KEY: `${Buffer.alloc(32, 1).toString('base64')},${Buffer.alloc(32, 2).toString('base64url')}`,
      SANDBOX_SESSION_IDLE_DAYS: '2',
      RETENTION_AUDIT_LOG_DAYS: '800',
    });
    expect(config).toMatchObject({
      retention: { audit_log_days: 800, viewing_history_days: 90 },
      sandboxSessions: { max: 50, idleMs: 2 * 24 * 60 * 60 * 1000 },
      credentialKeys: [Buffer.alloc(32, 1), Buffer.alloc(32, 2)],
      port: 0,
      host: '0.0.0.0',
      appEnv: 'production',
      publicBaseUrl: 'https://api.haven.dev',
      trustProxy: ['10.0.0.0/8', '192.168.1.1'],
      logLevel: 'warn',
      authAudience: 'haven',
    });
  });

  it('reads the operations variables (CONTRACT.md §13)', () => {
    const tokens = 'metrics-token-new-0123,metrics-token-old-4567';
    expect(
      loadConfig({
        METRICS_TOKEN: tokens,
        WORKER_PORT: '0',
        SHUTDOWN_DELAY_SECONDS: '5',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'haven-api',
        OTEL_BSP_SCHEDULE_DELAY: '200',
      }),
    ).toMatchObject({
      metricsTokens: tokens.split(','),
      workerPort: 0,
      shutdownDelayMs: 5000,
      tracing: {
        url: 'http://collector:4318/v1/traces',
        protocol: 'http/json',
        serviceName: 'haven-api',
        exportDelayMs: 200,
      },
    });
    // The traces endpoint is used as given; protobuf is the OTLP default; the service is haven.
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp/v1/traces',
      }).tracing,
    ).toEqual({
      url: 'https://traces.example/otlp/v1/traces',
      protocol: 'http/protobuf',
      serviceName: 'haven',
    });
    // The SDK's own off switches.
    for (const off of [{ OTEL_SDK_DISABLED: 'true' }, { OTEL_TRACES_EXPORTER: 'none' }]) {
      expect(
        loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', ...off }).tracing,
      ).toBeUndefined();
    }
    expect(failure({ METRICS_TOKEN: 'short' })).toBe(
      'METRICS_TOKEN: each token must be at least 16 characters, without spaces',
    );
    expect(failure({ METRICS_TOKEN: 'metrics-token-new-0123,' })).toMatch(/^METRICS_TOKEN: /);
    expect(failure({ WORKER_PORT: '-1' })).toBe(
      'WORKER_PORT: must be an integer from 0 to 65535, got "-1"',
    );
    expect(failure({ SHUTDOWN_DELAY_SECONDS: '3601' })).toBe(
      'SHUTDOWN_DELAY_SECONDS: must be an integer from 0 to 3600, got "3601"',
    );
    expect(
      failure({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      }),
    ).toBe(
      'OTEL_EXPORTER_OTLP_PROTOCOL: must be http/protobuf or http/json (gRPC is not supported), got "grpc"',
    );
    expect(failure({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toMatch(
      /^OTEL_EXPORTER_OTLP_ENDPOINT: /,
    );
  });

  it('derives PUBLIC_BASE_URL from HOST and PORT', () => {
    expect(loadConfig({ HOST: '::1', PORT: '9000' }).publicBaseUrl).toBe('http://[::1]:9000');
  });

  it('stops on a bad value with one line naming the variable', () => {
    expect(failure({ PORT: 'eighty' })).toBe(
      'PORT: must be an integer from 0 to 65535, got "eighty"',
    );
    expect(failure({ PORT: '70000' })).toMatch(/^PORT: /);
    expect(failure({ APP_ENV: 'staging' })).toBe(
      'APP_ENV: must be "sandbox" or "production", got "staging"',
    );
    expect(failure({ DATABASE_URL: 'mysql://x' })).toBe(
      'DATABASE_URL: must use postgres or postgresql',
    );
    expect(failure({ REDIS_URL: 'not a url' })).toBe('REDIS_URL: must be an absolute URL');
    expect(failure({ NEXTDNS_API_URL: 'api.nextdns.io' })).toBe(
      'NEXTDNS_API_URL: must be an absolute URL',
    );
    expect(failure({ CONTROLD_API_URL: 'ftp://api.controld.com' })).toBe(
      'CONTROLD_API_URL: must use http or https',
    );
    expect(failure({ LOG_LEVEL: 'loud' })).toMatch(/^LOG_LEVEL: must be one of/);
    expect(failure({ TRUST_PROXY: 'maybe' })).toMatch(/^TRUST_PROXY: /);
    expect(failure({ CREDENTIALS_KEY: Buffer.alloc(16).toString('base64') })).toBe(
      'CREDENTIALS_KEY: must be base64 of 32 random bytes (comma-separated to rotate keys)',
    );
    expect(failure({ CREDENTIALS_KEY: 'not base64 at all!' })).toMatch(/^CREDENTIALS_KEY: /);
    expect(failure({ SANDBOX_MAX_SESSIONS: '0' })).toBe(
      'SANDBOX_MAX_SESSIONS: must be a positive integer, got "0"',
    );
    expect(failure({ SANDBOX_SESSION_IDLE_DAYS: '1.5' })).toMatch(/^SANDBOX_SESSION_IDLE_DAYS: /);
    expect(failure({ PUBLIC_BASE_URL: 'ftp://x' })).toBe('PUBLIC_BASE_URL: must use http or https');
    expect(failure({ RETENTION_USAGE_DAYS: '0' })).toBe(
      'RETENTION_USAGE_DAYS: must be a positive integer number of days up to 36500, got "0"',
    );
    expect(failure({ WORKERS: 'sometimes' })).toBe(
      'WORKERS: must be inline or off, got "sometimes"',
    );
    for (const message of [failure({ PORT: '-1' }), failure({ APP_ENV: 'x' })]) {
      expect(message).not.toContain('\n');
    }
  });

  it('refuses production without the identity provider settings', () => {
    expect(failure({ APP_ENV: 'production' })).toBe(
      'AUTH_JWKS_URL: is required when APP_ENV=production',
    );
    expect(failure({ APP_ENV: 'production', AUTH_JWKS_URL: 'https://id.example/jwks' })).toBe(
      'AUTH_ISSUER: is required when AUTH_JWKS_URL is set',
    );
  });

  it('refuses production without CREDENTIALS_KEY: its deliveries and jobs need it', () => {
    const production = {
      APP_ENV: 'production',
      AUTH_JWKS_URL: 'https://id.example/jwks',
      AUTH_ISSUER: 'https://id.example/',
      OCSS_STEWARD_KEY: STEWARD_KEY_PEM,
    };
    expect(failure(production)).toBe('CREDENTIALS_KEY: is required when APP_ENV=production');
    expect(loadConfig({ ...production, CREDENTIALS_KEY }).credentialKeys).toHaveLength(1);
    // The sandbox keeps generating its own key in the database.
    expect(loadConfig({}).credentialKeys).toBeUndefined();
  });

  it('refuses production without the steward key, and a key that is not Ed25519 PKCS#8', () => {
    const identity = {
      APP_ENV: 'production',
      AUTH_JWKS_URL: 'https://id.example/jwks',
      AUTH_ISSUER: 'https://id.example/',
    };
    expect(failure({ ...identity, CREDENTIALS_KEY })).toBe(
      'OCSS_STEWARD_KEY: is required when APP_ENV=production',
    );
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 })
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString();
    for (const bad of [rsa, 'not a pem']) {
      expect(failure({ ...identity, CREDENTIALS_KEY, OCSS_STEWARD_KEY: bad })).toBe(
        'OCSS_STEWARD_KEY: must be an Ed25519 private key in PKCS#8 PEM',
      );
    }
    // One-line forms (literal \n) are accepted.
    const oneLine = STEWARD_KEY_PEM.replace(/\n/g, '\\n');
    expect(
      loadConfig({ ...identity, CREDENTIALS_KEY, OCSS_STEWARD_KEY: oneLine }).stewardKeyPem,
    ).toBe(STEWARD_KEY_PEM);
    expect(failure({ OCSS_STEWARD_DID: 'did:web:x' })).toBe(
      'OCSS_STEWARD_DID: must be did:ocss: followed by 1-64 of a-z 0-9 . _ -',
    );
  });

  it('accepts the forms of TRUST_PROXY', () => {
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
  });
});
