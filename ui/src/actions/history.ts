// The history tab: its filter and the report for auditors.
import { api, asError } from "../api";
import { state } from "../state";
import { refreshHistory } from "./refresh";

export async function filterHistory(profileId: string | null): Promise<void> {
  state.historyFilter.value = profileId;
  await refreshHistory();
}

/** The report for auditors' period or format changed in its form. */
export function editReport(change: Partial<typeof state.reportDraft.value>): void {
  state.reportDraft.value = { ...state.reportDraft.value, ...change };
  state.reportExport.value = null;
}

/** "Export report…": the period's backups (of the klant the history shows, or all), saved
 * where the user chooses in the native save dialog; a cancelled dialog leaves no message. */
export async function exportReport(): Promise<void> {
  state.reportExport.value = "exporting";
  try {
    const exported = await api.exportReport({ ...state.reportDraft.value, profile: state.historyFilter.value });
    state.reportExport.value = exported;
  } catch (e) {
    state.reportExport.value = { error: asError(e) };
  }
}
