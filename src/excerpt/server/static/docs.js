// The routes of /openapi.json as a plain page: no framework, nothing loaded from elsewhere,
// text set with textContent only.
"use strict";

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

function schemaName(schema) {
  if (!schema) return "";
  if (schema.$ref) return schema.$ref.split("/").pop();
  if (schema.type === "array") return schemaName(schema.items) + "[]";
  if (schema.anyOf) return schema.anyOf.map(schemaName).join(" | ");
  return schema.type || "";
}

function parameters(op) {
  const list = el("ul");
  for (const p of op.parameters || []) {
    const required = p.required ? ", required" : "";
    list.append(el("li", `${p.name} (${p.in}, ${schemaName(p.schema)}${required})`));
  }
  const body = op.requestBody && op.requestBody.content;
  for (const [type, media] of Object.entries(body || {})) {
    list.append(el("li", `body: ${type} ${schemaName(media.schema)}`));
  }
  return list;
}

function responses(op) {
  const list = el("ul");
  for (const [status, response] of Object.entries(op.responses || {})) {
    const types = Object.keys(response.content || {}).join(", ");
    list.append(spans(el("li"), `${status}: ${response.description}${types ? " (" + types + ")" : ""}`));
  }
  return list;
}

function spans(parent, line) {
  // ``code`` and `code` as <code>, the rest as text
  line.split(/(``[^`]+``|`[^`]+`)/).forEach((part) => {
    const code = part.match(/^``([^`]+)``$/) || part.match(/^`([^`]+)`$/);
    parent.append(code ? el("code", code[1]) : part);
  });
  return parent;
}

function prose(description) {
  // A route's docstring as paragraphs (split at blank lines, lines joined), its ``code`` and
  // `code` spans as <code>, everything else as text.
  return description.split(/\n\s*\n/).map((block) => {
    return spans(el("p", undefined, "meta"), block.replace(/\s+/g, " ").trim());
  });
}

function render(doc) {
  const routes = document.getElementById("routes");
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const section = el("section");
      section.append(el("h2", `${method.toUpperCase()} ${path}`));
      if (op.description) section.append(...prose(op.description));
      section.append(el("h3", "Parameters"), parameters(op));
      section.append(el("h3", "Responses"), responses(op));
      routes.append(section);
    }
  }
  document.getElementById("status").textContent = `${doc.info.title} ${doc.info.version}`;
}

fetch("/openapi.json")
  .then((response) => response.json())
  .then(render)
  .catch((error) => { document.getElementById("status").textContent = String(error); });
