// Work that many events ask for, done once for all of them. A Backup all of 200 klanten ends
// a klant every few tens of milliseconds; each end asks for the dashboard, the profiles and the
// history again, and each of those reads every klant and renders every row. Done per event,
// the window would be busy rendering and slow to answer a click.

/** `run`, done at most once per `spacingMs`, never twice at once: calls while it runs or
 * within the spacing are served by one more run after it. The promise resolves when a run
 * that started after the call has ended (its errors are `run`'s to handle). */
export function coalesced(run: () => Promise<void>, spacingMs: number): () => Promise<void> {
  let running: Promise<void> | null = null;
  let next: Promise<void> | null = null;
  let lastStart = -Infinity;
  const start = (): Promise<void> => {
    lastStart = Date.now();
    running = run().finally(() => (running = null));
    return running;
  };
  return () => {
    if (next) return next;
    const wait = lastStart + spacingMs - Date.now();
    if (!running && wait <= 0) return start();
    const before = (running ?? Promise.resolve()).catch(() => undefined);
    next = before
      .then(() => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, lastStart + spacingMs - Date.now()))))
      .then(() => {
        next = null;
        return start();
      });
    return next;
  };
}

/** How long a burst of job events is gathered before it is applied (about a frame). */
export const GATHER_MS = 16;

/** Queues `apply` to run with everything else queued within [`GATHER_MS`], so a burst of job
 * events becomes one render. `inBatch` runs the queued functions as one state change. A timer,
 * not a frame callback: a window closed to the tray gets no frames, and its state must still
 * follow. */
export function gathered(inBatch: (all: () => void) => void): (apply: () => void) => void {
  const queued: (() => void)[] = [];
  const flush = () => {
    const all = queued.splice(0);
    inBatch(() => all.forEach((apply) => apply()));
  };
  return (apply) => {
    queued.push(apply);
    if (queued.length === 1) setTimeout(flush, GATHER_MS);
  };
}
