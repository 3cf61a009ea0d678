// History → a backup → Contents: its entries as a tree (indented by folder), searched as
// typed; Restore… of one entry, a folder or everything (the folder is picked in Rust's
// dialog, the page names no path), with its progress and what it did.
import { h } from "preact";
import { closeContents, openContents, restoreEntries, searchContents } from "../actions/restore";
import type { Entry, RestoreSummary } from "../bindings";
import { bytes } from "../format";
import { t } from "../i18n";
import { state } from "../state";

/** The entries whose path or name holds `search` (any case), with the folders above them. */
export function shown(entries: Entry[], search: string): Entry[] {
  const wanted = search.trim().toLowerCase();
  if (!wanted) return entries;
  const hits = entries.filter((e) => (e.path ?? e.name).toLowerCase().includes(wanted));
  const folders = new Set(hits.flatMap((e) => (e.path ?? "").split("/").slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join("/"))));
  return entries.filter((e) => hits.includes(e) || (e.kind === "folder" && e.path !== null && folders.has(e.path)));
}

function Row({ e, busy }: { e: Entry; busy: boolean }) {
  // An entry that is not restored has no path here: its name is shown whole, as stored.
  const path = e.path ?? e.name;
  const depth = e.path === null ? 0 : path.split("/").length - 1;
  const name = e.path === null ? e.name : (path.split("/").pop() ?? path);
  return h(
    "li",
    { "data-test": "content", "data-kind": e.kind, style: { paddingInlineStart: `${depth * 1.2}rem` } },
    h("span", { class: e.kind === "folder" ? "folder" : "file" }, e.kind === "folder" ? `${name}/` : name),
    e.kind === "file" ? h("small", {}, ` ${bytes(e.size)}${e.modified ? ` · ${e.modified}` : ""}`) : null,
    e.refused
      ? h("small", { class: "note", "data-test": "content-refused" }, ` — ${t("contentsNotRestored")}: ${e.refused}`)
      : h("button", { class: "link", "data-test": "content-restore", disabled: busy, onClick: () => void restoreEntries([path]) }, t("contentsRestore")),
  );
}

export function ContentsPanel() {
  const open = state.contents.value;
  if (!open) return null;
  const restore = open.restore;
  const busy = restore !== null && "progress" in restore;
  const entries = open.entries;
  const list = entries ? shown(entries, open.search) : [];
  return h(
    "section",
    { class: "contents", "aria-labelledby": "contents-title", "data-test": "contents" },
    h("h3", { id: "contents-title" }, t("contentsTitle")),
    open.copies.length
      ? h(
          "div",
          { class: "field" },
          h("label", { for: "contents-from" }, t("contentsFrom")),
          h(
            "select",
            { id: "contents-from", "data-test": "contents-from", value: open.from ?? "", disabled: busy, onChange: (ev: Event) => void openContents(open.historyId, (ev.target as HTMLSelectElement).value || null) },
            h("option", { value: "" }, t("contentsFromHere")),
            open.copies.map((c) => h("option", { key: c.target_id, value: c.target_id }, t("contentsFromCopy", { target: c.name }))),
          ),
        )
      : null,
    h(
      "div",
      { class: "row" },
      h("label", { for: "contents-search" }, t("contentsSearch")),
      h("input", { id: "contents-search", "data-test": "contents-search", type: "search", value: open.search, onInput: (ev: Event) => searchContents((ev.target as HTMLInputElement).value) }),
      h("button", { class: "secondary", "data-test": "contents-restore-all", disabled: busy || !entries?.length, onClick: () => void restoreEntries([]) }, t("contentsRestoreAll")),
      h("button", { class: "secondary", "data-test": "contents-close", onClick: closeContents }, t("close")),
    ),
    entries === null
      ? h("p", { role: "status" }, t("contentsReading"))
      : h("p", { class: "note", "data-test": "contents-count" }, t("contentsCount", { shown: String(list.length), all: String(entries.length) })),
    h("ul", { class: "tree", "data-test": "contents-list" }, list.map((e, i) => h(Row, { key: `${i}-${e.name}`, e, busy }))),
    restore === null
      ? null
      : "progress" in restore
        ? h("p", { role: "status" }, t("contentsRestoring"), " ", h("progress", { "data-test": "restore-progress", value: restore.progress.done, max: restore.progress.total || 1 }))
        : "done" in restore
          ? h(RestoreDone, { done: restore.done })
          : h("div", { class: "error", role: "alert", "data-test": "restore-error" }, restore.error.message),
  );
}

/** A restore's end: whole, or — an entry left out — how much of it and what not, never said
 * as if it were whole. */
export function RestoreDone({ done }: { done: RestoreSummary }) {
  const size = bytes(done.bytes);
  if (!done.not_restored.length) {
    return h("div", { class: "success", role: "status", "data-test": "restore-done" }, t(done.files === 1 ? "contentsRestoredOne" : "contentsRestored", { files: String(done.files), size, folder: done.folder }));
  }
  const restored = String(done.files + done.folders);
  return h(
    "div",
    { class: "error", role: "alert", "data-test": "restore-done" },
    t("contentsRestoredPart", { restored, entries: String(done.entries), size, folder: done.folder }),
    h("ul", { "data-test": "restore-left-out" }, done.not_restored.map((n) => h("li", { key: n.name }, `${n.name}: ${n.why}`))),
  );
}
