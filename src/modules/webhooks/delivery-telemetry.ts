// One delivery attempt as the process's telemetry sees it (CONTRACT.md §13): counted by
// outcome and, with tracing on, a CLIENT span (a child of the delivery job's span) whose
// `traceparent` the POST carries, so a receiver that traces joins the trace of the change
// that caused the message. The span names the endpoint's host and port only: a webhook URL's
// path and query often hold the receiver's own secret (a token in the path).
import { SpanKind } from '@opentelemetry/api';
import type { Telemetry } from '../../telemetry/telemetry.js';
import { SpanStatusCode } from '../../telemetry/tracing.js';
import type { PostOutcome } from './delivery-request.js';

/** Whether an attempt succeeded: the endpoint answered 2xx. */
export function succeeded(outcome: PostOutcome): boolean {
  return outcome.kind === 'answered' && outcome.status >= 200 && outcome.status < 300;
}

/**
 * Runs one attempt (`post`, given the trace headers to send beside its own), counted and
 * traced. `post` never throws: a failure is its outcome.
 */
export async function observedAttempt(
  telemetry: Telemetry | undefined,
  target: { url: string; event: string; attempt: number },
  post: (traceHeaders: Record<string, string>) => Promise<PostOutcome>,
): Promise<PostOutcome> {
  let outcome: PostOutcome;
  if (!telemetry?.tracing.enabled) {
    outcome = await post({});
  } else {
    const { tracing } = telemetry;
    // Stored URLs were checked when registered; a bad one fails in `post`, not here.
    const url = URL.canParse(target.url) ? new URL(target.url) : new URL('http://invalid');
    outcome = await tracing.inSpan(
      'POST webhook',
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': 'POST',
          'server.address': url.hostname,
          'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
          'url.scheme': url.protocol.slice(0, -1),
          'haven.webhook.event': target.event,
          'haven.webhook.attempt': target.attempt,
        },
      },
      async (span) => {
        const traceHeaders: Record<string, string> = {};
        tracing.inject(traceHeaders);
        const result = await post(traceHeaders);
        const ok = succeeded(result);
        span.setAttribute('haven.webhook.outcome', ok ? 'succeeded' : 'failed');
        if (result.kind === 'answered') {
          span.setAttribute('http.response.status_code', result.status);
        }
        if (!ok) {
          span.setAttribute(
            'error.type',
            result.kind === 'answered' ? String(result.status) : 'no_response',
          );
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        return result;
      },
    );
  }
  telemetry?.metrics.webhookDelivery(succeeded(outcome) ? 'succeeded' : 'failed');
  return outcome;
}
