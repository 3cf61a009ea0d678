// What the UI does: each action calls the Rust commands through `api` and writes the state's
// signals; the views that read them follow.
import { batch, type Signal } from "@preact/signals";
import { api, asError, type UiError } from "./api";
import { isRunning, reduce } from "./backup-state";
import type { AppJobEvent, CallbackChoice, EncryptionInput, ProfileView, Retention, Schedule } from "./bindings";
import { coalesced, gathered } from "./coalesce";
import { keepUnchanged } from "./dashboard";
import type { Key } from "./i18n";
import { findJob, mailInputOf, state, updateJob, withEntry, type CallbackDraft, type EnvironmentView, type Job, type KeepPart, type PlanDraft, type ProfileDraft, type SpeedDraft } from "./state";

/** Runs `work`, showing its error — as klant `profileId`'s when it is about one klant. */
async function guarded(work: () => Promise<void>, profileId: string | null = null): Promise<void> {
  batch(() => {
    state.error.value = null;
    state.busy.value = true;
  });
  try {
    await work();
  } catch (e) {
    showError(e, profileId);
  } finally {
    state.busy.value = false;
  }
}

/** Asks `text` in the confirmation dialog; true when the user said `yes`. */
export function confirmed(title: Key, text: Key, yes: Key): Promise<boolean> {
  return new Promise((resolve) => {
    state.confirming.peek()?.resolve(false); // one question at a time
    state.confirming.value = { title, text, yes, resolve };
  });
}

export function showError(e: unknown, profileId: string | null): void {
  state.error.value = { error: asError(e), profileId };
}

export async function boot(): Promise<void> {
  const launch = await api.launchInfo();
  state.settings.value = await api.settings();
  api.startAtLogin().then(
    (on) => (state.startAtLogin.value = on),
    () => (state.startAtLogin.value = null),
  );
  void resumeBackups();
  void watchPlanned();
  if (launch.demo) {
    await startDemo();
    return;
  }
  const profiles = await api.profiles();
  batch(() => {
    state.profiles.value = profiles;
    state.selected.value = profiles[0]?.id ?? null;
    state.overview.value = profiles.length > 1;
  });
  if (state.overview.value) await refreshDashboard();
  else if (state.selected.value) await loadProfile();
}

/** The dashboard, the first screen when there is more than one klant. */
export function showOverview(): Promise<void> {
  state.overview.value = true;
  return refreshDashboard();
}

/** Every klant's standing again (after a backup ended, or as time passes) — only while the
 * dashboard is on screen: it reads every klant's history, and showing it reads it anyway, so
 * a Backup all of many klanten does not read them all again at each klant's end unseen. */
export async function refreshDashboard(): Promise<void> {
  if (!state.overview.value) return;
  try {
    state.dashboard.value = keepUnchanged(state.dashboard.peek(), await api.dashboard());
  } catch (e) {
    showError(e, null);
  }
}

export function startDemo(): Promise<void> {
  return guarded(async () => {
    const demo = await api.startDemo();
    const profiles = await api.profiles();
    batch(() => {
      state.demo.value = true;
      state.demoBaseUrl.value = demo.base_url;
      state.profiles.value = profiles;
      state.selected.value = demo.profiles[0]?.id ?? null;
      state.editing.value = null;
      state.overview.value = profiles.length > 1;
    });
    await Promise.all([signInAndLoad(), refreshDashboard()]);
  });
}

export function selectProfile(id: string): Promise<void> {
  batch(() => {
    state.selected.value = id;
    state.overview.value = false;
  });
  return loadProfile();
}

function loadProfile(): Promise<void> {
  return guarded(signInAndLoad, state.selected.value);
}

function setSignedIn(id: string, signedIn: boolean): void {
  const next = new Set(state.signedIn.value);
  if (signedIn) next.add(id);
  else next.delete(id);
  state.signedIn.value = next;
}

