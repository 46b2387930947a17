// A family's enforcement jobs, newest first (the jobs of each of its children, merged); a
// job opens into one row per platform with its status, counts and the partner's error. A
// job not yet finished is asked for again every second (GET /enforcement/jobs/{id}) until it
// is, so a running job turns completed, partial or failed on screen without a reload.
import type { Haven, Result } from '@haven/sdk';
import { useEffect, useState } from 'preact/hooks';
import { isSignedOut, messageOf } from './session.js';
import { Empty, ErrorText, type OnSignedOut, Section, useAction, when } from './ui.js';

type Job = Result<'getEnforcementJob'>;
type Outcome = Job['results'][number];

/** How often a job not yet finished is asked for again. */
const POLL_MS = 1000;
/** Jobs listed per child (the API's default page is 20; it clamps at 100). */
const JOBS_PER_CHILD = 20;

const TRIGGERS: Record<Job['trigger_type'], string> = {
  manual: 'manual',
  policy_change: 'policy change',
  age_change: 'age change',
  release: 'release',
};

export function isFinished(job: Pick<Job, 'status'>): boolean {
  return job.status !== 'pending' && job.status !== 'running';
}

/** Newest first; the same instant keeps a stable order. */
function newestFirst(a: Job, b: Job): number {
  return b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id);
}

function StatusBadge(props: { status: string }) {
  return <span class={`run-status run-status-${props.status}`}>{props.status}</span>;
}

/** One row per platform the job reached (or could not), with the partner's own words. */
function JobResults(props: { job: Job; platformNames: Map<string, string> }) {
  const { job, platformNames } = props;
  const label = `Platforms of the job of ${when(job.created_at)}`;
  return (
    <div class="job-results">
      <p class="muted" aria-live="polite">
        Job <code>{job.id.slice(0, 8)}</code>: <StatusBadge status={job.status} />
        {job.started_at ? `, started ${when(job.started_at)}` : ', waiting for a worker'}
        {job.completed_at ? `, finished ${when(job.completed_at)}` : ''}; policy version{' '}
        {job.policy_version}.
      </p>
      {job.results.length === 0 ? (
        <Empty>
          {isFinished(job)
            ? 'No platform: the family had no connection when the job ran.'
            : 'The platforms are listed once the job has run.'}
        </Empty>
      ) : (
        <div class="scroll">
          <table aria-label={label}>
            <thead>
              <tr>
                <th scope="col">Platform</th>
                <th scope="col">Status</th>
                <th scope="col">Applied</th>
                <th scope="col">Skipped</th>
                <th scope="col">Failed</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {job.results.map((result: Outcome) => (
                <tr key={result.connection_id}>
                  <td>{platformNames.get(result.platform_id) ?? result.platform_id}</td>
                  <td>
                    <StatusBadge status={result.status} />
                  </td>
                  <td>{result.rules_applied}</td>
                  <td>{result.rules_skipped}</td>
                  <td>{result.rules_failed}</td>
                  <td class="partner-error">{result.error_message ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

export function EnforcementSection(props: {
  haven: Haven;
  onSignedOut: OnSignedOut;
  familyId: string;
}) {
  const { haven, familyId, onSignedOut } = props;
  const { busy, error, run, setError } = useAction(onSignedOut);
  const [jobs, setJobs] = useState<Job[] | null>(null);
  const [childNames, setChildNames] = useState<Map<string, string>>(new Map());
  const [platformNames, setPlatformNames] = useState<Map<string, string>>(new Map());
  const [open, setOpen] = useState<string | null>(null);

  const reload = async () => {
    const children = await haven.children.list(familyId);
    setChildNames(new Map(children.map((child) => [child.id, child.name])));
    const perChild = await Promise.all(
      children.map((child) => haven.enforcement.listChildJobs(child.id, { limit: JOBS_PER_CHILD })),
    );
    setJobs(perChild.flat().sort(newestFirst));
  };

  useEffect(() => {
    setJobs(null);
    setOpen(null);
    void run(reload);
  }, [haven, familyId]);

  // The catalog's names for the platform ids; the ids themselves do if it cannot be read.
  useEffect(() => {
    haven.platforms.list().then(
      (platforms) => setPlatformNames(new Map(platforms.map((p) => [p.platform_id, p.name]))),
      () => undefined,
    );
  }, [haven]);

  // Every job not yet finished is asked for again a second after the last answer, until
  // none is left; leaving the page (unmounting) stops it.
  useEffect(() => {
    const unfinished = (jobs ?? []).filter((job) => !isFinished(job));
    if (unfinished.length === 0) {
      return;
    }
    let stopped = false;
    const timer = setTimeout(async () => {
      try {
        const fresh = await Promise.all(unfinished.map((job) => haven.enforcement.getJob(job.id)));
        if (!stopped) {
          const byId = new Map(fresh.map((job) => [job.id, job]));
          setJobs((current) => current?.map((job) => byId.get(job.id) ?? job) ?? null);
        }
      } catch (failure) {
        if (stopped) {
          return;
        }
        if (isSignedOut(failure)) {
          onSignedOut('Your session has expired or was refused: sign in again.');
        } else {
          setError(`The jobs could not be followed: ${messageOf(failure)} (Refresh to retry)`);
        }
      }
    }, POLL_MS);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [jobs, haven]);

  return (
    <Section title="Enforcement" id="enforcement">
      <div class="row">
        <p class="muted enforcement-note">
          Each job pushes a child's policy to the family's connected platforms. A job still running
          updates here by itself.
        </p>
        <button type="button" disabled={busy} onClick={() => run(reload)}>
          Refresh jobs
        </button>
      </div>
      <ErrorText error={error} />
      {jobs === null ? (
        <p class="loading">Loading enforcement jobs…</p>
      ) : jobs.length === 0 ? (
        <Empty>
          No enforcement job yet: connect a platform, then enforce a child's policy (
          <code>{'POST /children/{id}/enforce'}</code>); a policy change enforces by itself.
        </Empty>
      ) : (
        <ol class="enforcement-jobs" aria-label="Enforcement jobs">
          {jobs.map((job) => {
            const expanded = open === job.id;
            const child = childNames.get(job.child_id) ?? job.child_id.slice(0, 8);
            return (
              <li key={job.id} class="enforcement-job">
                <div class="job-summary">
                  <time dateTime={job.created_at}>{when(job.created_at)}</time>
                  <span>{child}</span>
                  <span class="muted">{TRIGGERS[job.trigger_type] ?? job.trigger_type}</span>
                  <StatusBadge status={job.status} />
                  <span class="muted">
                    {job.results.length} platform{job.results.length === 1 ? '' : 's'}
                  </span>
                  <button
                    type="button"
                    aria-expanded={expanded}
                    aria-label={`${expanded ? 'Close' : 'Open'} the job of ${when(job.created_at)} for ${child}`}
                    onClick={() => setOpen(expanded ? null : job.id)}
                  >
                    {expanded ? 'Close' : 'Open'}
                  </button>
                </div>
                {expanded ? <JobResults job={job} platformNames={platformNames} /> : null}
              </li>
            );
          })}
        </ol>
      )}
    </Section>
  );
}
