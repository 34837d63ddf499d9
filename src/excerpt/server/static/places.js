// Where a passage is, from its node's metadata: the book and chapter, the regulation and
// article, the source file (and member) of code, or a document's path and section.
"use strict";

const base = (path) => (path || "").split(/[\\/]/).pop();
const join = (...parts) => parts.filter((p) => p !== undefined && p !== null && p !== "").join(" · ");

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
  if (typeof m.chapter === "number") {
    return { kind: "book", label: join(title || base(source), "chapter " + m.chapter) };
  }
  if (m.path) return { kind: "document", label: join(m.path, m.section) };
  return { kind: "document", label: join(title, base(source)) };
}
