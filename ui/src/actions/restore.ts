// History → a backup: its Contents (searched), Restore… of an entry, a folder or everything
// (the folder is picked in Rust's dialog), and Test restore.
import { api, asError } from "../api";
import { state } from "../state";

/** Opens the Contents panel of backup `historyId` and reads its entries — from its copy on
 * copy target `from` when one is given; the copies it can read instead are listed too. */
export async function openContents(historyId: string, from: string | null = null): Promise<void> {
  const copies = state.contents.value?.historyId === historyId ? state.contents.value.copies : [];
  state.contents.value = { historyId, copies, from, entries: null, search: "", restore: null };
  const current = () => state.contents.value?.historyId === historyId && state.contents.value.from === from;
  api.backupCopies(historyId).then(
    (copies) => {
      if (state.contents.value?.historyId === historyId) state.contents.value = { ...state.contents.value, copies };
    },
    () => {},
  );
  try {
    const entries = await api.backupContents(historyId, from);
    if (current()) state.contents.value = { ...state.contents.value!, entries };
  } catch (e) {
    if (current()) state.contents.value = { ...state.contents.value!, entries: [], restore: { error: asError(e) } };
  }
}

export function closeContents(): void {
  state.contents.value = null;
}

export function searchContents(search: string): void {
  if (state.contents.value) state.contents.value = { ...state.contents.value, search };
}

/** Restore… of the entries at or under `only` (none: everything), with its progress. */
export async function restoreEntries(only: string[]): Promise<void> {
  const open = state.contents.value;
  if (!open) return;
  const update = (restore: NonNullable<typeof state.contents.value>["restore"]) => {
    if (state.contents.value?.historyId === open.historyId) state.contents.value = { ...state.contents.value, restore };
  };
  update({ progress: { done: 0, total: 0 } });
  try {
    const done = await api.restoreBackup(open.historyId, open.from, only, (progress) => update({ progress }));
    update(done ? { done } : null);
  } catch (e) {
    update({ error: asError(e) });
  }
}

/** Test restore of backup `historyId`: its recorded result. */
export async function testRestore(historyId: string): Promise<void> {
  state.restoreTest.value = { historyId, result: "testing" };
  try {
    const result = await api.testRestore(historyId);
    state.restoreTest.value = { historyId, result };
  } catch (e) {
    state.restoreTest.value = { historyId, result: { error: asError(e) } };
  }
}
