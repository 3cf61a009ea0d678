// English and Dutch (their texts in texts/en.ts and texts/nl.ts). The language follows the OS
// (navigator.language) until the user picks one; the choice is kept in localStorage (it is not
// a secret).
import { signal } from "@preact/signals";
import { en, type Dictionary } from "./texts/en";
import { nl } from "./texts/nl";

export type Key = keyof Dictionary;

export const languages = { en, nl } as const;
export type Language = keyof typeof languages;

/** A signal: views that show text re-render when the language changes. */
const current = signal<Language>(detect());

function detect(): Language {
  const chosen = globalThis.localStorage?.getItem("kluis.language");
  if (chosen === "en" || chosen === "nl") return chosen;
  return (globalThis.navigator?.language ?? "en").toLowerCase().startsWith("nl") ? "nl" : "en";
}

export function language(): Language {
  return current.value;
}

export function setLanguage(lang: Language): void {
  current.value = lang;
  globalThis.localStorage?.setItem("kluis.language", lang);
  document.documentElement.lang = lang;
}

/** The text for `key` in the current language, with `{name}` placeholders filled in. */
export function t(key: Key, values: Record<string, string> = {}): string {
  return languages[current.value][key].replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? `{${name}}`);
}

export function locale(): string {
  return current.value === "nl" ? "nl-NL" : "en-GB";
}
