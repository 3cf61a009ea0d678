// The clipboard, with a fallback for webviews without the async clipboard.

/** Copies text to the clipboard. */
export async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const area = document.createElement("textarea");
    area.setAttribute("aria-hidden", "true");
    area.className = "offscreen";
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
}
