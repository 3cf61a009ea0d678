import { describe, expect, it } from "vitest";
import { bytes, clock, dateTime, decimal, percent, rate, secondsLeft, shortHash, timeOfDay } from "./format";

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
    expect(thisYear).toBe(`${new Date(Date.UTC(2026, 10, 28, 1, 25)).getDate()} Nov, ${timeOfDay(Date.UTC(2026, 10, 28, 1, 25))}`);
    expect(shortDateTime(Date.UTC(2027, 0, 2, 1, 25), "en-GB", now)).toContain("2027");
  });
});

describe("numbers and dates in the UI's two locales, without Intl", () => {
  it("groups thousands and rounds the number as written, as Intl's NumberFormat did", () => {
    expect(decimal(1234.5, 1, "nl-NL")).toBe("1.234,5");
    expect(decimal(1234.5, 1, "en-GB")).toBe("1,234.5");
    expect(decimal(12345678.9, 0, "nl-NL"), "rounded, no decimal mark").toBe("12.345.679");
    expect(decimal(999.95, 1, "en-GB"), "rounding carries into a new group").toBe("1,000.0");
    expect(decimal(0.5, 1, "nl-NL")).toBe("0,5");
    expect(decimal(1312.55, 1, "en-GB"), "not toFixed's 1312.5 (its binary value is below .55)").toBe("1,312.6");
    expect(decimal(0.05, 1, "en-GB")).toBe("0.1");
    expect(decimal(7, 2, "nl-NL")).toBe("7,00");
    expect(decimal(0.0000001, 1, "en-GB"), "a number written with an exponent").toBe("0.0");
    expect(decimal(-1234, 0, "en-GB")).toBe("-1,234");
    expect(decimal(123, 0, "en-GB"), "no group mark below a thousand").toBe("123");
  });
  it("writes the date and time the same in every web view", () => {
    // Local times: what the user's clock says, as Intl took them.
    const morning = new Date(2026, 10, 28, 9, 5).getTime();
    expect(dateTime(morning, "en-GB")).toBe("28 Nov 2026, 09:05");
    expect(dateTime(morning, "nl-NL")).toBe("28 nov 2026, 09:05");
    expect(dateTime(new Date(2026, 2, 3, 22, 5).getTime(), "nl-NL")).toBe("3 mrt 2026, 22:05");
    expect(dateTime(new Date(2026, 8, 3, 0, 0).getTime(), "en-GB")).toBe("3 Sept 2026, 00:00");
    expect(timeOfDay(new Date(2026, 0, 1, 14, 5).getTime())).toBe("14:05");
    expect(dateTime(Number.NaN, "en-GB"), "a moment that is not one: a dash, not NaN").toBe("—");
  });
});
