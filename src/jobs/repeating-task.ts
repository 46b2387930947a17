// A task run every few seconds in the background (heartbeats, the reaper). The next run is
// scheduled when one ends, so a slow run (a busy database) never overlaps the next; the timer
// never keeps a process alive on its own.

export interface RepeatingTask {
  /** No further runs; resolves once a run under way has ended. */
  stop(): Promise<void>;
}

/** `task` must handle its own errors: one that escapes is given to `onError`. */
export function repeatEvery(
  periodMs: number,
  task: () => Promise<void>,
  onError: (error: unknown) => void,
): RepeatingTask {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  function schedule(): void {
    timer = setTimeout(() => {
      running = task()
        .catch(onError)
        .finally(() => {
          running = undefined;
          if (!stopped) {
            schedule();
          }
        });
    }, periodMs);
    timer.unref();
  }

  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
