// Import klanten… and Export klanten…: the file is picked and read in Rust (no path or
// password reaches the page); the page shows the preview, sends the columns, address and api
// key chosen, starts the import and follows each row as it ends.
import { api, asError } from "../api";
import type { Field, ImportPreview, RowOutcome } from "../bindings";
import { state } from "../state";
import { guarded } from "./run";
import { refreshDashboard, refreshProfiles } from "./refresh";
import { showOverview } from "./session";

/** Import klanten…: the file chosen in Rust's dialog, previewed (nothing when cancelled). */
export function openImport(): Promise<void> {
  return guarded(async () => {
    const preview = await api.openImport();
    if (!preview) return;
    state.editing.value = null;
    state.importing.value = { preview, baseUrl: preview.base_url ?? "", apiKey: "", run: null };
  });
}

/** A new preview from Rust, what was typed kept. */
function previewed(preview: ImportPreview): void {
  const open = state.importing.value;
  if (open) state.importing.value = { ...open, preview };
}

/** `field` read from column `column` (null: not imported). */
export function setColumn(field: Field, column: number | null): Promise<void> {
  return guarded(async () => previewed(await api.importColumn(field, column)));
}

export function typeDefaults(change: { baseUrl?: string; apiKey?: string }): void {
  const open = state.importing.value;
  if (open) state.importing.value = { ...open, ...change };
}

/** The address and api key typed, sent for the rows without one (the key then forgotten here). */
export function applyDefaults(): Promise<void> {
  const open = state.importing.value;
  if (!open) return Promise.resolve();
  return guarded(async () => {
    const preview = await api.importDefaults({ base_url: open.baseUrl, api_key: open.apiKey === "" ? null : open.apiKey });
    const now = state.importing.value;
    if (now) state.importing.value = { ...now, preview, apiKey: "" };
  });
}

/** Passwords from a password manager's export (picked in Rust's dialog). */
export function chooseVault(): Promise<void> {
  return guarded(async () => previewed(await api.importVault()));
}

/** Import: each row's outcome shown as it ends; the klanten read again at the end. */
export async function runImport(): Promise<void> {
  const open = state.importing.value;
  if (!open) return;
  const outcomes: (RowOutcome | null)[] = open.preview.rows.map(() => null);
  state.importing.value = { ...open, run: { outcomes, cancelling: false } };
  try {
    const result = await api.runImport(({ index, outcome }) => {
      const now = state.importing.value;
      if (!now?.run || !("outcomes" in now.run)) return;
      const next = [...now.run.outcomes];
      next[index] = outcome;
      state.importing.value = { ...now, run: { ...now.run, outcomes: next } };
    });
    const now = state.importing.value;
    if (now) state.importing.value = { ...now, run: { result } };
  } catch (e) {
    const now = state.importing.value;
    if (now) state.importing.value = { ...now, run: { error: asError(e) } };
  }
  await Promise.all([refreshProfiles(), refreshDashboard()]);
}

/** Cancel: the klanten signing in finish, the rest are not tried. */
export async function cancelImport(): Promise<void> {
  const now = state.importing.value;
  if (now?.run && "outcomes" in now.run) state.importing.value = { ...now, run: { ...now.run, cancelling: true } };
  await api.cancelImport();
}

/** Closes the import: Rust forgets the file's table and passwords. After an import that
 * added klanten, the dashboard shows them all. */
export async function closeImport(): Promise<void> {
  const run = state.importing.value?.run;
  const added = run && "result" in run && run.result.outcomes.some((o) => o.outcome === "added");
  state.importing.value = null;
  await api.closeImport();
  if (added && state.profiles.value.length > 1) await showOverview();
}

/** Export klanten…: the list where Rust's save dialog says. */
export async function exportKlanten(): Promise<void> {
  try {
    const path = await api.exportKlanten();
    state.exported.value = path === null ? null : { path };
  } catch (e) {
    state.exported.value = { error: asError(e) };
  }
}
