import { describe, expect, it } from "vitest";
import { errorText } from "./errors";
import { languages, type Key } from "./i18n";

/** Words that are the same in both languages (names, and words Dutch took from English). */
const sameInBoth: ReadonlySet<Key> = new Set(["appTitle", "colStatus", "details", "cbWebhookSite", "demoTag", "demoName", "dashKlant", "mailTitle", "updatesTitle"]);

describe("texts", () => {
  it("every error code has a title and advice, in English and in Dutch", () => {
    for (const [code, { title, advice }] of Object.entries(errorText)) {
      for (const key of [title, advice]) {
        expect(languages.en[key], `${code}: ${key} in English`).toMatch(/\S/);
        expect(languages.nl[key], `${code}: ${key} in Dutch`).toMatch(/\S/);
        expect(languages.nl[key], `${code}: ${key} is not Dutch`).not.toBe(languages.en[key]);
      }
    }
  });

  it("the Dutch UI has no English text left", () => {
    const english = (Object.keys(languages.en) as Key[]).filter((k) => !sameInBoth.has(k) && languages.nl[k] === languages.en[k]);
    expect(english, "texts identical in both languages").toEqual([]);
  });

  it("placeholders are the same in both languages", () => {
    const names = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    for (const key of Object.keys(languages.en) as Key[]) {
      expect(names(languages.nl[key]), key).toEqual(names(languages.en[key]));
    }
  });
});
