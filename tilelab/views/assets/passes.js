// Passes tab: pass list, filters, time chart; the selected pass's IR and diff arrive by custom message.
// User text (pass names, IR) is only ever set through textContent.

function h(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

const SVG = "http://www.w3.org/2000/svg";

function timeChart(passes, onPick) {
  const width = 640, height = 70, max = Math.max(1e-9, ...passes.map((p) => p.ms));
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("class", "tl-chart");
  const bar = width / Math.max(1, passes.length);
  passes.forEach((p, i) => {
    const rect = document.createElementNS(SVG, "rect");
    const barHeight = Math.max(1, (p.ms / max) * (height - 4));
    rect.setAttribute("x", String(i * bar));
    rect.setAttribute("y", String(height - barHeight));
    rect.setAttribute("width", String(Math.max(1, bar - 1)));
    rect.setAttribute("height", String(barHeight));
    rect.setAttribute("class", p.changed ? "tl-bar tl-bar-changed" : "tl-bar");
    const title = document.createElementNS(SVG, "title");
    title.textContent = `#${p.index} ${p.name}: ${p.ms} ms`;
    rect.appendChild(title);
    rect.addEventListener("click", () => onPick(p.index));
    svg.appendChild(rect);
  });
  return svg;
}

function codeCell(runs) {
  const cell = h("td", "tl-code");
  for (const [text, changed] of runs) cell.appendChild(h("span", changed ? "tl-w" : "", text));
  return cell;
}

const KIND_CLASS = { "+": "tl-diff-add", "-": "tl-diff-del", " ": "tl-diff-ctx" };

function unifiedTable(hunks) {
  const table = h("table", "tl-diff tl-diff-unified");
  for (const hunk of hunks) {
    const head = h("tr", "tl-hunk");
    const cell = h("td", "", `@@ -${hunk.old_start} +${hunk.new_start} @@`);
    cell.colSpan = 4;
    head.appendChild(cell);
    table.appendChild(head);
    for (const [kind, oldLine, newLine, runs] of hunk.lines) {
      const row = h("tr", KIND_CLASS[kind]);
      row.append(h("td", "tl-ln", oldLine ?? ""), h("td", "tl-ln", newLine ?? ""), h("td", "tl-sign", kind), codeCell(runs));
      table.appendChild(row);
    }
  }
  return table;
}

function splitTable(hunks) {
  const table = h("table", "tl-diff tl-diff-split");
  for (const hunk of hunks) {
    const head = h("tr", "tl-hunk");
    const cell = h("td", "", `@@ -${hunk.old_start} +${hunk.new_start} @@`);
    cell.colSpan = 4;
    head.appendChild(cell);
    table.appendChild(head);
    for (const [left, right] of hunk.rows) {
      const row = h("tr");
      for (const [index, lineNo] of [[left, 1], [right, 2]]) {
        if (index === null) {
          row.append(h("td", "tl-ln tl-diff-none"), h("td", "tl-code tl-diff-none"));
          continue;
        }
        const line = hunk.lines[index];
        const code = codeCell(line[3]);
        code.classList.add(KIND_CLASS[line[0]]);
        row.append(h("td", "tl-ln", line[lineNo] ?? ""), code);
      }
      table.appendChild(row);
    }
  }
  return table;
}

function render({ model, el }) {
  const root = h("div", "tl-passes");
  const toolbar = h("div", "tl-toolbar");
  const search = h("input", "tl-search");
  search.type = "search";
  search.placeholder = "search passes";
  const changedLabel = h("label", "tl-check");
  const changed = h("input");
  changed.type = "checkbox";
  changed.className = "tl-changed-only";
  changedLabel.append(changed, h("span", "", " changed only"));
  const mode = h("select", "tl-mode");
  for (const value of ["unified", "split"]) {
    const option = h("option", "", value === "split" ? "side by side" : "unified");
    option.value = value;
    mode.appendChild(option);
  }
  const count = h("span", "tl-count");
  toolbar.append(search, changedLabel, mode, count);

  const passes = model.get("passes");
  const pick = (index) => {
    model.set("selected", index);
    model.save_changes();
  };
  const chart = timeChart(passes, pick);
  const body = h("div", "tl-body");
  const list = h("div", "tl-passlist");
  const detail = h("div", "tl-detail");
  detail.appendChild(h("p", "tl-hint", "Select a pass to see its IR and what it changed."));
  body.append(list, detail);
  root.append(toolbar, chart, body);
  el.appendChild(root);

  const maxMs = Math.max(1e-9, ...passes.map((p) => p.ms));
  const rows = passes.map((p) => {
    const row = h("div", p.changed ? "tl-pass-row tl-changed" : "tl-pass-row");
    row.dataset.passIndex = String(p.index);
    row.title = p.changed ? `changed: +${p.added} −${p.removed}` : "unchanged";
    const barBox = h("span", "tl-timebar");
    const fill = h("span", "tl-timefill");
    fill.style.width = `${Math.max(1, (100 * p.ms) / maxMs)}%`;
    barBox.appendChild(fill);
    row.append(
      h("span", "tl-idx", p.index),
      h("span", "tl-mark", p.changed ? "●" : "○"),
      h("span", "tl-name", p.name),
      h("span", "tl-delta", p.changed ? `+${p.added} −${p.removed}` : ""),
      barBox,
      h("span", "tl-ms", `${p.ms} ms`),
    );
    row.addEventListener("click", () => pick(p.index));
    list.appendChild(row);
    return row;
  });

  const applyFilter = () => {
    const query = search.value.trim().toLowerCase();
    const onlyChanged = model.get("changed_only");
    let shown = 0;
    passes.forEach((p, i) => {
      const visible = (!onlyChanged || p.changed) && (!query || p.name.toLowerCase().includes(query));
      rows[i].style.display = visible ? "" : "none";
      shown += visible ? 1 : 0;
    });
    count.textContent = `${shown} of ${passes.length} passes`;
  };
  const markSelected = () => {
    const selected = model.get("selected");
    rows.forEach((row, i) => row.classList.toggle("tl-selected", passes[i].index === selected));
    if (selected >= 0) {
      detail.replaceChildren(h("p", "tl-hint", "loading…"));
    }
  };

  const showPass = (msg) => {
    const header = h("div", "tl-detail-head");
    const base = msg.base === null ? "first pass: nothing to diff against" : `diff against #${msg.base} ${msg.base_name}`;
    header.append(h("strong", "", `#${msg.index} ${msg.name}`), h("span", "tl-base", ` — ${base}`));
    const diffBox = h("div", "tl-diffbox");
    if (msg.base !== null && msg.hunks.length === 0) diffBox.appendChild(h("p", "tl-hint", "This pass left the IR unchanged."));
    else if (msg.hunks.length) diffBox.appendChild(msg.mode === "split" ? splitTable(msg.hunks) : unifiedTable(msg.hunks));
    const irBox = h("details", "tl-ir");
    irBox.appendChild(h("summary", "", "IR after this pass"));
    irBox.appendChild(h("pre", "tl-pre", msg.ir));
    if (msg.base === null) irBox.open = true;
    detail.replaceChildren(header, diffBox, irBox);
  };
  const onMessage = (msg) => {
    if (msg && msg.type === "pass" && msg.index === model.get("selected") && msg.mode === model.get("mode")) showPass(msg);
  };

  search.addEventListener("input", applyFilter);
  changed.checked = model.get("changed_only");
  changed.addEventListener("change", () => {
    model.set("changed_only", changed.checked);
    model.save_changes();
  });
  mode.value = model.get("mode");
  mode.addEventListener("change", () => {
    model.set("mode", mode.value);
    model.save_changes();
  });
  const onChangedOnly = () => {
    changed.checked = model.get("changed_only");
    applyFilter();
  };
  const onMode = () => {
    mode.value = model.get("mode");
    markSelected();
  };
  model.on("msg:custom", onMessage);
  model.on("change:selected", markSelected);
  model.on("change:changed_only", onChangedOnly);
  model.on("change:mode", onMode);
  applyFilter();
  markSelected();
  if (model.get("selected") >= 0) model.send({ type: "fetch" });
  return () => {
    model.off("msg:custom", onMessage);
    model.off("change:selected", markSelected);
    model.off("change:changed_only", onChangedOnly);
    model.off("change:mode", onMode);
  };
}

export default { render };
