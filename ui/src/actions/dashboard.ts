// The dashboard's buttons: Backup all, Cancel all, Verify backups, Pause plans.
import { api, asError } from "../api";
import { state } from "../state";
import { guarded, confirmed } from "./run";
import { refreshDashboard, refreshHistory, refreshSettings } from "./refresh";

/** Backup all: every klant queued; each leaves the queue when its backup starts (its events
 * then show under it). */
export function backupAll(): Promise<void> {
  return guarded(async () => {
    state.queued.value = new Set(state.profiles.value.map((p) => p.id));
    try {
      await api.backupAll();
    } finally {
      state.queued.value = new Set();
    }
  });
}

/** "Cancel all", once confirmed: every running backup ends as cancelled, and the klanten
 * still waiting (Backup all's, plans waiting for their turn) are not started. */
export async function cancelAll(): Promise<void> {
  if (!(await confirmed("cancelAllTitle", "cancelAllConfirm", "cancelAllYes"))) return;
  await guarded(async () => {
    await api.cancelAll();
  });
}

/** "Verify backups": every kept backup read again; the report shows under the button and
 * the dashboard counts each klant's damaged backups. */
export async function verifyBackups(): Promise<void> {
  state.verifying.value = "verifying";
  try {
    state.verifying.value = await api.verifyBackups();
  } catch (e) {
    state.verifying.value = { error: asError(e) };
  }
  await Promise.all([refreshDashboard(), refreshHistory()]);
}

/** "Pause plans" / "Resume plans" for every klant at once. The tray's own action, so its
 * check mark follows; the klanten's plans and the dashboard are read again. */
export function setPlansPaused(paused: boolean): Promise<void> {
  return guarded(async () => {
    await api.trayAction(paused ? "pause_plans" : "resume_plans");
    await refreshSettings();
  });
}
