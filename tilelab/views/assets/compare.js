// Compare: aligned passes of two records; the selected row's side-by-side diff arrives by custom message.
// User text is only ever set through textContent.

function h(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

const KIND_CLASS = { "+": "tl-diff-add", "-": "tl-diff-del", " ": "tl-diff-ctx" };

function codeCell(runs, kind) {
  const cell = h("td", `tl-code ${KIND_CLASS[kind]}`);
  for (const [text, changed] of runs) cell.appendChild(h("span", changed ? "tl-w" : "", text));
  return cell;
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
        row.append(h("td", "tl-ln", line[lineNo] ?? ""), codeCell(line[3], line[0]));
      }
      table.appendChild(row);
    }
  }
  return table;
}

function render({ model, el }) {
  const [labelA, labelB] = model.get("labels");
  const [onlyA, onlyB] = model.get("only");
  const root = h("div", "tl-compare");
  const only = h("div", "tl-note");
  only.append(
    h("div", "", `only in ${labelA}: ${onlyA.length ? onlyA.join(", ") : "none"}`),
    h("div", "", `only in ${labelB}: ${onlyB.length ? onlyB.join(", ") : "none"}`),
  );
  const body = h("div", "tl-body");
  const list = h("div", "tl-passlist");
  const detail = h("div", "tl-detail");
  detail.appendChild(h("p", "tl-hint", "Select a pass to compare its IR in both records."));
  const head = h("div", "tl-pass-row tl-compare-head");
  head.append(h("span", "tl-idx", "#"), h("span"), h("span", "tl-name", labelA), h("span", "tl-name", labelB));
  list.appendChild(head);
  const rows = model.get("rows").map(([nameA, indexA, nameB, indexB, same], i) => {
    const row = h("div", "tl-pass-row tl-compare-row");
    row.dataset.row = String(i);
    if (nameA === null || nameB === null) row.classList.add("tl-only");
    row.append(
      h("span", "tl-idx", i),
      h("span", "tl-mark", same ? "=" : "≠"),
      h("span", "tl-name", nameA === null ? "—" : `#${indexA} ${nameA}`),
      h("span", "tl-name", nameB === null ? "—" : `#${indexB} ${nameB}`),
    );
    row.addEventListener("click", () => {
      model.set("selected", i);
      model.save_changes();
    });
    list.appendChild(row);
    return row;
  });
  body.append(list, detail);
  root.append(only, body);
  el.appendChild(root);

  const mark = () => {
    const selected = model.get("selected");
    rows.forEach((row, i) => row.classList.toggle("tl-selected", i === selected));
    if (selected >= 0) detail.replaceChildren(h("p", "tl-hint", "loading…"));
  };
  const onMessage = (msg) => {
    if (!msg || msg.type !== "pair" || msg.row !== model.get("selected")) return;
    const title = h("div", "tl-detail-head");
    const name = (side, label) => (side ? `${label}: #${side.index} ${side.name}` : `${label}: —`);
    title.append(h("div", "", name(msg.a, labelA)), h("div", "", name(msg.b, labelB)));
    const box = h("div", "tl-diffbox");
    box.appendChild(msg.same ? h("p", "tl-hint", "Identical IR in both records.") : splitTable(msg.hunks));
    detail.replaceChildren(title, box);
  };
  model.on("msg:custom", onMessage);
  model.on("change:selected", mark);
  mark();
  if (model.get("selected") >= 0) model.send({ type: "fetch" });
  return () => {
    model.off("msg:custom", onMessage);
    model.off("change:selected", mark);
  };
}

export default { render };
