// A backup someone started, those plans and Backup all start, and those an earlier run left
// unfinished: each job's panel follows its events; staged files go through the one save flow.
import { batch } from "@preact/signals";
import { api, asError } from "../api";
import { hasEnded, isRunning, reduce } from "../backup-state";
import type { AppJobEvent } from "../bindings";
import { coalesced, gathered } from "../coalesce";
import { findJob, state, updateJob, type Job } from "../state";
import { guarded, confirmed, showError } from "./run";
import { refreshDashboard, refreshHistory, refreshProfiles, refreshPermissions } from "./refresh";

let nextKey = 0;

export function startBackup(): Promise<void> {
  const profileId = state.selected.value;
  if (!profileId) return Promise.resolve();
  const key = `new-${++nextKey}`;
  batch(() => {
    state.error.value = null;
    addJob({ key, jobId: null, profileId, resumed: false, view: { phase: "requested" } });
  });
  return api
    .startBackup(profileId, (event) => {
      followJob(key, profileId, event);
      if (event.kind === "staged") void saveJob(key);
    })
    .then((jobId) => {
      updateJob(key, (job) => ({ ...job, jobId }));
      const job = findJob(key);
      if (job?.view.phase === "choose") void saveJob(key); // staged before the id came back
    })
    .catch((e) => {
      updateJob(key, (job) => ({ ...job, view: { phase: "failed", error: asError(e) } }));
    });
}

/** Shows `job` in its klant's panel: one panel per profile, so an ended job of that profile
 * makes way for it. */
function addJob(job: Job): void {
  const kept = state.jobs.value.filter((j) => j.resumed || j.profileId !== job.profileId || isRunning(j.view));
  state.jobs.value = [...kept, job];
}

/** Job `key` of klant `profileId` reported `event`: its view follows; once the service
 * accepted it, what the key allows is read again; when it ends, the history too. */
function followJob(key: string, profileId: string, event: AppJobEvent): void {
  updateJob(key, (job) => ({ ...job, view: reduce(job.view, event, Date.now()) }));
  if (event.kind === "stage" && event.stage === "accepted") void refreshPermissions(profileId);
  if (event.kind === "saved" || event.kind === "failed") void refreshAfterJob(profileId);
}

/** After a job of `profileId`: the history, the dashboard, and what its answers taught about
 * its api key. The history and the dashboard each read many klanten: after a burst of ends (a
 * Backup all) they are read once for all of them, at most once a second. */
async function refreshAfterJob(profileId: string): Promise<void> {
  await Promise.all([historySoon(), dashboardSoon()]);
  await refreshPermissions(profileId);
}

const historySoon = coalesced(() => refreshHistory().catch(() => undefined), 1000);

const dashboardSoon = coalesced(refreshDashboard, 1000);

const profilesSoon = coalesced(() => refreshProfiles().catch(() => undefined), 1000);

/** Events of backups that run unattended (plans, Backup all), applied together (see
 * `gathered`). */
const unattendedEvent = gathered(batch);

/** The one save flow, for every staged job: the save dialog (opened by Rust, prefilled with
 * the file's sanitised name). Closing it keeps the file staged: the job offers to choose or
 * discard. */
export async function saveJob(key: string): Promise<void> {
  const job = findJob(key);
  if (!job || job.view.phase !== "choose" || !job.jobId) return;
  const staged = job.view;
  updateJob(key, (j) => ({ ...j, view: { phase: "saving" } }));
  try {
    const saved = await api.saveBackup(job.jobId);
    updateJob(key, (j) => ({ ...j, view: saved ? { phase: "saved", path: saved.path, bytes: saved.bytes, sha256: saved.sha256 } : staged }));
  } catch (e) {
    batch(() => {
      showError(e, job.profileId);
      updateJob(key, (j) => ({ ...j, view: staged })); // still staged: another place may work
    });
  }
  await refreshHistory();
}

/** Closes the card of backups an earlier run left, once each has ended (its result is in
 * the history). */
export function closeResumed(): void {
  state.jobs.value = state.jobs.value.filter((j) => !(j.resumed && hasEnded(j.view)));
}

export async function cancelJob(key: string): Promise<void> {
  const job: Job | undefined = findJob(key);
  if (!job) return;
  // A downloaded, verified backup is deleted by a discard: asked first.
  if (job.view.phase === "choose" && !(await confirmed("discard", "discardConfirm", "discard"))) return;
  updateJob(key, (j) => ({ ...j, view: { phase: "cancelled" } }));
  if (job.jobId) await api.cancelBackup(job.jobId).catch(() => undefined);
  await refreshHistory();
}

export function showBackup(historyId: string, select: boolean): Promise<void> {
  return guarded(() => api.showBackup(historyId, select));
}

/** Finishes what an earlier run left under way; each job shows in the Backup tab. */
export async function resumeBackups(): Promise<void> {
  // An event may come before the list of jobs does: either creates the job's entry.
  const ensure = (jobId: string) => {
    if (!findJob(jobId)) {
      const job: Job = { key: jobId, jobId, profileId: "", resumed: true, view: { phase: "requested" } };
      state.jobs.value = [...state.jobs.value, job];
    }
  };
  const jobs =
    (await api
      .resumeBackups((e) => {
        ensure(e.job_id);
        updateJob(e.job_id, (job) => ({ ...job, view: reduce(job.view, e.event, Date.now()) }));
        if (e.event.kind === "saved" || e.event.kind === "failed") void refreshHistory();
      })
      .catch(() => null)) ?? [];
  batch(() => {
    for (const job of jobs) {
      ensure(job.job_id);
      updateJob(job.job_id, (j) => ({ ...j, profileId: job.profile_id }));
    }
  });
}

/** Follows the backups plans start: each shows under its klant like one started here. */
export async function watchPlanned(): Promise<void> {
  await api
    .watchPlanned((e) =>
      unattendedEvent(() => {
        if (state.queued.value.has(e.profile_id)) {
          const queued = new Set(state.queued.value);
          queued.delete(e.profile_id);
          state.queued.value = queued;
        }
        if (!findJob(e.job_id)) addJob({ key: e.job_id, jobId: e.job_id, profileId: e.profile_id, resumed: false, view: { phase: "requested" } });
        followJob(e.job_id, e.profile_id, e.event);
        // Its klant's next planned backup has moved on.
        if (e.event.kind === "saved" || e.event.kind === "failed") void profilesSoon();
      }),
    )
    .catch(() => undefined);
}
