// A klant's plan form: its schedule, retention rule, encryption, monthly verification and monitor.
import { batch } from "@preact/signals";
import { api, asError } from "../api";
import type { EncryptionInput, ProfileView, Retention, Schedule } from "../bindings";
import { state, type KeepPart, type PlanDraft } from "../state";
import { guarded } from "./run";
import { replaceProfile } from "./refresh";

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

/** *Its own folder…*: Rust's folder dialog picks the klant's folder (unchanged when cancelled). */
export function chooseKlantFolder(profile: ProfileView): Promise<void> {
  return guarded(async () => replaceProfile(await api.chooseKlantFolder(profile.id)), profile.id);
}

/** Back to a folder of its own under the office's save folder. */
export function clearKlantFolder(profile: ProfileView): Promise<void> {
  return guarded(async () => replaceProfile(await api.clearKlantFolder(profile.id)), profile.id);
}

/** The schedule the draft describes. */
export function scheduleOf(d: Pick<PlanDraft, "kind" | "at" | "day" | "hours">): Schedule {
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

export function keepDraft(rule: Retention | null): Record<KeepPart, string> {
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

export function setRestoreTestMonthly(profile: ProfileView, on: boolean): Promise<void> {
  return guarded(async () => replaceProfile(await api.setRestoreTestMonthly(profile.id, on)), profile.id);
}

/** Whether `profile`'s backups go to copy target `targetId` (every target, unless it chose). */
export function copiesTo(profile: ProfileView, targetId: string): boolean {
  return profile.copy_to === null || profile.copy_to.includes(targetId);
}

/** Ticks or unticks copy target `targetId` for `profile`; every target ticked is "every one"
 * (so a target added later gets its backups too). */
export function setCopyTo(profile: ProfileView, targetId: string, on: boolean): Promise<void> {
  const all = state.settings.value.copy_targets.map((t) => t.id);
  const chosen = all.filter((id) => (id === targetId ? on : copiesTo(profile, id)));
  const targetIds = chosen.length === all.length ? null : chosen;
  return guarded(async () => replaceProfile(await api.setCopyTo(profile.id, targetIds)), profile.id);
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
