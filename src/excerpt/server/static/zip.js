// A zip writer for folder sync (POST /v1/sync takes a zip of the folder): stored entries only
// (no compression: the files go over a local network once, and deflate would cost more time in
// the page than it saves on the wire), CRC-32 of each file, names in UTF-8 with the language
// encoding flag set (APPNOTE 4.4.4, bit 11) so that a Korean or accented name unpacks as
// written. No zip64: the server takes at most 20,000 files and 200 MB, well under 65,535
// entries and 4 GiB, and anything past those is refused here rather than written wrong.
"use strict";

const UTF8 = 0x0800; // general purpose bit 11: the names are UTF-8
const VERSION = 20; // 2.0: what a stored entry in a folder needs
const MAX_ENTRIES = 0xffff;
const MAX_BYTES = 0xffffffff;

const TABLE = (() => {
  // the CRC-32 of zip (and PNG, gzip): polynomial 0xEDB88320, reflected
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let bit = 0; bit < 8; bit++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(bytes, crc = 0) {
  // crc: the CRC of what came before, to go on from (0 to start)
  let c = (crc ^ 0xffffffff) >>> 0;
  for (let i = 0; i < bytes.length; i++) c = TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function dosTime(date) {
  // MS-DOS date and time (2-second steps, local time); before 1980 is 1980-01-01
  if (date.getFullYear() < 1980) return { time: 0, day: (1 << 5) | 1 };
  return {
    time: (date.getHours() << 11) | (date.getMinutes() << 5) | (date.getSeconds() >> 1),
    day: ((date.getFullYear() - 1980) << 9) | ((date.getMonth() + 1) << 5) | date.getDate(),
  };
}

function record(size, fields) {
  // a header of `size` bytes: fields as [bytes (2 or 4), value], little-endian, in order
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const [width, value] of fields) {
    if (width === 4) view.setUint32(at, value, true);
    else view.setUint16(at, value, true);
    at += width;
  }
  return out;
}

function headers(entry, offset) {
  // the local header (before the data) and the central directory's record of one entry
  const { time, day } = dosTime(entry.date);
  const common = [[2, VERSION], [2, UTF8], [2, 0], [2, time], [2, day], [4, entry.crc],
    [4, entry.size], [4, entry.size], [2, entry.name.length]];
  const local = record(30, [[4, 0x04034b50], ...common, [2, 0]]);
  const central = record(46, [[4, 0x02014b50], [2, VERSION], ...common, [2, 0], [2, 0],
    [2, 0], [2, 0], [4, 0], [4, offset]]);
  return { local, central };
}

export async function zip(files, onFile = () => {}) {
  // files: [{path: "folder/sub/a.md", data: a Blob or File, date?: Date}] -> a Blob of the
  // zip, the files in the order given. onFile(done, total) after each file is read.
  if (files.length > MAX_ENTRIES) throw new Error(`${files.length} files are more than a zip without zip64 holds (${MAX_ENTRIES})`);
  const parts = [];
  const directory = [];
  const encoder = new TextEncoder();
  let offset = 0;
  for (const [index, file] of files.entries()) {
    const bytes = new Uint8Array(await file.data.arrayBuffer());
    const name = encoder.encode(file.path);
    const date = file.date || new Date(file.data.lastModified || Date.now());
    const { local, central } = headers({ name, date, crc: crc32(bytes), size: bytes.length }, offset);
    parts.push(local, name, bytes); // the bytes the CRC is of, not the file read a second time
    directory.push(central, name);
    offset += local.length + name.length + bytes.length;
    if (offset > MAX_BYTES) throw new Error("the folder is over 4 GiB, more than a zip without zip64 holds");
    onFile(index + 1, files.length);
  }
  const size = directory.reduce((sum, part) => sum + part.length, 0);
  const end = record(22, [[4, 0x06054b50], [2, 0], [2, 0], [2, files.length], [2, files.length],
    [4, size], [4, offset], [2, 0]]);
  return new Blob([...parts, ...directory, end], { type: "application/zip" });
}