async function signInAndLoad(): Promise<void> {
  const id = state.selected.value;
  if (!id) return;
  await api.signIn(id);
  setSignedIn(id, true);
  const [environment, permissions, history] = await Promise.all([
    api.environment(id).then(
      (ok): EnvironmentView => ({ ok }),
      (e): EnvironmentView => ({ error: asError(e) }),
    ),
    api.permissions(id).catch(() => undefined),
    api.history(state.historyFilter.value),
  ]);
  batch(() => {
    state.environments.value = withEntry(state.environments.value, id, environment);
    state.permissions.value = withEntry(state.permissions.value, id, permissions);
    state.history.value = history;
  });
}

/** Drops what was loaded for profile `id` (signed out, forgotten). */
function unload(id: string): void {
  batch(() => {
    setSignedIn(id, false);
    state.environments.value = withEntry(state.environments.value, id, undefined);
    state.permissions.value = withEntry(state.permissions.value, id, undefined);
  });
}

export function signIn(): Promise<void> {
  return loadProfile();
}

export function signOut(): Promise<void> {
  return guarded(async () => {
    const id = state.selected.value;
    if (!id) return;
    await api.signOut(id);
    unload(id);
  }, state.selected.value);
}

/** Forgets profile `id` (asked first): the profile and its secrets; saved backups stay. */
export async function forget(id: string): Promise<void> {
  if (!(await confirmed("forgetTitle", "forgetConfirm", "forget"))) return;
  return guarded(async () => {
    await api.forgetProfile(id);
    unload(id);
    const profiles = await api.profiles();
    batch(() => {
      state.profiles.value = profiles;
      state.selected.value = profiles[0]?.id ?? null;
      state.editing.value = null;
    });
    // The klant now selected is loaded as if it had been clicked; the dashboard drops it.
    await Promise.all([signInAndLoad().catch((e) => showError(e, state.selected.value)), refreshDashboard()]);
  }, id);
}

/** Opens the profile form: empty for a new profile, or with `existing`'s fields (its secrets
 * are never shown: left empty, they are kept). */
export function editProfile(existing: ProfileView | null): void {
  // An error about another klant (or the last one) does not stand over the form.
  if (state.error.value?.profileId !== existing?.id) state.error.value = null;
  state.planDraft.value = null;
  state.editing.value = {
    id: existing?.id ?? null,
    name: existing?.name ?? "",
    base_url: existing?.base_url ?? "",
    username: existing?.username ?? "",
    api_key: "",
    password: "",
    openapi_url: existing?.openapi_url ?? "",
  };
}

export function closeProfileForm(): void {
  state.editing.value = null;
  state.planDraft.value = null;
}

/** "Trust a certificate": Rust opens the file dialog and checks the file; the profile then
 * shows what it trusts (subject and fingerprint). */
export function chooseProfileCa(id: string): Promise<void> {
  return guarded(async () => replaceProfile(await api.chooseProfileCa(id)), id);
}

export function clearProfileCa(id: string): Promise<void> {
  return guarded(async () => replaceProfile(await api.clearProfileCa(id)), id);
}

function replaceProfile(view: ProfileView): void {
  state.profiles.value = state.profiles.value.map((p) => (p.id === view.id ? view : p));
}

/** Keeps what is typed into the profile form. */
export function editDraft(field: keyof Omit<ProfileDraft, "id">, value: string): void {
  const draft = state.editing.value;
  if (draft) state.editing.value = { ...draft, [field]: value };
}

export function saveProfile(): Promise<void> {
  const draft = state.editing.value;
  if (!draft) return Promise.resolve();
  return guarded(async () => {
    const saved = await api.saveProfile({
      id: draft.id,
      name: draft.name,
      base_url: draft.base_url,
      username: draft.username,
      api_key: draft.api_key || null,
      password: draft.password || null,
      openapi_url: draft.openapi_url || null,
    });
    const profiles = await api.profiles();
    unload(saved.id); // its settings may have changed: what was loaded no longer counts
    batch(() => {
      state.profiles.value = profiles;
      state.selected.value = saved.id;
      state.editing.value = null;
      state.overview.value = false; // the klant just saved is shown
    });
    // A new profile's id is known only now: its sign-in error is named for it.
    await Promise.all([signInAndLoad().catch((e) => showError(e, saved.id)), refreshDashboard()]);
  }, draft.id);
}

