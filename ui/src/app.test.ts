// The whole UI in jsdom, with the Rust side replaced by Tauri's mockIPC.
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AppJobEvent, ProfileView, ResumedEvent, Settings } from "./bindings";

const demoProfile: ProfileView = { id: "demo", name: "Demo", base_url: "https://127.0.0.1:1/webservice_v2", username: "demo", openapi_url: null, demo: true };

type Calls = { cmd: string; args: Record<string, unknown> }[];

const defaultSettings: Settings = { save_folder: null, callback: { kind: "loopback" }, relay_secret_saved: false };

function fakeBackend(calls: Calls, options: { demoStarted?: boolean; resumed?: ResumedEvent[] } = {}) {
  let started = options.demoStarted ?? false;
  let settings = defaultSettings;
  mockIPC((cmd, args) => {
    calls.push({ cmd, args: (args ?? {}) as Record<string, unknown> });
    switch (cmd) {
      case "launch_info":
        return { demo: false };
      case "settings":
        return settings;
      case "set_callback":
        settings = { ...settings, callback: (args as { input: { setting: Settings["callback"] } }).input.setting };
        return settings;
      case "test_callback":
        return { transport: "webhook-site", millis: 42 };
      case "resume_backups": {
        const channel = (args as { onEvent: { onmessage: (e: ResumedEvent) => void } }).onEvent;
        const events = options.resumed ?? [];
        setTimeout(() => events.forEach((e) => channel.onmessage(e)), 0);
        return events.length ? [{ job_id: events[0].job_id, profile_id: "demo", stage: "accepted" }] : [];
      }
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
      case "choose_tunnel_program":
        settings = { ...settings, callback: { kind: "tunnel", program: "/opt/cloudflare/cloudflared" } };
        return settings;
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
    expect(save?.args, "the webview hands over no path: Rust opens the dialog").toEqual({ jobId: "job-1" });
    expect(calls.some((c) => c.cmd.startsWith("plugin:dialog")), "the webview opens no dialog").toBe(false);
    expect(byTest("backup-saved")?.textContent).toContain("/home/user/chosen.zip");
  });

  it("shows an error's message and a title for its code", async () => {
    fakeBackend(calls, { demoStarted: true });
    mockIPC((cmd) => {
      if (cmd === "launch_info") return { demo: false };
      if (cmd === "settings") return defaultSettings;
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

  it("saves the callback choice and tests the connection", async () => {
    fakeBackend(calls, { demoStarted: true });
    await startUi();
    await settle();
    byTest("tab-settings")!.click();
    byTest("cb-webhook_site")!.click();
    expect(document.body.textContent).toContain("sees the call's id");
    expect((byTest("cb-test") as HTMLButtonElement).disabled).toBe(true);
    byTest("cb-save")!.click();
    await settle();
    const saved = calls.find((c) => c.cmd === "set_callback");
    expect(saved?.args).toEqual({ input: { setting: { kind: "webhook_site" }, relay_secret: null } });
    expect(byTest("cb-saved")).not.toBeNull();
    byTest("cb-test")!.click();
    await settle();
    expect(calls.find((c) => c.cmd === "test_callback")?.args).toEqual({ profileId: "demo" });
    expect(byTest("cb-test-ok")?.textContent).toContain("42 ms");
  });

  it("names no tunnel program itself: cloudflared is picked in Rust's dialog", async () => {
    fakeBackend(calls, { demoStarted: true });
    await startUi();
    await settle();
    byTest("tab-settings")!.click();
    byTest("cb-tunnel")!.click();
    expect(byTest("cb-program")?.tagName, "shown, not typed").toBe("CODE");
    expect(byTest("cb-program")?.textContent).toBe("cloudflared");
    byTest("cb-choose-program")!.click();
    await settle();
    expect(calls.find((c) => c.cmd === "choose_tunnel_program")?.args).toEqual({});
    expect(byTest("cb-program")?.textContent).toBe("/opt/cloudflare/cloudflared");
  });

  it("sends a typed relay secret once and keeps it out of the page", async () => {
    fakeBackend(calls, { demoStarted: true });
    await startUi();
    await settle();
    byTest("tab-settings")!.click();
    byTest("cb-relay")!.click();
    const url = byTest("cb-relay-url") as HTMLInputElement;
    url.value = "https://relay.example";
    url.dispatchEvent(new Event("input"));
    const secret = byTest("cb-relay-secret") as HTMLInputElement;
    secret.value = "relay-secret-value";
    secret.dispatchEvent(new Event("input"));
    byTest("cb-save")!.click();
    await settle();
    const saved = calls.find((c) => c.cmd === "set_callback");
    expect(saved?.args).toEqual({ input: { setting: { kind: "relay", url: "https://relay.example" }, relay_secret: "relay-secret-value" } });
    expect(document.body.innerHTML).not.toContain("relay-secret-value");
  });

  it("shows a backup resumed at start and saves it when staged", async () => {
    fakeBackend(calls, {
      demoStarted: true,
      resumed: [
        { job_id: "old-job", event: { kind: "stage", stage: "downloading" } },
        { job_id: "old-job", event: { kind: "staged", file_name: "owner-backup.zip", bytes: 100, sha256: "f".repeat(64) } },
      ],
    });
    await startUi();
    await settle();
    await settle();
    expect(byTest("resumed-job")?.textContent).toContain("Demo");
    byTest("resumed-save")!.click();
    await settle();
    expect(calls.find((c) => c.cmd === "save_backup")?.args).toEqual({ jobId: "old-job" });
    expect(byTest("resumed-job")?.textContent).toContain("/home/user/chosen.zip");
  });
});
