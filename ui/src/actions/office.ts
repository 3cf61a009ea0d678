// Settings → Office and the dashboard's Office: this PC in an office of several PCs (the
// office hub), joined or left, and the office view.
import { batch } from "@preact/signals";
import { api, asError } from "../api";
import { state } from "../state";
import { guarded } from "./run";

/** The office this PC joined (the CLI's `kluis office join` shows here too). */
export async function loadOffice(): Promise<void> {
  state.office.value = await api.officeMembership();
}

/** Joins the office the form names; the keys leave the form once sent. The office key, when
 * this PC made it, is shown once. */
export function joinOffice(): Promise<void> {
  const draft = state.officeDraft.value;
  return guarded(async () => {
    const joined = await api.joinOffice({ hub: draft.hub.trim(), pc: draft.pc.trim(), pc_key: draft.pcKey, office_key: draft.officeKey.trim() || null, own_ca: draft.ownCa });
    if (joined === null) return; // the CA's dialog was cancelled: nothing joined
    batch(() => {
      state.office.value = joined.membership;
      state.officeMadeKey.value = joined.made_key;
      state.officeDraft.value = { hub: "", pc: "", pcKey: "", officeKey: "", ownCa: false };
    });
  });
}

/** Leaves the office: this PC's plans run alone again. */
export function leaveOffice(): Promise<void> {
  return guarded(async () => {
    await api.leaveOffice();
    batch(() => {
      state.office.value = null;
      state.officeMadeKey.value = null;
      state.officeView.value = null;
    });
  });
}

/** The dashboard's Office opened (or read again): every klant of every PC. */
export async function showOfficeView(): Promise<void> {
  state.officeView.value = "loading";
  try {
    state.officeView.value = await api.officeView();
  } catch (e) {
    state.officeView.value = { error: asError(e) };
  }
}
