// The profile form: a klant added, edited, its CA trusted, or forgotten.
import { batch } from "@preact/signals";
import { api } from "../api";
import type { ProfileView } from "../bindings";
import { state, type ProfileDraft } from "../state";
import { guarded, confirmed, showError } from "./run";
import { refreshDashboard, replaceProfile } from "./refresh";
import { signInAndLoad, unload } from "./session";

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
    tags: existing?.tags.join(", ") ?? "",
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
      tags: draft.tags.split(",").map((t) => t.trim()).filter(Boolean),
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
