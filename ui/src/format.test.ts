import { describe, expect, it } from "vitest";
import { bytes, clock, percent, rate, secondsLeft, shortHash } from "./format";

describe("format", () => {
  it("sizes use binary units with one decimal below 10", () => {
    expect(bytes(512, "en-GB")).toBe("512 B");
    expect(bytes(1536, "en-GB")).toBe("1.5 KB");
    expect(bytes(48 * 1024 * 1024, "en-GB")).toBe("48 MB");
    expect(bytes(null)).toBe("—");
  });
  it("numbers use the language's decimal mark", () => {
    expect(bytes(1536, "nl-NL")).toBe("1,5 KB");
    expect(rate(256 * 1024 * 1024, "nl-NL")).toBe("256,0 MB/s");
    expect(rate(256 * 1024 * 1024, "en-GB")).toBe("256.0 MB/s");
  });
  it("clock shows m:ss and h:mm:ss", () => {
    expect(clock(75)).toBe("1:15");
    expect(clock(3725)).toBe("1:02:05");
    expect(clock(-3)).toBe("0:00");
  });
  it("percent and time left need a total and a rate", () => {
    expect(percent(50, 200)).toBe(25);
    expect(percent(50, null)).toBeNull();
    expect(secondsLeft(50, 150, 10)).toBe(10);
    expect(secondsLeft(50, 150, 0)).toBeNull();
  });
  it("hashes are shortened for tables", () => {
    expect(shortHash("0123456789abcdef0123")).toBe("0123456789ab…");
  });
});

describe("shortDateTime", () => {
  it("leaves out this year's year, keeps another year's", async () => {
    const { shortDateTime } = await import("./format");
    const now = Date.UTC(2026, 10, 27, 12, 0);
    const thisYear = shortDateTime(Date.UTC(2026, 10, 28, 1, 25), "en-GB", now);
    expect(thisYear).not.toContain("2026");
    expect(thisYear).toContain("Nov");
    expect(shortDateTime(Date.UTC(2027, 0, 2, 1, 25), "en-GB", now)).toContain("2027");
  });
});
