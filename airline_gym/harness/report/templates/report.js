// airline-gym report: the list, its filters and search, and one simulation drawn when opened.
// Every string from a results file goes into the page as a text node (append(string),
// textContent), never as HTML, so whatever a model wrote shows as written and never runs.
(function () {
  "use strict";
  var index = JSON.parse(document.getElementById("report-index").textContent);
  var runs = index.runs;
  var two = runs.length > 1;
  var searchTexts = null;
  var listScroll = 0;

  function el(tag, attrs) {
    var node = document.createElement(tag);
    var key;
    for (key in attrs || {}) {
      if (key === "class") node.className = attrs[key];
      else if (attrs[key] !== null && attrs[key] !== undefined) node.setAttribute(key, attrs[key]);
    }
    for (var i = 2; i < arguments.length; i++) {
      var kid = arguments[i];
      if (kid === null || kid === undefined) continue;
      if (Array.isArray(kid)) kid.forEach(function (k) { if (k !== null && k !== undefined) node.append(k); });
      else node.append(kid instanceof Node ? kid : String(kid));
    }
    return node;
  }

  // a simulation's key as text (data-key, data-rendered) and as a link: in the link the task id
  // is percent-encoded, so a newline, a tab or a "%20" in it survives the URL and opens its own
  // simulation (a browser drops newlines and tabs from a URL, and "%20" would decode to " ")
  function simKey(task, trial) { return "task-" + task + "-trial-" + trial; }
  function linkKey(task, trial) { return "task-" + encodeURIComponent(task) + "-trial-" + trial; }

  function decodeLoose(raw) {
    // percent-escapes decoded; a "%" that starts none (typed by hand) is kept as written
    try { return decodeURIComponent(raw); } catch (e) {
      return raw.replace(/(%[0-9a-fA-F]{2})+/g, function (run) {
        try { return decodeURIComponent(run); } catch (e2) { return run; }
      });
    }
  }

  function hashTarget() {
    // the simulation the fragment names: its task id is decoded once, after the split
    var match = /^task-(.+)-trial-(\d+)$/.exec(location.hash.slice(1));
    return match ? { task: decodeLoose(match[1]), trial: Number(match[2]) } : null;
  }

  function taskOrder(a, b) {
    var na = /^\d+$/.test(a), nb = /^\d+$/.test(b);
    if (na && nb) return Number(a) - Number(b);
    if (na !== nb) return na ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }

  // --- the packed details (messages, grade, flags): gzip + base64, decoded once per run ---
  function decode(text) {
    var bin = atob(text.trim());
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    if (typeof DecompressionStream === "undefined") {
      return Promise.reject(new Error("this browser cannot decompress the transcripts (no DecompressionStream)"));
    }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }

  var packedLines = [];
  var decodedChunks = [];
  function detail(run, i) {
    // one simulation's transcript and grade; its line of index.chunk simulations is decoded once
    if (!packedLines[run]) {
      packedLines[run] = document.getElementById("report-details-" + run).textContent.trim().split("\n");
      decodedChunks[run] = [];
    }
    var c = Math.floor(i / index.chunk);
    if (!decodedChunks[run][c]) decodedChunks[run][c] = decode(packedLines[run][c]);
    return decodedChunks[run][c].then(function (sims) { return sims[i % index.chunk]; });
  }

  function details(run) {
    return Promise.all(runs[run].sims.map(function (_, i) { return detail(run, i); }));
  }

  // --- the list and its filters ---
  var rows = [];
  function buildList() {
    var tbody = document.querySelector("#sim-list tbody");
    var tasks = {}, terms = {}, tools = {};
    var frag = document.createDocumentFragment();
    runs.forEach(function (run, r) {
      run.sims.forEach(function (s, i) {
        tasks[s.task] = 1; terms[s.termination] = 1;
        s.tools.forEach(function (t) { tools[t] = 1; });
        var key = simKey(s.task, s.trial), link = linkKey(s.task, s.trial);
        var reward = s.judge_failed ? "no verdict (judge failed)" : s.reward === null ? "none" : String(s.reward);
        var tr = el("tr", { class: s.ok ? "ok" : "fail", "data-run": r, "data-index": i, "data-key": key },
          two ? el("td", null, "AB"[r]) : null,
          el("td", null, el("a", { href: "#" + link }, s.task)),
          el("td", null, s.trial),
          el("td", { class: "reward" }, reward),
          el("td", null, s.termination),
          el("td", null, s.tool_errors),
          el("td", null, s.flags || ""),
          el("td", { class: "tools" }, s.tools.join(", ")));
        tr.addEventListener("click", function (e) {
          if (e.target.tagName !== "A") location.hash = link;
        });
        rows.push({ tr: tr, run: r, index: i, sim: s });
        frag.append(tr);
      });
    });
    tbody.append(frag);
    fill("f-task", Object.keys(tasks).sort(taskOrder));
    fill("f-termination", Object.keys(terms).sort());
    fill("f-tool", Object.keys(tools).sort());
  }

  function fill(id, values) {
    var select = document.getElementById(id);
    values.forEach(function (v) { select.append(el("option", { value: v }, v)); });
  }

  function value(id) {
    var node = document.getElementById(id);
    return node ? node.value : "";
  }

  function ensureSearchTexts() {
    if (searchTexts) return Promise.resolve(searchTexts);
    return Promise.all(runs.map(function (_, r) { return details(r); })).then(function (all) {
      searchTexts = all.map(function (sims) {
        return sims.map(function (d) {
          var parts = [];
          d.messages.forEach(function (m) {
            if (m.text) parts.push(m.text);
            (m.calls || []).forEach(function (c) { parts.push(c.name, c.arguments); });
          });
          return parts.join("\n").toLowerCase();
        });
      });
      return searchTexts;
    });
  }

  var filterGeneration = 0;
  function applyFilters() {
    var generation = ++filterGeneration;
    var run = value("f-run"), task = value("f-task"), outcome = value("f-outcome");
    var term = value("f-termination"), tool = value("f-tool");
    var text = value("f-text").trim().toLowerCase();
    var ready = text ? ensureSearchTexts() : Promise.resolve(null);
    return ready.then(function (texts) {
      if (generation !== filterGeneration) return;
      var shown = 0;
      rows.forEach(function (row) {
        var s = row.sim;
        var keep = (run === "" || String(row.run) === run) &&
          (task === "" || s.task === task) &&
          (outcome === "" || (outcome === "success") === s.ok) &&
          (term === "" || s.termination === term) &&
          (tool === "" || s.tools.indexOf(tool) >= 0) &&
          (!texts || texts[row.run][row.index].indexOf(text) >= 0);
        row.tr.hidden = !keep;
        if (keep) shown++;
      });
      document.getElementById("shown").textContent = shown + " of " + rows.length + " simulations shown";
      document.body.setAttribute("data-filtered", String(generation));
    }, function (err) {
      document.getElementById("shown").textContent = "search unavailable: " + err.message;
    });
  }

  // --- one simulation ---
  var ROLE_NAMES = { assistant: "agent", user: "customer", tool: "tool result", system: "system" };

  function pretty(text) {
    if (typeof text !== "string") return text === null || text === undefined ? "" : String(text);
    var t = text.trim();
    if (t[0] !== "{" && t[0] !== "[") return text;
    try { return JSON.stringify(JSON.parse(t), null, 2); } catch (e) { return text; }
  }

  function highlighted(text, marks, run) {
    // marks: [{start, end, info, n}] in UTF-16 units, as JavaScript strings count
    var out = [], at = 0;
    marks.sort(function (a, b) { return a.start - b.start; }).forEach(function (m) {
      if (m.start < at) return;
      out.push(text.slice(at, m.start));
      out.push(el("mark", { id: "said-" + run + "-" + m.n, title: "communicate: " + m.info }, text.slice(m.start, m.end)));
      at = m.end;
    });
    out.push(text.slice(at));
    return out;
  }

  function transcript(run, d) {
    var marks = {}, flags = {};
    d.grade.communicate.forEach(function (c, n) {
      if (c.index !== null && c.span) {
        (marks[c.index] = marks[c.index] || []).push({ start: c.span[0], end: c.span[1], info: c.info, n: n });
      }
    });
    d.flags.forEach(function (f) {
      if (f.index !== null) (flags[f.index] = flags[f.index] || []).push(f);
    });
    return el("div", { class: "transcript" }, d.messages.map(function (m, i) {
      var role = m.role;
      var head = el("div", { class: "msg-head" }, "#" + i + " " + (ROLE_NAMES[role] || role),
        role === "tool" && m.tool ? " (" + m.tool + ")" : null,
        m.error ? el("span", { class: "badge error" }, "error") : null);
      var body = null;
      if (m.text !== null && m.text !== undefined && m.text !== "") {
        body = role === "tool"
          ? el("pre", { class: "tool-output" }, pretty(m.text))
          : el("div", { class: "text" }, marks[i] ? highlighted(m.text, marks[i], run) : m.text);
      }
      var calls = (m.calls || []).map(function (c) {
        return el("div", { class: "call" }, el("span", { class: "call-name" }, "\u2192 " + c.name),
          el("pre", { class: "args" }, pretty(c.arguments)));
      });
      var flagNodes = (flags[i] || []).map(function (f) {
        return el("div", { class: "flag" }, el("span", { class: "badge flag-kind" }, f.kind), " ", f.evidence);
      });
      return el("div", { class: "msg role-" + role + (m.error ? " error" : "") + (flags[i] ? " flagged" : ""), id: "m-" + run + "-" + i },
        head, body, calls, flagNodes);
    }));
  }

  function yesNo(v) { return v === true ? "yes" : v === false ? "no" : "not recorded"; }

  function gradePanel(run, s, d) {
    var g = d.grade;
    var parts = [el("h3", null, "Grade")];
    var regraded = g.regraded === null
      ? "not re-graded" + (g.regrade_error ? ": " + g.regrade_error : "")
      : "re-graded " + g.regraded + (s.reward !== null && Math.abs(g.regraded - s.reward) > 1e-9 ? " (disagrees with the file)" : " (agrees)");
    parts.push(el("table", { class: "facts" },
      el("tr", null, el("th", null, "reward"), el("td", { class: "reward-value" }, s.judge_failed ? "no verdict (the NL judge failed; recorded " + s.reward + ")" : s.reward === null ? "none recorded" : String(s.reward), " ", el("span", { class: "badge " + (s.ok ? "ok" : "fail") }, s.ok ? "success" : s.judge_failed ? "judge failed" : "failure"))),
      el("tr", null, el("th", null, "re-grade"), el("td", null, regraded)),
      el("tr", null, el("th", null, "reward basis"), el("td", null, g.basis.join(" x ") || "not recorded")),
      el("tr", null, el("th", null, "termination"), el("td", { class: "termination" }, s.termination || "not recorded")),
      g.judge_error ? el("tr", null, el("th", null, "NL judge"), el("td", { class: "judge-error" }, "failed, no verdict (the reward is no grade): " + g.judge_error)) : null,
      g.cause && g.cause !== g.judge_error ? el("tr", null, el("th", null, "cause"), el("td", { class: "cause" }, g.cause)) : null,
      g.replay_mismatches ? el("tr", null, el("th", null, "replay"), el("td", null, g.replay_mismatches + " replayed tool output(s) differ from the recorded ones")) : null));

    parts.push(el("h4", null, "Database: ", el("span", { class: "db-match " + (g.db_match ? "ok" : "fail") }, g.db_match === true ? "matches the gold DB" : g.db_match === false ? "differs from the gold DB" : "no DB check recorded")));
    if (g.db_diff.length) {
      parts.push(el("div", { class: "db-diff" }, g.db_diff.map(function (f) {
        return el("div", { class: "field" },
          el("div", { class: "where" }, el("code", null, f.table + "[" + f.key + "]" + (f.path || "")), f.path ? null : " (whole record)"),
          el("div", { class: "values" },
            el("div", { class: "expected" }, el("span", { class: "label" }, "expected"), el("pre", null, pretty(f.expected))),
            el("div", { class: "got" }, el("span", { class: "label" }, "got"), el("pre", null, pretty(f.got)))));
      })));
    }
    if (g.db_diff_text.length) {
      parts.push(el("ul", { class: "db-diff-text" }, g.db_diff_text.map(function (t) { return el("li", null, t); })));
    }

    parts.push(el("h4", null, "Communicate"));
    if (!g.communicate.length) parts.push(el("p", { class: "muted" }, "nothing to communicate in this task"));
    parts.push(el("ul", { class: "communicate" }, g.communicate.map(function (c, n) {
      var where;
      if (c.met && c.index !== null) {
        where = el("a", { href: "#" + linkKey(s.task, s.trial), "data-target": "said-" + run + "-" + n, class: "said-link" }, "said in message #" + c.index);
      } else if (c.met) {
        where = el("span", null, "said" + (c.note ? ": " + c.note : ""));
      } else {
        where = el("span", { class: "never" }, "never said");
      }
      return el("li", { class: c.met ? "ok" : "fail" }, el("q", null, c.info), " \u2014 ", where);
    })));

    parts.push(el("h4", null, "Action checks (diagnostic)"));
    if (!g.actions.length) parts.push(el("p", { class: "muted" }, "no gold actions"));
    parts.push(el("ul", { class: "actions" }, g.actions.map(function (a) {
      return el("li", { class: a.met ? "ok" : "fail" }, a.met ? "\u2713 " : "\u2717 ", el("code", null, a.name + "(" + a.arguments + ")"));
    })));

    if (d.flags.length) {
      parts.push(el("h4", null, "Customer-audit flags"));
      parts.push(el("ul", { class: "flags" }, d.flags.map(function (f) {
        return el("li", null, el("span", { class: "badge flag-kind" }, f.kind), " ",
          f.index !== null ? "message #" + f.index + ": " : "", f.evidence);
      })));
    }
    return el("div", { class: "grade" }, parts);
  }

  function pane(run, i, d) {
    var s = runs[run].sims[i];
    return el("section", { class: "pane " + (s.ok ? "ok" : "fail"), "data-run": run },
      el("h2", null, (two ? "Run " + "AB"[run] + " \u2014 " : "") + "task " + s.task + ", trial " + s.trial,
        " ", el("span", { class: "badge " + (s.ok ? "ok" : "fail") }, s.ok ? "success" : "failure")),
      el("p", { class: "muted" }, runs[run].label + (s.id ? " \u00b7 simulation " + s.id : "")),
      el("div", { class: "pane-body" }, transcript(run, d), gradePanel(run, s, d)));
  }

  function showSimulation(task, trial) {
    var key = simKey(task, trial);
    var found = [];
    runs.forEach(function (run, r) {
      run.sims.forEach(function (s, i) { if (s.task === task && s.trial === trial) found.push([r, i]); });
    });
    var view = document.getElementById("sim-view");
    var panes = document.getElementById("sim-panes");
    document.getElementById("sim-title").textContent = "task " + task + ", trial " + trial;
    view.removeAttribute("data-rendered");
    panes.replaceChildren(el("p", { class: "muted" }, found.length ? "loading\u2026" : "no simulation of task " + task + ", trial " + trial + " in this report"));
    panes.className = "panes-" + Math.max(1, found.length);
    if (!found.length) return Promise.resolve();
    return Promise.all(found.map(function (f) { return detail(f[0], f[1]); })).then(function (all) {
      var now = hashTarget();
      if (!now || simKey(now.task, now.trial) !== key) return;
      panes.replaceChildren.apply(panes, found.map(function (f, n) { return pane(f[0], f[1], all[n]); }));
      view.setAttribute("data-rendered-ms", performance.now().toFixed(1));
      view.setAttribute("data-rendered", key);
    }, function (err) {
      panes.replaceChildren(el("p", { class: "error" }, "cannot show the transcript: " + err.message));
    });
  }

  function route() {
    var target = hashTarget();
    var listView = document.getElementById("list-view");
    var simView = document.getElementById("sim-view");
    if (target) {
      if (!listView.hidden) listScroll = window.scrollY;
      listView.hidden = true;
      simView.hidden = false;
      window.scrollTo(0, 0);
      showSimulation(target.task, target.trial);
    } else {
      simView.hidden = true;
      listView.hidden = false;
      window.scrollTo(0, listScroll);
    }
  }

  // --- wiring ---
  buildList();
  ["f-run", "f-task", "f-outcome", "f-termination", "f-tool"].forEach(function (id) {
    var node = document.getElementById(id);
    if (node) node.addEventListener("change", applyFilters);
  });
  var typing = null;
  // decoding every transcript for the search starts when the box gets the focus, not on load
  document.getElementById("f-text").addEventListener("focus", function () { ensureSearchTexts(); });
  document.getElementById("f-text").addEventListener("input", function () {
    clearTimeout(typing);
    typing = setTimeout(applyFilters, 150);
  });
  document.getElementById("filters").addEventListener("submit", function (e) { e.preventDefault(); });
  document.addEventListener("click", function (e) {
    var link = e.target.closest ? e.target.closest("a") : null;
    if (!link) return;
    if (link.classList.contains("set-filter")) {
      e.preventDefault();
      document.getElementById("f-" + link.getAttribute("data-filter")).value = link.getAttribute("data-value");
      var runSelect = document.getElementById("f-run");
      if (runSelect) runSelect.value = link.getAttribute("data-run");
      applyFilters();
      document.getElementById("simulations").scrollIntoView();
    } else if (link.classList.contains("said-link")) {
      e.preventDefault();
      var target = document.getElementById(link.getAttribute("data-target"));
      if (target) { target.scrollIntoView({ block: "center" }); target.classList.add("pulse"); }
    }
  });
  window.addEventListener("hashchange", route);
  applyFilters();
  route();
  document.body.setAttribute("data-ready-ms", performance.now().toFixed(1));
  document.body.setAttribute("data-ready", "1");
})();
