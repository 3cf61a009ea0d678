// Settings → Updates: what Rust's Updates part says (the look, the download and its check,
// when it may install are all Rust's); here only the calls.
import { api } from "../api";
import type { UpdateView } from "../bindings";
import { state } from "../state";
import { guarded } from "./run";

/** The update view as Rust has it now (the daily look runs there on its own). */
export async function loadUpdate(): Promise<void> {
  state.update.value = await api.updateView();
}

function keep(call: () => Promise<UpdateView>): Promise<void> {
  return guarded(async () => {
    state.update.value = await call();
  });
}

export const lookForUpdate = () => keep(api.lookForUpdate);
/** On Windows the app ends as the setup starts; a refusal (a backup running) is shown. */
export const installUpdate = () => keep(api.installUpdate);
export const setInstallUpdates = (automatic: boolean) => keep(() => api.setInstallUpdates(automatic));
