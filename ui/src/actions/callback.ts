// Settings → how the service reaches this computer.
import { batch } from "@preact/signals";
import { api, asError } from "../api";
import type { CallbackChoice } from "../bindings";
import { state, type CallbackDraft } from "../state";
import { guarded } from "./run";

/** The callback form's draft, made from the saved choice when the form first shows. */
export function callbackDraft(): CallbackDraft {
  const existing = state.callbackDraft.value;
  if (existing) return existing;
  const saved = state.settings.value.callback;
  const draft: CallbackDraft = {
    kind: saved.kind,
    url: saved.kind === "relay" ? saved.url : "",
    public_url: saved.kind === "direct" ? saved.public_url : "",
    listen: saved.kind === "direct" ? saved.listen : "127.0.0.1:8787",
    program: saved.kind === "tunnel" ? saved.program : "cloudflared",
    relaySecret: "",
  };
  state.callbackDraft.value = draft;
  return draft;
}

export function editCallback(change: Partial<CallbackDraft>): void {
  batch(() => {
    state.callbackDraft.value = { ...callbackDraft(), ...change };
    state.callbackSaved.value = false;
    if (change.kind) state.callbackTest.value = null;
  });
}

/** The choice the draft describes. */
export function choiceOf(d: CallbackDraft): CallbackChoice {
  switch (d.kind) {
    case "relay":
      return { kind: "relay", url: d.url };
    case "direct":
      return { kind: "direct", public_url: d.public_url, listen: d.listen };
    case "tunnel":
      return { kind: "tunnel", program: d.program };
    case "webhook_site":
      return { kind: "webhook_site" };
    case "loopback":
      return { kind: "loopback" };
  }
}

export function saveCallback(): Promise<void> {
  const draft = callbackDraft();
  const secret = draft.relaySecret;
  // The secret leaves the page's state as it is sent.
  state.callbackDraft.value = { ...draft, relaySecret: "" };
  return guarded(async () => {
    state.settings.value = await api.setCallback({ setting: choiceOf(draft), relay_secret: secret || null });
    batch(() => {
      state.callbackSaved.value = true;
      state.callbackTest.value = null;
    });
  });
}

/** cloudflared picked in a file dialog opened by Rust (the webview names no program). */
export function chooseTunnelProgram(): Promise<void> {
  return guarded(async () => {
    const settings = await api.chooseTunnelProgram();
    batch(() => {
      state.settings.value = settings;
      const saved = settings.callback;
      if (saved.kind === "tunnel") state.callbackDraft.value = { ...callbackDraft(), kind: "tunnel", program: saved.program };
      state.callbackSaved.value = saved.kind === "tunnel";
      state.callbackTest.value = null;
    });
  });
}

export async function testCallback(): Promise<void> {
  const id = state.selected.value;
  if (!id) return;
  state.callbackTest.value = "testing";
  try {
    state.callbackTest.value = { ok: await api.testCallback(id) };
  } catch (e) {
    state.callbackTest.value = { error: asError(e) };
  }
}
