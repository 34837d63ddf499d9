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
    list.append(el("li", `${status}: ${response.description}${types ? " (" + types + ")" : ""}`));
  }
  return list;
}

function render(doc) {
  const routes = document.getElementById("routes");
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const section = el("section");
      section.append(el("h2", `${method.toUpperCase()} ${path}`));
      if (op.description) section.append(el("p", op.description, "meta"));
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
