// Settings: the save folder, download speed, free space, backups at once, notifications, the file
// name template, start at login, the copy targets.
import { api, asError } from "../api";
import type { KitMade, Language } from "../bindings";
import { bucketInputOf, sftpInputOf, state, type SpeedDraft } from "../state";
import { keepDraft, ruleOf } from "./plan";
import { guarded, sendTest } from "./run";

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

/** Tells the Rust side the window's language, so that the tray's menu speaks it too. Not a
 * thing to bother the user with when it fails: the window speaks it either way. */
export function tellLanguage(language: Language): Promise<void> {
  return api.setLanguage(language).then(
    (settings) => void (state.settings.value = settings),
    () => {},
  );
}

/** Settings → desktop notifications on or off. */
export function setNotifyDesktop(on: boolean): Promise<void> {
  return guarded(async () => {
    state.settings.value = await api.setNotifyDesktop(on);
  });
}

/** Settings → saves the typed file name template (the Rust side checks it and says why
 * not); the field then shows the saved one. */
export function saveFileNameTemplate(): Promise<void> {
  return guarded(async () => {
    state.settings.value = await api.setFileNameTemplate(state.fileNameDraft.value ?? "");
    state.fileNameDraft.value = null;
  });
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

/** "Add a folder…": Rust opens the folder dialog; the folder becomes a copy target with the
 * typed name once a test file could be written there. */
export function addCopyFolder(): Promise<void> {
  return guarded(async () => {
    state.settings.value = await api.addCopyFolder(state.copyTargetName.value);
    state.copyTargetName.value = "";
  });
}

/** "Add a bucket": the form's bucket becomes a copy target once a test object could be
 * written; the secret key typed is forgotten here either way (the keyring keeps it). */
export function addCopyBucket(): Promise<void> {
  const draft = state.bucketDraft.value;
  if (!draft) return Promise.resolve();
  return guarded(async () => {
    state.settings.value = await api.addCopyBucket(bucketInputOf(state.copyTargetName.value, draft));
    state.bucketDraft.value = null;
    state.copyTargetName.value = "";
  });
}

/** "Connect": the key the SFTP server shows, for the office to compare before trusting it. */
export function connectSftp(): Promise<void> {
  const draft = state.sftpDraft.value;
  if (!draft) return Promise.resolve();
  return guarded(async () => {
    const shown = await api.sftpHostKey({ host: draft.host, port: Number(draft.port) || 0 });
    if (state.sftpDraft.value) state.sftpDraft.value = { ...state.sftpDraft.value, shown };
  });
}

/** "Trust and add": the server's folder becomes a copy target once a test file could be
 * written there, on a server showing the key trusted; the secret typed is forgotten here. */
export function addCopySftp(): Promise<void> {
  const draft = state.sftpDraft.value;
  if (!draft?.shown) return Promise.resolve();
  const connected = { ...draft, shown: draft.shown };
  return guarded(async () => {
    state.settings.value = await api.addCopySftp(sftpInputOf(state.copyTargetName.value, connected));
    state.sftpDraft.value = null;
    state.copyTargetName.value = "";
  });
}

/** Opens (or, open, closes) copy target `targetId`'s rule form with its saved rule. */
export function toggleTargetRule(targetId: string): void {
  const open = state.targetRule.value?.targetId === targetId;
  const target = state.settings.value.copy_targets.find((t) => t.id === targetId);
  state.targetRule.value = open || !target ? null : { targetId, keep: keepDraft(target.keep ?? null) };
}

/** "Save rule" of a copy target: kept from its next copy on (every copy: no rule). */
export function saveTargetRule(): Promise<void> {
  const draft = state.targetRule.value;
  if (!draft) return Promise.resolve();
  const rule = ruleOf(draft.keep);
  return guarded(async () => {
    state.settings.value = await api.setCopyTargetRule(draft.targetId, Object.keys(rule).length === 0 ? null : rule);
    state.targetRule.value = null;
  });
}

/** "Test" of copy target `targetId`: the answer shows beside it. */
export async function testCopyTarget(targetId: string): Promise<void> {
  state.copyTest.value = { targetId, result: "testing" };
  try {
    await api.testCopyTarget(targetId);
    state.copyTest.value = { targetId, result: "ok" };
  } catch (e) {
    state.copyTest.value = { targetId, result: { error: asError(e) } };
  }
}

/** "Remove": no more copies go there (those already there stay). */
export function removeCopyTarget(targetId: string): Promise<void> {
  return guarded(async () => {
    state.settings.value = await api.removeCopyTarget(targetId);
  });
}

/** "Make the recovery kit…": Rust asks where to save its page, makes the kit and writes the
 * catalogs; the settings then show the new kit. */
/** Make the recovery kit…: `withTargetSecrets` puts the copy targets' own secrets on its page. */
export async function makeRecoveryKit(withTargetSecrets: boolean): Promise<void> {
  await keepKit(() => api.makeRecoveryKit(withTargetSecrets), false);
}

/** Use the office's kit…: this computer writes its catalogs for the kit made on another of the
 * office's computers (Rust reads its key from the file its dialog picks). */
export async function joinRecoveryKit(): Promise<void> {
  await keepKit(api.joinRecoveryKit, true);
}

async function keepKit(keep: () => Promise<KitMade | null>, joined: boolean): Promise<void> {
  state.recoveryKit.value = "making";
  try {
    const made = await keep();
    state.recoveryKit.value = made && { ...made, joined };
    if (made) state.settings.value = await api.settings();
  } catch (e) {
    state.recoveryKit.value = { error: asError(e) };
  }
}
