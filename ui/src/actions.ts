// What the UI does: each action calls the Rust commands through `api` and updates `state`.
import { api, asError } from "./api";
import { reduce } from "./backup-state";
import type { CallbackInput, ProfileInput } from "./bindings";
import { t } from "./i18n";
import { render, state } from "./state";

async function guarded(work: () => Promise<void>): Promise<void> {
  state.error = null;
  state.busy = true;
  render();
  try {
    await work();
  } catch (e) {
    state.error = asError(e);
  } finally {
    state.busy = false;
    render();
  }
}

export async function boot(): Promise<void> {
  const launch = await api.launchInfo();
  state.settings = await api.settings();
  void resumeBackups();
  if (launch.demo) {
    await startDemo();
    return;
  }
  state.profiles = await api.profiles();
  state.selected = state.profiles[0]?.id ?? null;
  render();
  if (state.selected) await loadProfile();
}

export function startDemo(): Promise<void> {
  return guarded(async () => {
    const demo = await api.startDemo();
    state.demo = true;
    state.demoBaseUrl = demo.base_url;
    state.profiles = await api.profiles();
    state.selected = demo.profiles[0]?.id ?? null;
    state.editing = null;
    await signInAndLoad();
  });
}

export function selectProfile(id: string): Promise<void> {
  state.selected = id;
  state.environment = null;
  state.permissions = null;
  if (state.backup.phase !== "idle" && state.jobProfile !== id && !["requested", "waiting", "fetching", "downloading", "choose", "saving"].includes(state.backup.phase)) {
    state.backup = { phase: "idle" };
  }
  return loadProfile();
}

async function loadProfile(): Promise<void> {
  await guarded(signInAndLoad);
}

async function signInAndLoad(): Promise<void> {
  const id = state.selected;
  if (!id) return;
  await api.signIn(id);
  state.signedIn.add(id);
  render();
  const [environment, permissions, history] = await Promise.all([
    api.environment(id).catch((e) => ({ error: asError(e) })),
    api.permissions(id).catch(() => null),
    api.history(state.historyFilter),
  ]);
  state.environment = environment;
  state.permissions = permissions;
  state.history = history;
}

export function signIn(): Promise<void> {
  return guarded(signInAndLoad);
}

export function signOut(): Promise<void> {
  return guarded(async () => {
    if (!state.selected) return;
    await api.signOut(state.selected);
    state.signedIn.delete(state.selected);
    state.environment = null;
  });
}

export function forget(): Promise<void> {
  const id = state.selected;
  if (!id || !window.confirm(t("forgetConfirm"))) return Promise.resolve();
  return guarded(async () => {
    await api.forgetProfile(id);
    state.signedIn.delete(id);
    state.profiles = await api.profiles();
    state.selected = state.profiles[0]?.id ?? null;
    state.environment = null;
  });
}

export function saveProfile(input: ProfileInput): Promise<void> {
  return guarded(async () => {
    const saved = await api.saveProfile(input);
    state.profiles = await api.profiles();
    state.selected = saved.id;
    state.editing = null;
    state.signedIn.delete(saved.id);
    await signInAndLoad();
  });
}

export async function refreshHistory(): Promise<void> {
  state.history = await api.history(state.historyFilter);
  render();
}

export function refreshEnvironment(): Promise<void> {
  return guarded(async () => {
    if (state.selected) state.environment = await api.environment(state.selected);
  });
}

export function startBackup(): Promise<void> {
  const id = state.selected;
  if (!id) return Promise.resolve();
  state.error = null;
  state.backup = { phase: "requested" };
  state.jobProfile = id;
  render();
  return api
    .startBackup(id, (event) => {
      state.backup = reduce(state.backup, event, Date.now());
      render();
      if (event.kind === "staged") void chooseWhereToSave();
      if (event.kind === "saved" || event.kind === "failed") void refreshAfterJob();
    })
    .then((jobId) => {
      state.jobId = jobId;
    })
    .catch((e) => {
      state.backup = { phase: "failed", error: asError(e) };
      render();
    });
}

