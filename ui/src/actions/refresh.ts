// What is read again from Rust after something changed: the dashboard, the history, the profiles,
// a klant's permissions, the settings.
import { batch } from "@preact/signals";
import { api, asError } from "../api";
import { loadOffice } from "./office";
import type { ProfileView } from "../bindings";
import { keepUnchanged } from "../dashboard";
import { state, withEntry } from "../state";
import { showError } from "./run";

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

export async function refreshHistory(): Promise<void> {
  state.history.value = await api.history(state.historyFilter.value);
}

/** The profiles again (their next planned backups moved on). */
export async function refreshProfiles(): Promise<void> {
  state.profiles.value = await api.profiles();
}

/** What `profileId`'s api key allows, as learnt so far (an accepted backup says "allowed"). */
export async function refreshPermissions(profileId: string): Promise<void> {
  const permissions = await api.permissions(profileId).catch(() => undefined);
  if (permissions) state.permissions.value = withEntry(state.permissions.value, profileId, permissions);
}

export function replaceProfile(view: ProfileView): void {
  state.profiles.value = state.profiles.value.map((p) => (p.id === view.id ? view : p));
}

/** The e-mail settings as saved; when the settings file holds some that cannot be read, that
 * is said in Settings → E-mail (and the form offers to set them anew). */
export async function loadMail(): Promise<void> {
  try {
    const mail = await api.mail();
    batch(() => {
      state.mail.value = mail;
      state.mailProblem.value = null;
    });
  } catch (e) {
    batch(() => {
      state.mail.value = null;
      state.mailProblem.value = asError(e);
    });
  }
}

/** The settings, e-mail and profiles again (the tray may have paused or resumed the plans,
 * `kluis mail set` changed the e-mail). */
export async function refreshSettings(): Promise<void> {
  const [settings, profiles] = await Promise.all([api.settings(), api.profiles(), loadMail(), loadOffice()]);
  batch(() => {
    state.settings.value = settings;
    state.profiles.value = state.profiles.value.map((p) => profiles.find((q) => q.id === p.id) ?? p);
  });
  await refreshDashboard();
}
