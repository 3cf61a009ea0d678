// How an action runs: its errors shown (for one klant or for all), a question asked first, a
// test's answer shown.
import { batch, type Signal } from "@preact/signals";
import { asError, type UiError } from "../api";
import type { Key } from "../i18n";
import { state } from "../state";

/** Runs `work`, showing its error — as klant `profileId`'s when it is about one klant. */
export async function guarded(work: () => Promise<void>, profileId: string | null = null): Promise<void> {
  batch(() => {
    state.error.value = null;
    state.busy.value = true;
  });
  try {
    await work();
  } catch (e) {
    showError(e, profileId);
  } finally {
    state.busy.value = false;
  }
}

/** Asks `text` in the confirmation dialog; true when the user said `yes`. */
export function confirmed(title: Key, text: Key, yes: Key): Promise<boolean> {
  return new Promise((resolve) => {
    state.confirming.peek()?.resolve(false); // one question at a time
    state.confirming.value = { title, text, yes, resolve };
  });
}

export function showError(e: unknown, profileId: string | null): void {
  state.error.value = { error: asError(e), profileId };
}

type TestShown = Signal<"testing" | "ok" | { error: UiError } | null>;

/** A "Send test": `shown` says it is under way, then that it went or why not. */
export async function sendTest(shown: TestShown, send: () => Promise<void>): Promise<void> {
  shown.value = "testing";
  try {
    await send();
    shown.value = "ok";
  } catch (e) {
    shown.value = { error: asError(e) };
  }
}
