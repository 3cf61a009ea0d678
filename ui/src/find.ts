// Finding a klant: the search typed over the profile list and the dashboard (name, username,
// tag; accents and case ignored; every word typed must be found), and the tag chosen. Each
// klant's searchable text is made once per change of the profiles, so a keystroke over 1,000
// klanten compares strings only.
import { computed } from "@preact/signals";
import type { ProfileView } from "./bindings";
import { formatter } from "./format";
import { locale } from "./i18n";
import { displayName, state } from "./state";

/** `text` as it is compared: lower case, accents taken off ("Café" finds "cafe"). */
export function folded(text: string): string {
  return text.normalize("NFD").replace(/\p{Mn}/gu, "").toLowerCase();
}

/** What a klant is found by. */
export function searchable(profile: ProfileView): string {
  return folded([displayName(profile), profile.username, ...profile.tags].join("\n"));
}

/** Whether every word of `search` is in `text` (both folded). */
export function matches(text: string, words: readonly string[]): boolean {
  return words.every((w) => text.includes(w));
}

/** The words of a search, folded (none: everything matches). */
export function words(search: string): string[] {
  return folded(search).split(/\s+/).filter(Boolean);
}

/** Every tag of the profiles, once each (case aside), sorted (the tag filter's choices). */
export const tagsOfAll = computed(() => allTags(state.profiles.value));

/** Every tag of `profiles`, once each (case aside), sorted. */
export function allTags(profiles: readonly ProfileView[]): string[] {
  const seen = new Map<string, string>();
  for (const tag of profiles.flatMap((p) => p.tags)) if (!seen.has(folded(tag))) seen.set(folded(tag), tag);
  return [...seen.values()].sort((a, b) => a.localeCompare(b));
}

/** The profiles by name, in the UI's language's order (an import saves them in the order their
 * sign-ins end). */
const byName = computed(() => {
  const collator = formatter((l, o) => new Intl.Collator(l, o), "collator", locale(), {});
  const named = state.profiles.value.map((p) => [displayName(p), p] as const);
  return named.sort(([a], [b]) => collator.compare(a, b)).map(([, p]) => p);
});

const haystacks = computed(() => new Map(state.profiles.value.map((p) => [p.id, searchable(p)])));

/** Whether a search or a tag narrows what is shown. */
export const narrowed = computed(() => words(state.find.value).length > 0 || state.tagFilter.value !== null);

/** The profiles the search and the tag leave, by name. */
export const found = computed(() => {
  const profiles = byName.value;
  if (!narrowed.value) return profiles;
  const wanted = words(state.find.value);
  const tag = state.tagFilter.value === null ? null : folded(state.tagFilter.value);
  const texts = haystacks.value;
  return profiles.filter((p) => matches(texts.get(p.id) ?? "", wanted) && (tag === null || p.tags.some((t) => folded(t) === tag)));
});

/** Their ids (the dashboard's rows are filtered by it). */
export const foundIds = computed(() => new Set(found.value.map((p) => p.id)));
