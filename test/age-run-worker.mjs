// `npm run worker` (src/worker.ts) as built in dist/, with one difference: the real clock's
// age run looks for due children every AGE_RUN_PERIOD_MS instead of every 60 s
// (ServiceTuning.ageRunPeriodMs, a knob the service never reads from the environment). For
// the age run's kill test and its bench, which would otherwise wait a minute for each
// process's first run. Stops on SIGTERM as the worker does; SIGKILL is the point of the test.
import pino from 'pino';
import { systemClock } from '../dist/clock.js';
import { loadConfig } from '../dist/config.js';
import { openStorage } from '../dist/db/storage.js';
import { logDestination, loggerOptions } from '../dist/http/request-log.js';
import { closeServices, createServices } from '../dist/modules/wiring.js';
import { createTelemetry } from '../dist/telemetry/telemetry.js';

const periodMs = Number(process.env.AGE_RUN_PERIOD_MS ?? '100');
const config = { ...loadConfig(), workers: 'inline' };
const log = pino(loggerOptions(config.logLevel), logDestination());
const storage = await openStorage(config);
const services = await createServices(
  config,
  {
    db: storage.database.db,
    clock: systemClock,
    notifications: storage.database.notifications,
    telemetry: createTelemetry(config),
  },
  log,
  storage.database.backend === 'postgres',
  { ageRunPeriodMs: periodMs },
);
await services.jobs.start();
log.info({ storage: storage.description, ageRunPeriodMs: periodMs }, 'Haven worker running');

process.once('SIGTERM', async () => {
  await closeServices(services);
  await storage.close();
  process.exit(0);
});