async function refreshAfterJob(): Promise<void> {
  await refreshHistory();
  if (state.selected) state.permissions = await api.permissions(state.selected).catch(() => state.permissions);
  render();
}

/** The save dialog (opened by Rust), prefilled with the file's (sanitised) name. */
export async function chooseWhereToSave(): Promise<void> {
  const view = state.backup;
  if (view.phase !== "choose" || !state.jobId) return;
  state.backup = { phase: "saving" };
  render();
  try {
    const saved = await api.saveBackup(state.jobId);
    // Dialog closed: the file stays staged; the panel offers to choose or discard.
    state.backup = saved ? { phase: "saved", path: saved.path, bytes: saved.bytes, sha256: saved.sha256 } : view;
  } catch (e) {
    state.error = asError(e);
    state.backup = view; // still staged: the user may choose another place
  }
  await refreshHistory();
}

export async function cancelBackup(): Promise<void> {
  const job = state.jobId;
  state.backup = { phase: "cancelled" };
  render();
  if (job) await api.cancelBackup(job).catch(() => undefined);
  await refreshHistory();
}

export function showBackup(historyId: string, select: boolean): Promise<void> {
  return guarded(() => api.showBackup(historyId, select));
}

export function chooseSaveFolder(): Promise<void> {
  return guarded(async () => {
    state.settings = await api.chooseSaveFolder();
  });
}

export function askEachTime(): Promise<void> {
  return guarded(async () => {
    state.settings = await api.clearSaveFolder();
  });
}

/** cloudflared picked in a file dialog opened by Rust (the webview names no program). */
export function chooseTunnelProgram(): Promise<void> {
  return guarded(async () => {
    state.settings = await api.chooseTunnelProgram();
    state.callbackSaved = state.settings.callback.kind === "tunnel";
    state.callbackTest = null;
  });
}

export async function filterHistory(profileId: string | null): Promise<void> {
  state.historyFilter = profileId;
  await refreshHistory();
}

/** Finishes what an earlier run left under way; each job shows in the Backup tab. */
export async function resumeBackups(): Promise<void> {
  // An event may come before the list of jobs does: either creates the job's entry.
  const entry = (jobId: string) => {
    let job = state.resumed.find((r) => r.jobId === jobId);
    if (!job) {
      job = { jobId, profileId: "", view: { phase: "requested" } };
      state.resumed.push(job);
    }
    return job;
  };
  const jobs =
    (await api
      .resumeBackups((e) => {
        const job = entry(e.job_id);
        job.view = reduce(job.view, e.event, Date.now());
        render();
        if (e.event.kind === "saved" || e.event.kind === "failed") void refreshHistory();
      })
      .catch(() => null)) ?? [];
  for (const job of jobs) entry(job.job_id).profileId = job.profile_id;
  render();
}

/** The save dialog for a resumed backup that is staged. */
export async function saveResumed(jobId: string): Promise<void> {
  const job = state.resumed.find((r) => r.jobId === jobId);
  if (!job || job.view.phase !== "choose") return;
  try {
    const saved = await api.saveBackup(jobId);
    if (!saved) return; // dialog closed: still staged
    job.view = { phase: "saved", path: saved.path, bytes: saved.bytes, sha256: saved.sha256 };
  } catch (e) {
    state.error = asError(e);
  }
  await refreshHistory();
}

export function saveCallback(input: CallbackInput): Promise<void> {
  return guarded(async () => {
    state.settings = await api.setCallback(input);
    state.callbackSaved = true;
    state.callbackTest = null;
  });
}

export async function testCallback(): Promise<void> {
  const id = state.selected;
  if (!id) return;
  state.callbackTest = "testing";
  render();
  try {
    state.callbackTest = { ok: await api.testCallback(id) };
  } catch (e) {
    state.callbackTest = { error: asError(e) };
  }
  render();
}