export async function refreshHistory(): Promise<void> {
  state.history.value = await api.history(state.historyFilter.value);
}

export function refreshEnvironment(): Promise<void> {
  const id = state.selected.value;
  if (!id) return Promise.resolve();
  return guarded(async () => {
    const ok = await api.environment(id);
    state.environments.value = withEntry(state.environments.value, id, { ok });
  }, id);
}

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

/** What `profileId`'s api key allows, as learnt so far (an accepted backup says "allowed"). */
async function refreshPermissions(profileId: string): Promise<void> {
  const permissions = await api.permissions(profileId).catch(() => undefined);
  if (permissions) state.permissions.value = withEntry(state.permissions.value, profileId, permissions);
}

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

export function chooseSaveFolder(): Promise<void> {
  return guarded(async () => {
    state.settings.value = await api.chooseSaveFolder();
  });
}

export function askEachTime(): Promise<void> {
  return guarded(async () => {
    state.settings.value = await api.clearSaveFolder();
  });
}

export async function filterHistory(profileId: string | null): Promise<void> {
  state.historyFilter.value = profileId;
  await refreshHistory();
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

// ---- Plans ----------------------------------------------------------------------------------

/** The plan form's draft for profile `profile`, made from its plan when the form first shows. */
export function planDraft(profile: ProfileView): PlanDraft {
  const existing = state.planDraft.value;
  if (existing?.profileId === profile.id) return existing;
  const s = profile.plan?.schedule;
  const draft: PlanDraft = {
    profileId: profile.id,
    kind: s?.kind ?? "manual",
    at: s && "at" in s ? s.at : "02:00",
    day: s?.kind === "weekly" ? s.day : "monday",
    hours: s?.kind === "every" ? String(s.hours) : "6",
    paused: profile.plan?.paused ?? false,
    pingUrl: "",
    keep: keepDraft(profile.retention),
    wouldRemove: null,
    encryption: profile.encryption?.kind ?? "none",
    passphrase: "",
    recipient: profile.encryption?.kind === "recipient" ? profile.encryption.recipient : "",
  };
  state.planDraft.value = draft;
  return draft;
}

export function editPlan(profile: ProfileView, change: Partial<PlanDraft>): void {
  state.planDraft.value = { ...planDraft(profile), ...change };
}

/** The schedule the draft describes. */
export function scheduleOf(d: PlanDraft): Schedule {
  switch (d.kind) {
    case "manual":
      return { kind: "manual" };
    case "daily":
      return { kind: "daily", at: d.at };
    case "weekdays":
      return { kind: "weekdays", at: d.at };
    case "weekly":
      return { kind: "weekly", day: d.day, at: d.at };
    case "every":
      return { kind: "every", hours: Number(d.hours) };
  }
}

export function savePlan(profile: ProfileView): Promise<void> {
  const draft = planDraft(profile);
  return guarded(async () => replaceProfile(await api.setPlan(profile.id, { schedule: scheduleOf(draft), paused: draft.paused })), profile.id);
}

const keepParts: KeepPart[] = ["keep_last", "keep_daily", "keep_weekly", "keep_monthly"];

function keepDraft(rule: Retention | null): Record<KeepPart, string> {
  const draft = {} as Record<KeepPart, string>;
  for (const part of keepParts) draft[part] = rule?.[part] ? String(rule[part]) : "";
  return draft;
}

/** The rule the draft describes (empty, 0 or not a whole number: not by that part). */
export function ruleOf(keep: Record<KeepPart, string>): Retention {
  const rule: Retention = {};
  for (const part of keepParts) {
    const n = Number(keep[part]);
    if (Number.isInteger(n) && n > 0) rule[part] = n;
  }
  return rule;
}

/** Changes one count of the rule being typed; a preview shown for the old one goes. */
export function editKeep(profile: ProfileView, part: KeepPart, value: string): void {
  const d = planDraft(profile);
  editPlan(profile, { keep: { ...d.keep, [part]: value }, wouldRemove: null });
}

/** "Save rule": first asks Rust what the rule would remove now. Nothing: saved at once;
 * otherwise those backups are listed, and the rule is saved only once the user confirms
 * (`confirmRetention`). */
export function saveRetention(profile: ProfileView): Promise<void> {
  const rule = ruleOf(planDraft(profile).keep);
  return guarded(async () => {
    const everything = Object.keys(rule).length === 0;
    const wouldRemove = everything ? [] : await api.previewRetention(profile.id, rule);
    if (wouldRemove.length > 0) {
      editPlan(profile, { wouldRemove });
      return;
    }
    replaceProfile(await api.setRetention(profile.id, everything ? null : rule));
  }, profile.id);
}

/** The user saw what the rule removes, and saves it (or, `false`, keeps the old rule). */
export function confirmRetention(profile: ProfileView, save: boolean): Promise<void> {
  if (!save) {
    editPlan(profile, { wouldRemove: null });
    return Promise.resolve();
  }
  return guarded(async () => {
    replaceProfile(await api.setRetention(profile.id, ruleOf(planDraft(profile).keep)));
    editPlan(profile, { wouldRemove: null });
  }, profile.id);
}

/** Saves how the klant's backups are encrypted; the typed passphrase is sent once and then
 * forgotten here (an empty one keeps the saved passphrase). */
export function saveEncryption(profile: ProfileView): Promise<void> {
  const d = planDraft(profile);
  const input: EncryptionInput =
    d.encryption === "passphrase" ? { kind: "passphrase", passphrase: d.passphrase || null } : d.encryption === "recipient" ? { kind: "recipient", recipient: d.recipient.trim() } : { kind: "none" };
  return guarded(async () => {
    replaceProfile(await api.setEncryption(profile.id, input));
    editPlan(profile, { passphrase: "" });
  }, profile.id);
}

/** "Verify this klant's backups once a month" on or off. */
export function setVerifyMonthly(profile: ProfileView, on: boolean): Promise<void> {
  return guarded(async () => replaceProfile(await api.setVerifyMonthly(profile.id, on)), profile.id);
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

/** The report for auditors' period or format changed in its form. */
export function editReport(change: Partial<typeof state.reportDraft.value>): void {
  state.reportDraft.value = { ...state.reportDraft.value, ...change };
  state.reportExport.value = null;
}

/** "Export report…": the period's backups (of the klant the history shows, or all), saved
 * where the user chooses in the native save dialog; a cancelled dialog leaves no message. */
export async function exportReport(): Promise<void> {
  state.reportExport.value = "exporting";
  try {
    const exported = await api.exportReport({ ...state.reportDraft.value, profile: state.historyFilter.value });
    state.reportExport.value = exported;
  } catch (e) {
    state.reportExport.value = { error: asError(e) };
  }
}

/** Saves the typed ping URL as the klant's monitor (or removes it with `null`). */
export function saveMonitor(profile: ProfileView, remove = false): Promise<void> {
  const draft = planDraft(profile);
  return guarded(async () => {
    replaceProfile(await api.setMonitor(profile.id, remove ? null : draft.pingUrl.trim()));
    batch(() => {
      editPlan(profile, { pingUrl: "" });
      state.monitorTest.value = null;
    });
  }, profile.id);
}

/** "Send test": one test ping to the klant's monitor; the answer shows beside the button. */
export async function testMonitor(profile: ProfileView): Promise<void> {
  state.monitorTest.value = { profileId: profile.id, result: "testing" };
  try {
    await api.testMonitor(profile.id);
    state.monitorTest.value = { profileId: profile.id, result: "ok" };
  } catch (e) {
    state.monitorTest.value = { profileId: profile.id, result: { error: asError(e) } };
  }
}

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

/** "Cancel all", once confirmed: every running backup ends as cancelled, and Backup all's
 * klanten still waiting are not started. */
export async function cancelAll(): Promise<void> {
  if (!(await confirmed("cancelAllTitle", "cancelAllConfirm", "cancelAllYes"))) return;
  await guarded(async () => {
    await api.cancelAll();
  });
}

/** Settings → how many backups Backup all and the plans run at once. */
/** The speed form's draft: what is typed, else the saved limit. */
export function speedDraft(): SpeedDraft {
  const saved = state.settings.value.bandwidth;
  return (
    state.speedDraft.value ?? {
      mbPerSec: saved ? String(saved.mb_per_sec) : "",
      officeHours: saved?.office_hours != null,
      from: saved?.office_hours?.from ?? "08:00",
      to: saved?.office_hours?.to ?? "18:00",
    }
  );
}

export function editSpeed(change: Partial<SpeedDraft>): void {
  state.speedDraft.value = { ...speedDraft(), ...change };
}

/** Saves the typed limit (empty or 0: no limit); Rust checks it and says what is wrong. */
export function saveSpeed(): Promise<void> {
  const d = speedDraft();
  const mbPerSec = Number(d.mbPerSec.replace(",", "."));
  // Not a number: sent as one Rust refuses, so the message saying what to type is Rust's.
  const mb_per_sec = Number.isFinite(mbPerSec) ? mbPerSec : -1;
  const limit = d.mbPerSec.trim() === "" || mbPerSec === 0 ? null : { mb_per_sec, office_hours: d.officeHours ? { from: d.from, to: d.to } : undefined };
  return guarded(async () => {
    state.settings.value = await api.setBandwidth(limit);
    state.speedDraft.value = null;
  });
}

/** The free space minimum the CLI and the app use when none is set (download/room.rs). */
export const DEFAULT_MIN_FREE_MIB = 100;

/** Saves the typed minimum (empty: the default); only whole MiB can be typed. */
export function saveMinFree(): Promise<void> {
  const typed = (state.minFreeDraft.value ?? "").trim();
  const mib = typed === "" ? null : Number(typed);
  return guarded(async () => {
    state.settings.value = await api.setMinFree(mib);
    state.minFreeDraft.value = null;
  });
}

/** Whether `text` is a minimum that can be saved: empty (the default) or whole MiB. */
export function isMinFree(text: string): boolean {
  return /^\d{0,9}$/.test(text.trim());
}

export function setAtOnce(n: number): Promise<void> {
  return guarded(async () => {
    state.settings.value = await api.setUnattendedAtOnce(n);
  });
}

/** Settings → desktop notifications on or off. */
export function setNotifyDesktop(on: boolean): Promise<void> {
  return guarded(async () => {
    state.settings.value = await api.setNotifyDesktop(on);
  });
}

/** "Pause plans" / "Resume plans" for every klant at once. The tray's own action, so its
 * check mark follows; the klanten's plans and the dashboard are read again. */
export function setPlansPaused(paused: boolean): Promise<void> {
  return guarded(async () => {
    await api.trayAction(paused ? "pause_plans" : "resume_plans");
    await refreshSettings();
  });
}

/** The settings and profiles again (the tray may have paused or resumed the plans). */
export async function refreshSettings(): Promise<void> {
  const [settings, profiles] = await Promise.all([api.settings(), api.profiles()]);
  batch(() => {
    state.settings.value = settings;
    state.profiles.value = state.profiles.value.map((p) => profiles.find((q) => q.id === p.id) ?? p);
  });
  await refreshDashboard();
}

/** Settings → saves the typed file name template (the Rust side checks it and says why
 * not); the field then shows the saved one. */
export function saveFileNameTemplate(): Promise<void> {
  return guarded(async () => {
    state.settings.value = await api.setFileNameTemplate(state.fileNameDraft.value ?? "");
    state.fileNameDraft.value = null;
  });
}

/** Settings → E-mail saved (checked by the Rust side, which says what is wrong); the form
 * then shows the saved settings. */
export function saveMail(): Promise<void> {
  const draft = state.mailDraft.value;
  if (!draft) return Promise.resolve();
  return guarded(async () => {
    state.settings.value = await api.setMail(mailInputOf(draft));
    state.mailDraft.value = null;
    state.mailTest.value = null;
  });
}

/** No more e-mail: the settings and the saved password removed. */
export function removeMail(): Promise<void> {
  return guarded(async () => {
    state.settings.value = await api.removeMail();
    state.mailDraft.value = null;
    state.mailTest.value = null;
  });
}

type TestShown = Signal<"testing" | "ok" | { error: UiError } | null>;

/** A "Send test": `shown` says it is under way, then that it went or why not. */
async function sendTest(shown: TestShown, send: () => Promise<void>): Promise<void> {
  shown.value = "testing";
  try {
    await send();
    shown.value = "ok";
  } catch (e) {
    shown.value = { error: asError(e) };
  }
}

/** "Send test": a mail now, through the saved settings; said whether it went. */
export function testMail(): Promise<void> {
  return sendTest(state.mailTest, api.testMail);
}

/** Settings → start Kluis at login (in the tray); shows what the OS now says. */
export function setStartAtLogin(on: boolean): Promise<void> {
  return guarded(async () => {
    state.startAtLogin.value = await api.setStartAtLogin(on);
  });
}

/** "Send test": a notification now; said whether it could be shown. */
export function testNotification(): Promise<void> {
  return sendTest(state.notificationTest, api.testNotification);
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

/** The profiles again (their next planned backups moved on). */
async function refreshProfiles(): Promise<void> {
  state.profiles.value = await api.profiles();
}

// ---- Settings → how the service reaches this computer ------------------------------------

/** The callback form's draft, made from the saved choice when the form first shows. */
export function callbackDraft(): CallbackDraft {
  const existing = state.callbackDraft.value;
  if (existing) return existing;
  const saved = state.settings.value.callback;
  const draft: CallbackDraft = {
    kind: saved.kind,
    url: saved.kind === "relay" ? saved.url : "",
    public_url: saved.kind === "direct" ? saved.public_url : "",
    listen: saved.kind === "direct" ? saved.listen : "127.0.0.1:8787",
    program: saved.kind === "tunnel" ? saved.program : "cloudflared",
    relaySecret: "",
  };
  state.callbackDraft.value = draft;
  return draft;
}

export function editCallback(change: Partial<CallbackDraft>): void {
  batch(() => {
    state.callbackDraft.value = { ...callbackDraft(), ...change };
    state.callbackSaved.value = false;
    if (change.kind) state.callbackTest.value = null;
  });
}

/** The choice the draft describes. */
export function choiceOf(d: CallbackDraft): CallbackChoice {
  switch (d.kind) {
    case "relay":
      return { kind: "relay", url: d.url };
    case "direct":
      return { kind: "direct", public_url: d.public_url, listen: d.listen };
    case "tunnel":
      return { kind: "tunnel", program: d.program };
    case "webhook_site":
      return { kind: "webhook_site" };
    case "loopback":
      return { kind: "loopback" };
  }
}

export function saveCallback(): Promise<void> {
  const draft = callbackDraft();
  const secret = draft.relaySecret;
  // The secret leaves the page's state as it is sent.
  state.callbackDraft.value = { ...draft, relaySecret: "" };
  return guarded(async () => {
    state.settings.value = await api.setCallback({ setting: choiceOf(draft), relay_secret: secret || null });
    batch(() => {
      state.callbackSaved.value = true;
      state.callbackTest.value = null;
    });
  });
}

/** cloudflared picked in a file dialog opened by Rust (the webview names no program). */
export function chooseTunnelProgram(): Promise<void> {
  return guarded(async () => {
    const settings = await api.chooseTunnelProgram();
    batch(() => {
      state.settings.value = settings;
      const saved = settings.callback;
      if (saved.kind === "tunnel") state.callbackDraft.value = { ...callbackDraft(), kind: "tunnel", program: saved.program };
      state.callbackSaved.value = saved.kind === "tunnel";
      state.callbackTest.value = null;
    });
  });
}

export async function testCallback(): Promise<void> {
  const id = state.selected.value;
  if (!id) return;
  state.callbackTest.value = "testing";
  try {
    state.callbackTest.value = { ok: await api.testCallback(id) };
  } catch (e) {
    state.callbackTest.value = { error: asError(e) };
  }
}
