// Start-up and a klant's session: the demo, choosing a klant, signing in and out, its environment.
import { batch } from "@preact/signals";
import { api, asError } from "../api";
import { state, withEntry, type EnvironmentView } from "../state";
import { guarded } from "./run";
import { loadMail, refreshDashboard } from "./refresh";
import { loadOffice } from "./office";
import { resumeBackups, watchPlanned } from "./backup";
import { loadUpdate } from "./updates";
import { tellLanguage } from "./settings";
import { language } from "../i18n";

export async function boot(): Promise<void> {
  const launch = await api.launchInfo();
  [state.settings.value] = await Promise.all([api.settings(), loadMail(), loadOffice()]);
  // The language this window speaks (the user's choice, or the OS's), for the tray's menu.
  if (state.settings.value.language !== language()) void tellLanguage(language());
  api.startAtLogin().then(
    (on) => (state.startAtLogin.value = on),
    () => (state.startAtLogin.value = null),
  );
  void resumeBackups();
  void watchPlanned();
  void loadUpdate().catch(() => {});
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
  leaveImport();
  state.overview.value = true;
  return refreshDashboard();
}

/** Settings, from the dashboard (its tabs are a klant's screen's). */
export function openSettings(): void {
  leaveImport();
  batch(() => {
    state.overview.value = false;
    state.tab.value = "settings";
  });
}

/** Going to a klant or the dashboard closes an import that is not running (its preview or
 * its result): a running one stays on screen until it has ended. */
function leaveImport(): void {
  const open = state.importing.value;
  if (open && !(open.run !== null && "outcomes" in open.run)) {
    state.importing.value = null;
    void api.closeImport().catch(() => undefined);
  }
}

/** *Try the demo* in Kluis itself: the demo app opens beside it, in a window and a folder of
 * its own, so that it touches nothing of this Kluis. */
export function openDemo(): Promise<void> {
  return guarded(async () => {
    await api.openDemo();
  });
}

export function startDemo(): Promise<void> {
  return guarded(async () => {
    const demo = await api.startDemo();
    // (The demo app's first start furnished its settings: its copy targets among them.)
    const [profiles, settings] = await Promise.all([api.profiles(), api.settings()]);
    batch(() => {
      state.settings.value = settings;
      state.demo.value = true;
      state.demoBaseUrl.value = demo.base_url;
      state.demoFolder.value = demo.folder;
      state.profiles.value = profiles;
      state.selected.value = demo.profiles[0]?.id ?? null;
      state.editing.value = null;
      state.overview.value = profiles.length > 1;
    });
    await Promise.all([signInAndLoad(), refreshDashboard()]);
  });
}

export function selectProfile(id: string): Promise<void> {
  leaveImport();
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

export async function signInAndLoad(): Promise<void> {
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
export function unload(id: string): void {
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

export function refreshEnvironment(): Promise<void> {
  const id = state.selected.value;
  if (!id) return Promise.resolve();
  return guarded(async () => {
    const ok = await api.environment(id);
    state.environments.value = withEntry(state.environments.value, id, { ok });
  }, id);
}
