// The screenshots the docs show, refreshed from the end-to-end run's (tests/e2e/artifacts/,
// English): each cut to the app's window (Xvfb's screen is larger; what is not the window is
// black) and written here (as the e2e run writes its PNGs: ui/e2e/screen.mjs). No dependency
// but Node's zlib: the e2e run writes plain PNGs (8-bit RGB, each row unfiltered), which is
// all this reads.
//
//   bash tests/e2e/run.sh && node docs/images/refresh.mjs
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { inflateSync } from "node:zlib";
import { rgbPng } from "../../ui/e2e/screen.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const artifacts = join(here, "../../tests/e2e/artifacts");

/** The docs' images: their name here, and the e2e screenshot they come from. */
const IMAGES = {
  "dashboard.png": "00-dashboard-en.png",
  "klant-backup.png": "04-backup-saved-en.png",
  "history.png": "05-history-en.png",
  "settings.png": "06-callback-settings-en.png",
  "import.png": "31-import-preview-en.png",
  "restore.png": "29-restored-en.png",
  "recover-restored.png": "37-recover-restored-en.png",
  "recover-carried-on.png": "38-carried-on-en.png",
};

/** A PNG as the e2e run writes it: its width, height and rows of RGB bytes. */
function read(png) {
  let at = 8;
  let width = 0;
  let height = 0;
  const data = [];
  while (at < png.length) {
    const length = png.readUInt32BE(at);
    const type = png.toString("ascii", at + 4, at + 8);
    const body = png.subarray(at + 8, at + 8 + length);
    if (type === "IHDR") {
      [width, height] = [body.readUInt32BE(0), body.readUInt32BE(4)];
      if (body[8] !== 8 || body[9] !== 2) throw new Error("not an 8-bit RGB PNG of the e2e run");
    }
    if (type === "IDAT") data.push(body);
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  const rows = [];
  for (let y = 0; y < height; y++) {
    const row = raw.subarray(y * (width * 3 + 1), (y + 1) * (width * 3 + 1));
    if (row[0] !== 0) throw new Error("a filtered row: not a PNG of the e2e run");
    rows.push(row.subarray(1));
  }
  return { width, height, rows };
}

/** The box of what is not black: the window. */
function windowBox({ width, height, rows }) {
  let [right, bottom] = [0, 0];
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (rows[y][x * 3] | rows[y][x * 3 + 1] | rows[y][x * 3 + 2]) {
        right = Math.max(right, x + 1);
        bottom = Math.max(bottom, y + 1);
      }
    }
  }
  return { right, bottom };
}

function write({ rows }, { right, bottom }) {
  // Rows unfiltered: a screenshot's flat colours and text compress best so.
  const raw = Buffer.alloc((right * 3 + 1) * bottom);
  for (let y = 0; y < bottom; y++) {
    const out = y * (right * 3 + 1);
    raw[out] = 0;
    rows[y].copy(raw, out + 1, 0, right * 3);
  }
  return rgbPng(right, bottom, raw, 9);
}

for (const [name, from] of Object.entries(IMAGES)) {
  const image = read(readFileSync(join(artifacts, from)));
  const png = write(image, windowBox(image));
  writeFileSync(join(here, name), png);
  console.log(`${name}: ${png.length} bytes, from ${from}`);
}
