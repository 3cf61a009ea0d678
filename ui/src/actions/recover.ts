// Restore from a copy…: the copy target's backups found with the recovery kit's key, one
// restored into a folder Rust's dialog picks, or this computer carrying on for the lost one.
// The key typed or pasted is read from its field when sent and the field is emptied: it is
// never kept in the state (Rust keeps it while the screen is open, and forgets it on Close).
import { api, asError } from "../api";
import { state, type Recovering } from "../state";
import { refreshDashboard, refreshProfiles } from "./refresh";
import { t } from "../i18n";
import { confirmed } from "./run";

const KEY_FIELD = "recover-key";

export function openRecovery(): void {
  const targets = state.settings.value.copy_targets;
  state.recovering.value = { targetId: targets[0]?.id ?? null, looking: false, found: null, error: null, klant: null, restore: null, carried: null };
}

/** Close: Rust forgets the key; klanten carried on for are on the dashboard. */
export function closeRecovery(): void {
  if (restoring()) cancelRestoreFound(); // (nothing runs on out of sight)
  state.recovering.value = null;
  void api.closeRecovery().catch(() => undefined);
  if (state.profiles.value.length > 0) {
    state.overview.value = true;
    void refreshDashboard();
  }
}

function update(change: Partial<Recovering>): void {
  const open = state.recovering.value;
  if (open) state.recovering.value = { ...open, ...change };
}

/** The copy target looked at: the one chosen, else the first (one added here is then chosen). */
export function targetOf(open: Recovering): string | null {
  const targets = state.settings.value.copy_targets;
  return targets.some((t) => t.id === open.targetId) ? open.targetId : (targets[0]?.id ?? null);
}

/** Whether a restore runs (Look for backups, Carry on and another restore wait for it). */
export function restoring(): boolean {
  const restore = state.recovering.value?.restore;
  return restore != null && "progress" in restore;
}

export function chooseTarget(targetId: string): void {
  update({ targetId, found: null, error: null, klant: null, restore: null, carried: null });
}

export function chooseKlant(klant: string | null): void {
  update({ klant });
}

/** Look for backups: with the key typed or pasted (`fromFile` false), or read by Rust from the
 * kit's file picked in its dialog. */
export async function findCopies(fromFile: boolean): Promise<void> {
  const open = state.recovering.value;
  const targetId = open && targetOf(open);
  if (!open || !targetId || restoring()) return;
  const field = document.getElementById(KEY_FIELD) as HTMLTextAreaElement | null;
  const pasted = fromFile ? null : (field?.value.trim() ?? "");
  if (pasted === "") {
    update({ error: { code: "config", message: t("recoverKeyFirst") } });
    field?.focus();
    return;
  }
  update({ targetId, looking: true, error: null, restore: null, carried: null });
  try {
    const found = await api.findCopies(targetId, pasted);
    // Emptied once the key opened something (a mistyped one stays, to be corrected).
    if (field && found && !found.other_kit) field.value = "";
    update(found ? { looking: false, found, klant: null } : { looking: false });
  } catch (e) {
    update({ looking: false, error: asError(e) });
  }
}

/** Restore… of the backup at `location` into a folder Rust's dialog asks for. */
export async function restoreFound(location: string): Promise<void> {
  update({ restore: { location, progress: null } });
  try {
    const done = await api.restoreFound(location, (progress) => {
      const now = state.recovering.value?.restore;
      if (now && "progress" in now && now.location === location) update({ restore: { location, progress } });
    });
    update({ restore: done ? { location, done } : null });
  } catch (e) {
    update({ restore: { location, error: asError(e) } });
  }
}

export function cancelRestoreFound(): void {
  void api.cancelRestoreFound().catch(() => undefined);
}

/** Carry on for this office (asked first): the klanten and copies of the lost computer whose id is `computer`;
 * `replaceKit`: this computer's own kit gives way to the one given. */
export async function carryOn(computer: string, replaceKit: boolean): Promise<void> {
  if (restoring() || !(await confirmed("carryOnTitle", "carryOnConfirm", "carryOn"))) return;
  update({ carried: "carrying" });
  try {
    const carried = await api.carryOn(computer, replaceKit);
    update({ carried });
    state.settings.value = await api.settings();
    await refreshProfiles();
  } catch (e) {
    update({ carried: { error: asError(e) } });
  }
}
