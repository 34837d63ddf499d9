// Where a passage is, from its node's metadata: the book and chapter, the regulation and
// article, the source file (and member) of code, or a document's path, EPUB chapter, page and
// section (the keys of src/excerpt/ingest/documents/blocks.py).
"use strict";

const base = (path) => (path || "").split(/[\\/]/).pop();
const join = (...parts) => parts.filter((p) => p !== undefined && p !== null && p !== "").join(" · ");

export function page(m) {
  // "p. 12"; "p. 11–12" when the passage spans pages; the printed label ("p. iv") when the PDF
  // gives one; "" without a page.
  if (m.page_label) {
    const end = m.page_end_label && m.page_end_label !== m.page_label ? "–" + m.page_end_label : "";
    return "p. " + m.page_label + end;
  }
  if (typeof m.page !== "number") return "";
  return "p. " + m.page + (typeof m.page_end === "number" && m.page_end !== m.page ? "–" + m.page_end : "");
}

const APPARATUS = { front: "front matter", back: "back matter" }; // the others say themselves

export function place(metadata, title, source) {
  // {kind, label}: kind is book, regulation, code or document.
  const m = metadata || {};
  if (m.code_language || m.file) {
    const member = m.class ? m.class + (m.member ? "." + m.member : "") : [m.schema, m.name].filter(Boolean).join(".");
    return { kind: "code", label: join(m.file || source, member) };
  }
  if (m.regulation) {
    const article = [m.article, m.caption].filter(Boolean).join(" ");
    return { kind: "regulation", label: join(m.regulation, m.chapter, article) };
  }
  if (m.path) {
    const chapter = typeof m.chapter === "number" ? ["chapter " + m.chapter, m.chapter_title].filter(Boolean).join(" ") : "";
    return { kind: "document", label: join(m.path, chapter, page(m), m.section) };
  }
  // a book's division (Gutenberg: book, chapter) and its apparatus ("argument", "notes": the
  // parts of ingest/books/parts.py other than the text itself)
  const apparatus = m.part && m.part !== "body" ? APPARATUS[m.part] || m.part : "";
  if (typeof m.book === "number" || typeof m.chapter === "number") {
    const book = typeof m.book === "number" ? "book " + m.book : "";
    const chapter = typeof m.chapter === "number" ? "chapter " + m.chapter : "";
    return { kind: "book", label: join(title || base(source), book, chapter, apparatus) };
  }
  if (apparatus && title) return { kind: "book", label: join(title, apparatus) };
  return { kind: "document", label: join(title, base(source)) };
}
