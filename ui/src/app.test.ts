// The whole UI in jsdom, with the Rust side replaced by Tauri's mockIPC.
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AppJobEvent, ProfileView } from "./bindings";

const demoProfile: ProfileView = { id: "demo", name: "Demo", base_url: "https://127.0.0.1:1/webservice_v2", username: "demo", openapi_url: null, demo: true };

type Calls = { cmd: string; args: Record<string, unknown> }[];

function fakeBackend(calls: Calls, options: { demoStarted?: boolean } = {}) {
  let started = options.demoStarted ?? false;
  mockIPC((cmd, args) => {
    calls.push({ cmd, args: (args ?? {}) as Record<string, unknown> });
    switch (cmd) {
      case "launch_info":
        return { demo: false };
      case "settings":
        return { save_folder: null };
      case "profiles":
        return started ? [demoProfile] : [];
      case "start_demo":
        started = true;
        return { base_url: demoProfile.base_url, profiles: [demoProfile] };
      case "sign_in":
        return { profile_id: "demo", username: "demo" };
      case "environment":
        return { username: "demo", klant: { name: "Demo B.V." } };
      case "permissions":
        return { source: "openapi", environment: "allowed", backup_owner: "allowed", webhook: "allowed" };
      case "history":
        return [];
      case "start_backup": {
        const channel = (args as { onEvent: { onmessage: (e: AppJobEvent) => void } }).onEvent;
        const events: AppJobEvent[] = [
          { kind: "stage", stage: "requested" },
          { kind: "stage", stage: "accepted" },
          { kind: "stage", stage: "downloading" },
          { kind: "progress", bytes: 50, total: 100, bytes_per_sec: 1048576 },
          { kind: "staged", file_name: "owner-backup.zip", bytes: 100, sha256: "f".repeat(64) },
        ];
        setTimeout(() => events.forEach((e) => channel.onmessage(e)), 0);
        return "job-1";
      }
      case "plugin:dialog|save":
        return "/home/user/chosen.zip";
      case "save_backup":
        return { path: "/home/user/chosen.zip", bytes: 100, sha256: "f".repeat(64) };
      default:
        throw { code: "internal", message: `unexpected ${cmd}` };
    }
  });
}

async function startUi(): Promise<void> {
  document.body.innerHTML = '<div id="app"></div>';
  vi.resetModules();
  await import("./main");
}

const settle = () => new Promise((r) => setTimeout(r, 10));
const byTest = (name: string) => document.querySelector<HTMLElement>(`[data-test="${name}"]`);

describe("Kluis UI", () => {
  let calls: Calls;
  beforeEach(() => {
    calls = [];
    localStorage.setItem("kluis.language", "en");
  });
  afterEach(() => clearMocks());

  it("offers the demo on first run and shows it clearly labelled", async () => {
    fakeBackend(calls);
    await startUi();
    await settle();
    expect(document.body.textContent).toContain("Welcome to Kluis");
    byTest("try-demo")!.click();
    await settle();
    expect(calls.map((c) => c.cmd)).toContain("start_demo");
    expect(byTest("demo-badge")?.textContent).toContain("Demo");
    expect(byTest("session")?.textContent).toContain("Signed in as demo");
  });

  it("runs a backup through the save dialog to a saved file", async () => {
    fakeBackend(calls, { demoStarted: true });
    await startUi();
    await settle();
    byTest("backup-owner")!.click();
    await settle();
    await settle();
    const save = calls.find((c) => c.cmd === "save_backup");
    expect(save?.args).toEqual({ jobId: "job-1", path: "/home/user/chosen.zip" });
    const dialog = calls.find((c) => c.cmd === "plugin:dialog|save");
    expect(JSON.stringify(dialog?.args)).toContain("owner-backup.zip");
    expect(byTest("backup-saved")?.textContent).toContain("/home/user/chosen.zip");
  });

  it("shows an error's message and a title for its code", async () => {
    fakeBackend(calls, { demoStarted: true });
    mockIPC((cmd) => {
      if (cmd === "launch_info") return { demo: false };
      if (cmd === "settings") return { save_folder: null };
      if (cmd === "profiles") return [demoProfile];
      if (cmd === "sign_in") throw { code: "auth_failed", message: "The service refused the api key, username or password." };
      return null;
    });
    await startUi();
    await settle();
    expect(byTest("error")?.textContent).toContain("Sign-in failed");
    expect(byTest("error-message")?.textContent).toContain("refused the api key");
  });

  it("speaks Dutch when chosen", async () => {
    localStorage.setItem("kluis.language", "nl");
    fakeBackend(calls);
    await startUi();
    await settle();
    expect(document.body.textContent).toContain("Welkom bij Kluis");
    expect(document.documentElement.lang).toBe("nl");
  });
});
