/* gramagents run viewer: tabs, charts, and browsers over sharded item and record data.
 *
 * Data files are scripts that call gvData(key, payload); they are added to the page when a
 * browser needs them, so the page works from disk (file://) and over HTTP alike. */
"use strict";

(function () {
  const config = JSON.parse(document.getElementById("gv-config").textContent);
  const cache = new Map();
  const pending = new Map();
  const KEEP = 80; // data files kept in memory (an index is never dropped)

  window.gvData = function (key, payload) {
    cache.set(key, payload);
    const waiting = pending.get(key);
    if (waiting) {
      pending.delete(key);
      waiting.resolve(payload);
    }
    if (cache.size > KEEP) {
      for (const old of cache.keys()) {
        if (!old.endsWith("/index") && old !== key) {
          cache.delete(old);
          break;
        }
      }
    }
  };

  function load(key) {
    if (cache.has(key)) return Promise.resolve(cache.get(key));
    if (pending.has(key)) return pending.get(key).promise;
    let resolve, reject;
    const promise = new Promise((ok, fail) => { resolve = ok; reject = fail; });
    pending.set(key, { promise, resolve, reject });
    const script = document.createElement("script");
    script.src = "view/data/" + key + ".js";
    script.onerror = () => { pending.delete(key); reject(new Error("cannot load " + script.src)); };
    script.onload = () => script.remove();
    document.head.appendChild(script);
    return promise;
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "class") node.className = value;
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  const fmt = (v, d = 3) => (v === null || v === undefined ? "—" : typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(d)) : String(v));
  const show = (v) => (v === null || v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v));
  const OUTCOME_CLASS = { c: "ok", p: "part", w: "bad", i: "inv", s: "neutral", u: "neutral", f: "fail", "-": "none" };

  /* ---- tabs ------------------------------------------------------------------------------ */

  const browsers = new Map();
  let currentTab = "overview";

  function showTab(name) {
    const panes = document.querySelectorAll("section.tab");
    if (!document.getElementById("tab-" + name)) name = "overview";
    currentTab = name;
    panes.forEach((pane) => { pane.hidden = pane.id !== "tab-" + name; });
    document.querySelectorAll("nav.tabs a").forEach((a) => a.classList.toggle("active", a.dataset.tab === name));
    if (name === "overview") drawCharts();
    else openBrowser(name);
  }

  /* An item's address, `#item=ID` (the id percent-encoded), opens that item in the Items tab. */
  function itemAddress() {
    const hash = location.hash.slice(1);
    if (!hash.startsWith("item=")) return null;
    try { return decodeURIComponent(hash.slice(5)); } catch (error) { return hash.slice(5); }
  }

  function route() {
    const id = itemAddress();
    if (id === null) { showTab(location.hash.slice(1).split("/")[0] || "overview"); return; }
    showTab("items");
    const browser = browsers.get("items");
    if (browser) browser.ready.then(() => browser.openId(id));
  }

  window.addEventListener("hashchange", route);

  /* ---- charts ---------------------------------------------------------------------------- */

  let chartsDrawn = false;
  function drawCharts() {
    if (chartsDrawn) return;
    chartsDrawn = true;
    document.querySelectorAll(".vega[data-spec]").forEach((node) => {
      const spec = JSON.parse(document.getElementById(node.dataset.spec).textContent);
      if (typeof window.vegaEmbed !== "function") {
        node.append(el("p", { class: "muted" }, "The charting script (view/vega.js) did not load."));
        return;
      }
      window.vegaEmbed(node, spec, { actions: false, renderer: "svg" }).catch((error) => {
        node.append(el("p", { class: "muted" }, "This chart could not be drawn: " + error.message));
      });
    });
  }

  /* ---- browsers -------------------------------------------------------------------------- */

  function sources(table) {
    if (table === "items") {
      return config.map((run) => ({ run, key: run.items.key, title: "Items", note: "" }))
        .filter((s) => s.run.items.n > 0 || config.length === 1);
    }
    const found = [];
    for (const run of config) {
      for (const t of run.tables) if (t.table === table) found.push({ run, key: t.key, title: t.title, note: t.note, columns: t.columns });
    }
    return found;
  }

  function openBrowser(table) {
    const pane = document.querySelector('.browser[data-table="' + table + '"]');
    if (!pane || browsers.has(table)) return;
    const browser = new Browser(pane, table, sources(table));
    browsers.set(table, browser);
    browser.ready = browser.start();
  }

  class Browser {
    constructor(root, table, sources) {
      this.root = root;
      this.table = table;
      this.sources = sources;
      this.items = table === "items";
      this.pageSize = 50;
    }

    start() {
      if (!this.sources.length) {
        this.root.append(el("p", { class: "muted" }, "Nothing to show."));
        return Promise.resolve();
      }
      return this.useSource(0);
    }

    /* Open the item called `id`: in the first run that has it, on its page, filters cleared. */
    async openId(id) {
      for (let number = 0; number < this.sources.length; number += 1) {
        let ids;
        try {
          ids = await load(this.sources[number].key + "/ids");
        } catch (error) {
          continue; // a site written before items had addresses
        }
        const row = ids.indexOf(id);
        if (row < 0) continue;
        if (this.source !== this.sources[number]) await this.useSource(number);
        const at = this.visible.indexOf(row);
        if (at < 0) return;
        this.page = Math.floor(at / this.pageSize);
        await this.render();
        await this.open(row);
        return;
      }
      if (this.detail) this.detail.replaceChildren(el("p", { class: "warn" }, "No item " + id + " in " + (this.sources.length > 1 ? "these runs." : "this run.")));
    }

    async useSource(number) {
      this.source = this.sources[number];
      this.root.replaceChildren(el("p", { class: "muted" }, "Loading…"));
      try {
        this.index = await load(this.source.key + "/index");
      } catch (error) {
        this.root.replaceChildren(el("p", { class: "error" }, error.message));
        return;
      }
      this.filters = {};
      this.page = 0;
      this.selected = null;
      this.layout(number);
      this.apply();
    }

    layout(number) {
      const index = this.index;
      const bar = el("div", { class: "filters" });
      if (this.sources.length > 1) {
        bar.append(this.select("run", this.sources.map((s, i) => [String(i), s.run.run]), String(number), (v) => this.useSource(Number(v))));
      }
      this.counts = {};
      for (const facet of index.facets) {
        if (facet.values.length < 2 && !(facet.name === "task" && facet.values.length)) continue;
        const counts = new Array(facet.values.length).fill(0);
        for (const code of facet.rows) if (code >= 0) counts[code] += 1;
        const options = facet.values.map((v, i) => [String(i), v + " (" + counts[i].toLocaleString() + ")", v]);
        if (facet.name !== "task") options.sort((a, b) => a[2].localeCompare(b[2], undefined, { numeric: true }));
        bar.append(this.select(facet.name, [["", "all"], ...options], "", (v) => this.set(facet.name, v === "" ? null : Number(v))));
      }
      const models = index.models || [];
      if (this.items && models.length) {
        const modelOptions = models.length > 1 ? [["", "any model"], ...models.map((m, i) => [String(i), m])] : [["0", models[0]]];
        bar.append(this.select("model", modelOptions, models.length > 1 ? "" : "0", (v) => this.set("model", v === "" ? null : Number(v))));
        if (models.length === 1) this.filters.model = 0;
        const outcomes = Object.entries(index.outcomes).filter(([code]) => this.present(code));
        bar.append(this.select("outcome", [["", "any outcome"], ...outcomes], "", (v) => this.set("outcome", v || null)));
        if (models.length > 1) {
          const box = el("input", { type: "checkbox", onchange: (e) => this.set("disagree", e.target.checked) });
          bar.append(el("label", { class: "check" }, box, " models disagree"));
        }
      }
      bar.append(this.select("rows", [["25", "25 rows"], ["50", "50 rows"], ["100", "100 rows"], ["200", "200 rows"]], String(this.pageSize), (v) => { this.pageSize = Number(v); this.page = 0; this.render(); }));
      this.count = el("span", { class: "count" });
      bar.append(this.count);
      this.list = el("div", { class: "list" });
      this.pager = el("div", { class: "pager" });
      this.detail = el("div", { class: "detail" }, el("p", { class: "muted" }, "Select a row to see everything recorded about it."));
      const head = [];
      if (this.source.note) head.push(el("p", { class: "lead" }, this.source.note));
      if (index.problem) head.push(el("p", { class: "warn" }, "Prompts are not shown: " + index.problem));
      this.root.replaceChildren(...head, bar, el("div", { class: "split-view" + (this.items ? "" : " records") }, el("div", { class: "list-pane" }, this.list, this.pager), this.detail));
    }

    present(code) {
      const flags = this.index.flags;
      return Object.keys(flags).some((name) => name.startsWith("m") && flags[name].includes(code));
    }

    select(name, options, value, onChange) {
      const node = el("select", { "data-filter": name, "aria-label": name, onchange: (e) => onChange(e.target.value) },
        options.map(([v, label]) => el("option", { value: v, selected: v === value }, label)));
      return el("label", { class: "field" }, el("span", {}, name), node);
    }

    set(name, value) {
      if (value === null || value === false) delete this.filters[name];
      else this.filters[name] = value;
      this.page = 0;
      this.apply();
    }

    apply() {
      const index = this.index;
      const f = this.filters;
      const facets = index.facets.filter((facet) => f[facet.name] !== undefined);
      const flags = index.flags;
      const models = index.models || [];
      const outcomeRows = f.outcome ? (f.model !== undefined ? [flags["m" + f.model]] : models.map((_, m) => flags["m" + m])) : [];
      const disagree = f.disagree ? flags.disagree : null;
      const visible = new Int32Array(index.n);
      let count = 0;
      for (let i = 0; i < index.n; i += 1) {
        let ok = true;
        for (const facet of facets) if (facet.rows[i] !== f[facet.name]) { ok = false; break; }
        if (ok && outcomeRows.length) ok = outcomeRows.some((row) => row[i] === f.outcome);
        if (ok && disagree) ok = disagree[i] === "d";
        if (ok) visible[count++] = i;
      }
      this.visible = visible.subarray(0, count);
      this.render();
    }

    async render() {
      const start = this.page * this.pageSize;
      const rows = Array.from(this.visible.subarray(start, start + this.pageSize));
      const shard = this.index.shard;
      const needed = [...new Set(rows.map((i) => Math.floor(i / shard)))];
      const what = this.items ? "items" : "rows";
      this.count.textContent = this.visible.length.toLocaleString() + " of " + this.index.n.toLocaleString() + " " + what;
      let shards;
      try {
        shards = await Promise.all(needed.map((s) => load(this.source.key + "/rows-" + s)));
      } catch (error) {
        this.list.replaceChildren(el("p", { class: "error" }, error.message));
        return;
      }
      const byShard = new Map(needed.map((s, k) => [s, shards[k]]));
      const body = el("tbody");
      for (const i of rows) {
        const row = byShard.get(Math.floor(i / shard))[i % shard];
        const tr = this.items ? this.itemRow(i, row) : this.recordRow(i, row);
        tr.dataset.row = i;
        tr.tabIndex = 0;
        tr.addEventListener("click", () => this.open(i));
        tr.addEventListener("keydown", (e) => { if (e.key === "Enter") this.open(i); });
        if (i === this.selected) tr.classList.add("selected");
        body.append(tr);
      }
      const head = this.items ? ["#", "item", "task", "question", "gold", ...(this.index.models || [])] : ["#", ...this.source.columns];
      this.list.replaceChildren(el("table", { class: "rows" }, el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))), body));
      if (!rows.length) this.list.append(el("p", { class: "muted" }, "No row matches these filters."));
      this.paging();
    }

    itemRow(i, row) {
      const [id, snippet, gold, extracted] = row;
      const task = this.index.facets[0];
      const cells = [el("td", { class: "num muted" }, String(i + 1)), el("td", { class: "id" }, id), el("td", { class: "task" }, task.values[task.rows[i]] || ""), el("td", { class: "snippet" }, el("div", { class: "clamp" }, snippet)), el("td", { class: "gold" }, gold)];
      (this.index.models || []).forEach((_, m) => {
        const code = this.index.flags["m" + m][i];
        cells.push(el("td", { class: "answer " + OUTCOME_CLASS[code], title: this.index.outcomes[code] }, extracted[m] || (code === "i" ? "invalid" : code === "f" ? "failed" : "")));
      });
      return el("tr", {}, cells);
    }

    recordRow(i, row) {
      return el("tr", {}, el("td", { class: "num muted" }, String(i + 1)), row.map((v) => el("td", {}, el("div", { class: "clamp" }, v))));
    }

    paging() {
      const pages = Math.max(1, Math.ceil(this.visible.length / this.pageSize));
      const go = (p) => { this.page = Math.min(pages - 1, Math.max(0, p)); this.render(); };
      this.pager.replaceChildren(
        el("button", { onclick: () => go(0), disabled: this.page === 0 }, "«"),
        el("button", { onclick: () => go(this.page - 1), disabled: this.page === 0, "data-page": "prev" }, "‹ previous"),
        el("span", {}, "page " + (this.page + 1).toLocaleString() + " of " + pages.toLocaleString()),
        el("button", { onclick: () => go(this.page + 1), disabled: this.page >= pages - 1, "data-page": "next" }, "next ›"),
        el("button", { onclick: () => go(pages - 1), disabled: this.page >= pages - 1 }, "»"),
      );
    }

    async open(i) {
      this.selected = i;
      this.list.querySelectorAll("tr.selected").forEach((tr) => tr.classList.remove("selected"));
      const tr = this.list.querySelector('tr[data-row="' + i + '"]');
      if (tr) tr.classList.add("selected");
      const shard = this.index.shard;
      let records;
      try {
        records = await load(this.source.key + "/detail-" + Math.floor(i / shard));
      } catch (error) {
        this.detail.replaceChildren(el("p", { class: "error" }, error.message));
        return;
      }
      const record = records[i % shard];
      this.detail.replaceChildren(...(this.items ? itemDetail(record, this.index, i) : recordDetail(record)));
      this.detail.scrollTop = 0;
    }
  }

  /* ---- an item's detail ------------------------------------------------------------------ */

  function pre(text, cls) {
    return el("pre", { class: cls || "" }, show(text));
  }

  function kv(pairs) {
    return el("dl", { class: "kv" }, pairs.filter(([, v]) => v !== undefined && v !== null && v !== "").map(([k, v]) => el("div", {}, el("dt", {}, k), el("dd", {}, v instanceof Node ? v : show(v)))));
  }

  function promptView(prompt) {
    const parts = [el("h4", {}, "Prompt as sent")];
    if (prompt.pair) {
      if (prompt.pair.context) parts.push(el("div", { class: "message" }, el("span", { class: "role" }, "context"), pre(prompt.pair.context)));
      parts.push(el("div", { class: "message good" }, el("span", { class: "role" }, "grammatical"), pre(prompt.pair.good)));
      parts.push(el("div", { class: "message bad" }, el("span", { class: "role" }, "ungrammatical"), pre(prompt.pair.bad)));
      parts.push(el("p", { class: "muted" }, "Scored by log-likelihood: the model is right when the grammatical sentence is the more probable."));
      return parts;
    }
    if (prompt.error) {
      parts.push(el("p", { class: "warn" }, prompt.error), el("h4", {}, "Template variables"), pre(JSON.stringify(prompt.vars, null, 2)));
      return parts;
    }
    for (const message of prompt.messages || []) {
      parts.push(el("div", { class: "message " + message.role }, el("span", { class: "role" }, message.role), pre(message.content)));
    }
    for (const shown of prompt.orders || []) {
      parts.push(el("h5", {}, shown.order === "good-first" ? "Grammatical sentence first" : "Grammatical sentence second"));
      for (const message of shown.messages) {
        parts.push(el("div", { class: "message " + message.role }, el("span", { class: "role" }, message.role), pre(message.content)));
      }
    }
    if (prompt.orders) parts.push(el("p", { class: "muted" }, "Asked as a forced choice, in both orders: right in an order when the reply names the grammatical sentence."));
    parts.push(el("p", { class: "muted small" }, "template " + prompt.template));
    return parts;
  }

  function judgeView(judge) {
    const rows = Object.entries(judge.dimensions || {}).map(([name, score]) => el("tr", {}, el("td", {}, name), el("td", { class: "num" }, fmt(score, 1)), el("td", { class: "num muted" }, judge.points && judge.points[name] !== undefined ? "of " + fmt(judge.points[name], 0) : "")));
    const parts = [el("h5", {}, "Rubric judgment · " + (judge.rubric || "") + (judge.rubric_version ? " v" + judge.rubric_version : ""))];
    if (judge.error) parts.push(el("p", { class: "error" }, judge.error));
    if (rows.length) parts.push(el("table", { class: "dims" }, el("tbody", {}, rows, el("tr", { class: "total" }, el("td", {}, "total"), el("td", { class: "num" }, fmt(judge.total, 1)), el("td", { class: "num muted" }, judge.scale ? judge.scale.join("–") : "")))));
    if (judge.reason) parts.push(el("p", { class: "reason" }, judge.reason));
    if (judge.verdicts) {
      const verdicts = judge.verdicts.map((v) => el("tr", {}, el("td", {}, v.judge || "?"), el("td", { class: "num" }, v.total === undefined ? "–" : fmt(v.total, 1)), el("td", { class: v.error ? "error" : "muted" }, v.error || v.reason || "")));
      parts.push(el("table", { class: "dims" }, el("tbody", {}, verdicts)));
    }
    parts.push(el("p", { class: "muted small" }, "judge " + (judge.judge || "?")));
    return el("div", { class: "judge" }, parts);
  }

  function answerView(model, answer, outcomes, prompt) {
    if (!answer) return el("div", { class: "answer-card none" }, el("h4", {}, model), el("p", { class: "muted" }, "No answer recorded."));
    const scores = Object.entries(answer.scores || {}).map(([k, v]) => k + " " + fmt(v));
    const changed = prompt && prompt.hash && answer.prompt_hash && prompt.hash !== answer.prompt_hash;
    const card = el("div", { class: "answer-card " + OUTCOME_CLASS[answer.outcome] },
      el("h4", {}, model, " ", el("span", { class: "badge " + OUTCOME_CLASS[answer.outcome] }, outcomes[answer.outcome])),
      answer.raw !== null && answer.raw !== undefined ? pre(answer.raw, "raw") : null,
      kv([
        ["extraction rule", answer.rule],
        ["extracted", answer.extracted === null ? "— (nothing readable)" : show(answer.extracted)],
        ["invalid because", answer.invalid_reason],
        ["score", scores.join(", ")],
        ["latency", answer.latency !== null && answer.latency !== undefined ? fmt(answer.latency, 3) + " s" : null],
        ["from cache", answer.cached === undefined || answer.cached === null ? null : answer.cached ? "yes" : "no"],
        ["error", answer.error],
      ]));
    if (changed) card.append(el("p", { class: "warn small" }, "The template changed since this answer: the prompt above is rendered from the current file."));
    if (answer.logprobs) card.append(kv(Object.entries(answer.logprobs).map(([k, v]) => [k, fmt(v)])));
    for (const choice of answer.choices || []) {
      card.append(el("h5", {}, choice.order === "good-first" ? "grammatical sentence first" : "grammatical sentence second"));
      if (choice.raw !== null && choice.raw !== undefined) card.append(pre(choice.raw, "raw"));
      card.append(kv([["read as", choice.extracted === null ? "— (nothing readable)" : show(choice.extracted)], ["chose", choice.chose], ["rule", choice.rule], ["invalid because", choice.invalid_reason]]));
    }
    if (answer.judge) card.append(judgeView(answer.judge));
    if (answer.details) card.append(el("details", {}, el("summary", {}, "scoring details"), pre(JSON.stringify(answer.details, null, 2))));
    return card;
  }

  function itemDetail(record, index, i) {
    const parts = [el("h3", { class: "id" }, record.id), el("p", { class: "chips" }, index.facets.filter((f) => f.rows[i] >= 0).map((f) => el("span", { class: "chip" }, el("b", {}, f.name), " ", f.values[f.rows[i]])))];
    parts.push(...promptView(record.prompt || {}));
    parts.push(el("h4", {}, "Gold"), pre(record.gold === null || record.gold === undefined ? "— (no gold answer)" : record.gold, "gold"));
    const models = index.models || [];
    if (models.length) {
      const disagree = index.flags.disagree && index.flags.disagree[i] === "d";
      parts.push(el("h4", {}, "Answers", disagree ? el("span", { class: "badge warn" }, "models disagree") : null));
      parts.push(el("div", { class: "answers" + (models.length > 1 ? " side" : "") }, models.map((m, k) => answerView(m, record.answers[k], index.outcomes, record.prompt))));
    }
    parts.push(el("details", { class: "meta", open: !models.length }, el("summary", {}, "metadata and provenance"), metaView(record.meta || {})));
    return parts;
  }

  function checksView(checks) {
    return el("ul", { class: "checks" }, checks.map((c) => el("li", {}, el("span", { class: "badge " + (c.passed ? "ok" : "bad") }, c.passed ? "pass" : "fail"), " ", el("b", {}, c.check || ""), " ", c.reason || "", c.decided_by && c.decided_by !== "agent" ? " (" + c.decided_by + ")" : "")));
  }

  function metaView(meta) {
    const provenance = meta.provenance;
    const rest = Object.assign({}, meta);
    delete rest.provenance;
    const parts = [pre(JSON.stringify(rest, null, 2))];
    if (provenance) {
      if (provenance.checks && provenance.checks.length) parts.push(el("h5", {}, "Checks"), checksView(provenance.checks));
      parts.push(el("h5", {}, "Provenance"), pre(JSON.stringify(provenance, null, 2)));
    }
    return el("div", {}, parts);
  }

  function recordDetail(record) {
    const provenance = record.provenance || {};
    const parts = [el("h3", { class: "id" }, show(record.id || record.instance_id || record.instance || record.stage || "record"))];
    parts.push(kv(Object.entries(record).filter(([k, v]) => typeof v !== "object" || v === null).map(([k, v]) => [k, v])));
    if (provenance.agent) parts.push(kv([["agent", provenance.agent], ["model", provenance.model]]));
    if (provenance.checks && provenance.checks.length) parts.push(el("h4", {}, "Verdicts"), checksView(provenance.checks));
    if (provenance.notes && provenance.notes.length) parts.push(el("h4", {}, "Notes"), el("ul", { class: "notes" }, provenance.notes.map((n) => el("li", {}, n))));
    const nested = Object.entries(record).filter(([, v]) => v && typeof v === "object");
    for (const [k, v] of nested) parts.push(el("details", { open: k === "provenance" ? false : true }, el("summary", {}, k), pre(JSON.stringify(v, null, 2))));
    return parts;
  }

  /* ---- keyboard: j / k move through the open browser's rows --------------------------------- */

  document.addEventListener("keydown", (event) => {
    if (event.target.matches("input, select, textarea") || (event.key !== "j" && event.key !== "k")) return;
    const browser = browsers.get(currentTab);
    if (!browser || !browser.visible || !browser.visible.length) return;
    const at = browser.visible.indexOf(browser.selected);
    const next = Math.min(browser.visible.length - 1, Math.max(0, at + (event.key === "j" ? 1 : -1)));
    const page = Math.floor(next / browser.pageSize);
    if (page !== browser.page) { browser.page = page; browser.render(); }
    browser.open(browser.visible[next]);
  });

  route();
})();
