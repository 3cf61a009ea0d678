// Settings → Office and the dashboard's Office: this PC in an office of several PCs (the
// office hub), joined or left, and the office view.
import { batch } from "@preact/signals";
import { api, asError } from "../api";
import { state } from "../state";
import { confirmed, guarded } from "./run";

/** The office this PC joined (the CLI's `kluis office join` shows here too). */
export async function loadOffice(): Promise<void> {
  state.office.value = await api.officeMembership();
}

/** Joins the office the form names; the keys leave the form once sent. The office key, when
 * this PC made it, is shown once. */
export function joinOffice(): Promise<void> {
  const draft = state.officeDraft.value;
  return guarded(async () => {
    const code = draft.code.trim() || null;
    let joined;
    try {
      joined = await api.joinOffice({ code, hub: draft.hub.trim(), pc: draft.pc.trim(), pc_key: draft.pcKey, office_key: draft.officeKey.trim() || null, own_ca: draft.ownCa });
    } finally {
      // The keys typed leave the form whatever came of them (the address and name stay).
      state.officeDraft.value = { ...state.officeDraft.value, code: "", pcKey: "", officeKey: "" };
    }
    if (joined === null) return; // the CA's dialog was cancelled: nothing joined
    batch(() => {
      state.office.value = joined.membership;
      state.officeMadeKey.value = joined.made_key;
      state.officeDraft.value = { code: "", hub: "", pc: "", pcKey: "", officeKey: "", ownCa: false };
    });
  });
}

/** Leaves the office, once confirmed: this PC's key revoked at the hub, its plans alone
 * again; coming back takes a new join code. */
export async function leaveOffice(): Promise<void> {
  if (!(await confirmed("officeLeaveTitle", "officeLeaveText", "officeLeave"))) return;
  return guarded(async () => {
    const note = await api.leaveOffice();
    batch(() => {
      state.office.value = null;
      state.officeMadeKey.value = null;
      state.officeInvite.value = null;
      state.officeView.value = null;
      state.officeLeftNote.value = note;
    });
  });
}

/** Add a PC: a join code for the office's next PC, shown once. */
export function inviteOfficePc(): Promise<void> {
  const name = state.officeInviteName.value.trim();
  return guarded(async () => {
    const invite = await api.inviteOfficePc(name);
    batch(() => {
      state.officeInvite.value = invite;
      state.officeInviteName.value = "";
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
