// Source tab: Python beside device code, linked line to line. Text arrives by custom message as
// [cssClass, text] runs and is set through textContent only.

function h(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function codePane(title, lines, side) {
  const pane = h("div", `tl-pane tl-pane-${side}`);
  pane.appendChild(h("div", "tl-pane-title", title));
  const rows = lines.map((runs, i) => {
    const row = h("div", "tl-line");
    row.dataset.line = String(i + 1);
    row.appendChild(h("span", "tl-ln", i + 1));
    const code = h("span", "tl-text");
    for (const [css, text] of runs) code.appendChild(h("span", css, text));
    row.appendChild(code);
    pane.appendChild(row);
    return row;
  });
  return { pane, rows };
}

function render({ model, el }) {
  const root = h("div", "tl-source");
  const toolbar = h("div", "tl-toolbar");
  const hostLabel = h("label", "tl-check");
  const host = h("input");
  host.type = "checkbox";
  host.className = "tl-show-host";
  host.disabled = !model.get("has_host");
  hostLabel.append(host, h("span", "", model.get("has_host") ? " host code" : " host code (none)"));
  toolbar.append(hostLabel, h("span", "tl-hint", "Click a line to see where it came from or what it became."));
  const panes = h("div", "tl-panes");
  panes.appendChild(h("p", "tl-hint", "loading…"));
  const hostBox = h("div", "tl-hostbox");
  root.append(toolbar, panes, hostBox, h("p", "tl-note", model.get("note")));
  el.appendChild(root);

  let py = null, dev = null, byDevice = new Map(), byPython = new Map();
  const highlight = () => {
    if (!py) return;
    const line = model.get("selected_line");
    py.rows.forEach((row, i) => row.classList.toggle("tl-hl", i + 1 === line));
    const targets = new Set(byPython.get(line) || []);
    let first = null;
    dev.rows.forEach((row, i) => {
      const on = targets.has(i + 1);
      row.classList.toggle("tl-hl", on);
      if (on && first === null) first = row;
    });
    if (first) first.scrollIntoView({ block: "nearest" });
    if (line > 0 && py.rows[line - 1]) py.rows[line - 1].scrollIntoView({ block: "nearest" });
  };
  const select = (line) => {
    model.set("selected_line", line);
    model.save_changes();
  };
  const showSource = (msg) => {
    byDevice = new Map(msg.links.map(([d, p]) => [d, p]));
    byPython = new Map();
    for (const [d, p] of msg.links) byPython.set(p, [...(byPython.get(p) || []), d]);
    py = codePane(`Python — ${model.get("kernel_file")}`, msg.python, "python");
    dev = codePane(`Device (${model.get("language")})`, msg.device, "device");
    py.rows.forEach((row, i) => {
      if (!byPython.has(i + 1)) return;
      row.classList.add("tl-linked");
      row.addEventListener("click", () => select(i + 1));
    });
    dev.rows.forEach((row, i) => {
      const line = byDevice.get(i + 1);
      if (line === undefined) return;
      row.classList.add("tl-linked");
      row.addEventListener("click", () => select(line));
    });
    panes.replaceChildren(py.pane, dev.pane);
    highlight();
  };
  const onMessage = (msg) => {
    if (!msg) return;
    if (msg.type === "source") showSource(msg);
    if (msg.type === "host") hostBox.replaceChildren(codePane("Host code", msg.host, "host").pane);
  };
  const onHost = () => {
    host.checked = model.get("show_host");
    hostBox.style.display = host.checked ? "" : "none";
    if (host.checked && !hostBox.firstChild) model.send({ type: "fetch_host" });
  };
  host.addEventListener("change", () => {
    model.set("show_host", host.checked);
    model.save_changes();
  });
  model.on("msg:custom", onMessage);
  model.on("change:selected_line", highlight);
  model.on("change:show_host", onHost);
  onHost();
  model.send({ type: "fetch" });
  return () => {
    model.off("msg:custom", onMessage);
    model.off("change:selected_line", highlight);
    model.off("change:show_host", onHost);
  };
}

export default { render };
