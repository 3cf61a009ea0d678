// Edit many at once (the dashboard): the klanten picked (checkboxes, shift-click for a run,
// "all shown"), one change for all of them drafted, previewed — now and after, per klant, and
// what a new rule would remove now — and applied in Rust, which checks the change whole before
// it touches the first klant.
import { batch } from "@preact/signals";
import { api, asError } from "../api";
import type { EncryptionInput, ManyChange } from "../bindings";
import { state, type ManyDraft } from "../state";
import { confirmed } from "./run";
import { refreshDashboard, refreshProfiles } from "./refresh";
import { ruleOf, scheduleOf } from "./plan";

/** The rows in the dashboard's order, as last drawn (a shift-click picks the run between). */
let order: string[] = [];
export function setOrder(ids: string[]): void {
  order = ids;
}

/** Picks (or unpicks) klant `id`; with shift, every klant from the last one clicked to it. */
export function pick(id: string, on: boolean, shift: boolean): void {
  const next = new Set(state.picked.value);
  const from = shift && state.pickedAnchor.value !== null ? order.indexOf(state.pickedAnchor.value) : -1;
  const to = order.indexOf(id);
  const run = from >= 0 && to >= 0 ? order.slice(Math.min(from, to), Math.max(from, to) + 1) : [id];
  for (const one of run) {
    if (on) next.add(one);
    else next.delete(one);
  }
  batch(() => {
    state.picked.value = next;
    state.pickedAnchor.value = id;
  });
}

/** "All shown": every klant the table shows picked, or (all were) none. */
export function pickAll(ids: string[]): void {
  const all = ids.length > 0 && ids.every((id) => state.picked.value.has(id));
  state.picked.value = all ? new Set() : new Set(ids);
}

export function clearPicked(): void {
  batch(() => {
    state.picked.value = new Set();
    state.many.value = null;
  });
}

/** An empty change: nothing ticked. */
export function newManyDraft(): ManyDraft {
  return {
    planOn: false,
    plan: { kind: "daily", at: "02:00", day: "monday", hours: "6", paused: false },
    keepOn: false,
    keep: { keep_last: "", keep_daily: "", keep_weekly: "", keep_monthly: "" },
    copyOn: false,
    copyTo: null,
    folderOn: false,
    folder: "choose",
    encryptOn: false,
    encryption: "none",
    passphrase: "",
    recipient: "",
    addTag: "",
    removeTag: "",
    preview: null,
    result: null,
  };
}

export function openMany(): void {
  state.many.value = newManyDraft();
}

/** A change to the draft; a preview shown for the old one goes. */
export function editMany(change: Partial<ManyDraft>): void {
  const d = state.many.value;
  if (d) state.many.value = { ...d, ...change, preview: null, result: null };
}

/** What the draft asks Rust to set. */
export function manyChangeOf(d: ManyDraft): ManyChange {
  const encryption: EncryptionInput | null = !d.encryptOn
    ? null
    : d.encryption === "passphrase"
      ? { kind: "passphrase", passphrase: d.passphrase }
      : d.encryption === "recipient"
        ? { kind: "recipient", recipient: d.recipient }
        : { kind: "none" };
  const rule = ruleOf(d.keep);
  return {
    plan: d.planOn ? { schedule: scheduleOf(d.plan), paused: d.plan.paused } : null,
    retention: d.keepOn ? { rule: Object.keys(rule).length === 0 ? null : rule } : null,
    encryption,
    copy_to: d.copyOn ? { targets: d.copyTo } : null,
    save_folder: d.folderOn ? d.folder : null,
    add_tags: d.addTag.trim() ? [d.addTag.trim()] : [],
    remove_tags: d.removeTag ? [d.removeTag] : [],
  };
}

/** The picked klanten, in the dashboard's order. */
export function pickedIds(): string[] {
  const picked = state.picked.value;
  const inOrder = order.filter((id) => picked.has(id));
  return [...inOrder, ...[...picked].filter((id) => !inOrder.includes(id))];
}

/** "Preview": what Rust adds (backups a new rule would remove now); the page shows the rest. */
export async function previewMany(): Promise<void> {
  const d = state.many.value;
  if (!d) return;
  try {
    const preview = await api.previewMany(pickedIds(), manyChangeOf(d));
    if (state.many.value) state.many.value = { ...state.many.value, preview };
  } catch (e) {
    if (state.many.value) state.many.value = { ...state.many.value, result: { error: asError(e) } };
  }
}

/** "Apply": asked first when the new rule removes backups at the next save; then set for
 * every picked klant, the passphrase forgotten here. */
export async function applyMany(): Promise<void> {
  const d = state.many.value;
  if (!d?.preview) return;
  if (d.preview.some((p) => p.would_remove > 0) && !(await confirmed("manyRemovesTitle", "manyRemovesConfirm", "manyApplyYes"))) return;
  const ids = pickedIds();
  state.many.value = { ...d, result: "applying" };
  try {
    const changed = await api.editMany(ids, manyChangeOf(d));
    // None changed: the folder dialog was cancelled; the draft stays as it was.
    state.many.value = changed.length === 0 ? { ...d, result: { done: 0 } } : { ...newManyDraft(), result: { done: changed.length } };
  } catch (e) {
    if (state.many.value) state.many.value = { ...state.many.value, passphrase: "", result: { error: asError(e) } };
  }
  await Promise.all([refreshProfiles(), refreshDashboard()]);
}
