// olympiad-eval report viewer: configures MathJax (loaded after this file, from the report's own
// assets) to typeset only the `.math-text` elements, safely; filters and sorts a cell's index, with
// the view kept in the URL, says when no row matches, and typesets its rows' answers as they come on
// screen; and fills a side-by-side page with each model's column, from the data files the report's
// stages write (`OE.models`, `OE.column`, `OE.outcomes`). Everything this script puts into a page is
// either text (textContent) or HTML the report's own stages wrote and escaped.
"use strict";

window.MathJax = {
  loader: {
    // The safe extension (assets/mathjax/ui/safe.js): what the typeset text itself asks for never
    // reaches the page as a link, a style, a class or an id.
    load: ["ui/safe"],
  },
  tex: {
    inlineMath: [["$", "$"], ["\\(", "\\)"]],
    displayMath: [["$$", "$$"], ["\\[", "\\]"]],
    processEscapes: true,
    // \require would load more of MathJax by a name the text gives; every extension is in the build.
    packages: { "[-]": ["require", "autoload"] },
  },
  options: {
    ignoreHtmlClass: "tex2jax_ignore",
    processHtmlClass: "math-text",
    enableMenu: false,
    safeOptions: {
      // \href: no link at all (not even to another page of the report: a response has none to make);
      // \style, \class, \cssId: nothing of the text's own reaches CSS.
      allow: { URLs: "none", classes: "none", cssIDs: "none", styles: "none" },
    },
  },
  svg: { fontCache: "global" },
  startup: { typeset: true },
};

// The data files the report's stages write call these (each a script of the report's own folder).
var OE = (window.OE = {
  plan: null, // a suite's models, their cells and colours (compare/<suite>/models.js, the root's)
  outcomes: null, // a suite's problems' status per model (compare/<suite>/outcomes.js, the root's)
  columns: {}, // model -> {problem id -> its column's HTML} (cells/<suite>/<model>/side/<shard>.js)
  tex: new WeakMap(), // a cell index's row -> its answers' LaTeX, kept when they are typeset (the search reads it)
  models: function (data) { OE.plan = data; },
  outcome: function (data) { OE.outcomes = data; },
  column: function (model, shard, data) { OE.columns[model] = data; },
});

(function () {
  function naturalKey(text) {
    return String(text).split(/(\d+)/).map(function (part, index) {
      return index % 2 ? part.padStart(12, "0") : part.toLowerCase();
    }).join("");
  }

  // Once MathJax is ready (it loads deferred), typeset what was added to `element` (or to each of a
  // list of elements) since. Asked before MathJax has run: on most pages its start-up typesets the
  // whole page; on a page that loads it late (`loadMathJax`), what was asked is typeset once it has.
  var waiting = [];
  function typeset(element) {
    var mathjax = window.MathJax;
    var elements = Array.isArray(element) ? element : [element];
    if (!mathjax || !mathjax.startup || !mathjax.startup.promise) {
      waiting.push.apply(waiting, elements);
      return Promise.resolve();
    }
    return mathjax.startup.promise.then(function () { return mathjax.typesetPromise(elements); });
  }

  // ---------------------------------------------------------------- the view in the URL
  // `#status=wrong&group=IPhO_2025&q=friction&jd=1&sort=score&order=desc`: the fragment, so that a
  // page opened from disk keeps it, and changing it reloads nothing.

  function readView() {
    var view = {};
    new URLSearchParams(window.location.hash.replace(/^#/, "")).forEach(function (value, key) {
      view[key] = value;
    });
    return view;
  }

  function writeView(view) {
    var params = new URLSearchParams();
    Object.keys(view).forEach(function (key) {
      if (view[key] !== undefined && view[key] !== "" && view[key] !== "all" && view[key] !== false) {
        params.set(key, view[key] === true ? "1" : view[key]);
      }
    });
    var hash = params.toString();
    var url = window.location.href.split("#")[0] + (hash ? "#" + hash : "");
    if (url !== window.location.href) {
      window.history.replaceState(null, "", url);
    }
  }

  // ---------------------------------------------------------------- a cell's index

  var STATUS_ORDER = { correct: 0, partial: 1, wrong: 2, "judge-error": 3, failed: 4 };
  var SCORED = { c: "correct", p: "partial", w: "wrong" };

  function setUpIndex() {
    var search = document.getElementById("search");
    var statusFilter = document.getElementById("status-filter");
    var groupFilter = document.getElementById("group-filter");
    var judgesDisagree = document.getElementById("judges-disagree");
    var modelsDisagree = document.getElementById("models-disagree");
    var count = document.getElementById("shown-count");
    var noMatch = document.getElementById("no-match");
    var table = document.querySelector("table.problems");
    if (!search || !statusFilter || !groupFilter || !table) {
      return;
    }
    // The rows come in bodies (report/cell.py): a body off screen is sized by the rows it shows.
    var bodies = Array.prototype.slice.call(table.tBodies);
    var perBody = Math.max(1, bodies[0].rows.length);
    var rows = Array.prototype.slice.call(table.querySelectorAll("tr.problem-row"));
    var texts = null; // each row's text, read at the first search
    if (rows.length) {
      table.style.setProperty("--row-height", rows[0].getBoundingClientRect().height + "px");
    }
    // Whether the plan's models disagree on each row's problem: the status of the problem in each
    // model's cell, from the suite's outcomes (the root stage's); those scored (right, partly right,
    // wrong) are compared, a failed generation or a judge error is no verdict to disagree with.
    var disagree = null;
    if (modelsDisagree) {
      if (OE.outcomes && OE.outcomes.statuses) {
        disagree = rows.map(function (row) {
          var said = OE.outcomes.statuses[row.dataset.id] || "", seen = {};
          for (var i = 0; i < said.length; i++) { if (SCORED[said[i]]) { seen[said[i]] = true; } }
          return Object.keys(seen).length > 1;
        });
      } else {
        modelsDisagree.disabled = true;
        modelsDisagree.parentNode.title = "the report's root stage has not written the suite's outcomes yet";
      }
    }
    var sorted = { key: null, descending: false };

    function keep(row, index, words, status, group) {
      var data = row.dataset;
      if (group !== "all" && data.group !== group) { return false; }
      if (status === "wrong" && data.status !== "wrong") { return false; }
      if (status === "judge-error" && data.status !== "judge-error") { return false; }
      if (status === "truncated" && data.truncated !== "1") { return false; }
      if (status === "undecided" && data.undecided !== "1") { return false; }
      if (judgesDisagree && judgesDisagree.checked && data.judgesDisagree !== "1") { return false; }
      if (modelsDisagree && modelsDisagree.checked && disagree && !disagree[index]) { return false; }
      for (var w = 0; w < words.length; w++) {
        if (texts[index].indexOf(words[w]) < 0) { return false; }
      }
      return true;
    }

    function apply() {
      var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
      var status = statusFilter.value, group = groupFilter.value, shown = 0;
      if (words.length && !texts) { // a row's text, and its answers as extracted (typeset, they are no text)
        texts = rows.map(function (row) { return (row.textContent + " " + (OE.tex.get(row) || "")).toLowerCase(); });
      }
      rows.forEach(function (row, index) {
        var visible = keep(row, index, words, status, group);
        if (row.hidden === visible) { row.hidden = !visible; } // a row left as it is costs no restyle
        if (visible) { shown++; }
      });
      bodies.forEach(function (tbody) {
        var showing = 0;
        for (var row = tbody.firstElementChild; row; row = row.nextElementSibling) {
          if (!row.hidden) { showing++; }
        }
        if (tbody.dataset.rows !== String(showing)) { // a body left as it is costs no restyle
          tbody.dataset.rows = String(showing);
          tbody.style.setProperty("--rows", String(showing));
          tbody.hidden = showing === 0;
        }
      });
      count.textContent = String(shown);
      if (noMatch) {
        noMatch.hidden = shown !== 0 || rows.length === 0;
        document.getElementById("no-match-view").textContent = describe(words, status, group);
      }
      writeView({
        q: search.value.trim(),
        status: status,
        group: group,
        jd: Boolean(judgesDisagree && judgesDisagree.checked),
        md: Boolean(modelsDisagree && modelsDisagree.checked && !modelsDisagree.disabled),
        sort: sorted.key || "",
        order: sorted.key ? (sorted.descending ? "desc" : "asc") : "",
      });
    }

    // What the view asks for, in words: "the search “friction”, status judge errors and judges disagree".
    function describe(words, status, group) {
      var asked = [];
      if (words.length) { asked.push("the search \u201c" + search.value.trim() + "\u201d"); }
      var filters = [];
      if (status !== "all") { filters.push("status " + statusFilter.selectedOptions[0].textContent); }
      if (group !== "all") { filters.push("group " + group); }
      if (judgesDisagree && judgesDisagree.checked) { filters.push("judges disagree"); }
      if (modelsDisagree && modelsDisagree.checked) { filters.push("models disagree"); }
      if (filters.length) { asked.push("the filter" + (filters.length > 1 ? "s " : " ") + filters.join(", ")); }
      return asked.join(" and ");
    }

    function clearView() {
      search.value = "";
      statusFilter.value = "all";
      groupFilter.value = "all";
      if (judgesDisagree) { judgesDisagree.checked = false; }
      if (modelsDisagree) { modelsDisagree.checked = false; }
      apply();
      search.focus();
    }

    var sortKeys = {
      id: function (row) { return naturalKey(row.dataset.id); },
      group: function (row) { return naturalKey(row.dataset.group) + " " + naturalKey(row.dataset.id); },
      level: function (row) { return row.dataset.level === undefined ? -1 : parseInt(row.dataset.level, 10); },
      status: function (row) { return STATUS_ORDER[row.dataset.status]; },
      score: function (row) { return parseFloat(row.dataset.score); },
    };
    var order = rows.map(function (row, index) { return index; });

    function keyOf(name) {
      if (sortKeys[name]) { return sortKeys[name]; }
      var judge = /^judge-(\d+)$/.exec(name || "");
      if (!judge) { return null; }
      return function (row) {
        var value = row.getAttribute("data-judge-" + judge[1]);
        return value === null ? -1 : parseFloat(value);
      };
    }

    function sortBy(name, descending) {
      var of = keyOf(name), header = document.querySelector('th[data-sort="' + name + '"]');
      if (!of || !header) { return false; }
      document.querySelectorAll("th[data-sort]").forEach(function (th) { th.removeAttribute("aria-sort"); });
      header.setAttribute("aria-sort", descending ? "descending" : "ascending");
      var keys = rows.map(of);
      order.sort(function (a, b) {
        var x = keys[a], y = keys[b];
        var c = x < y ? -1 : x > y ? 1 : a - b;
        return descending ? -c : c;
      });
      var fragments = bodies.map(function () { return document.createDocumentFragment(); });
      order.forEach(function (index, position) {
        fragments[Math.min(Math.floor(position / perBody), bodies.length - 1)].appendChild(rows[index]);
      });
      bodies.forEach(function (tbody, n) { tbody.appendChild(fragments[n]); });
      sorted = { key: name, descending: descending };
      return true;
    }

    function option(select, value) {
      return Array.prototype.some.call(select.options, function (o) { return o.value === value; });
    }

    // The view the URL names (a link shared, a chart's bar followed), where its values exist here.
    function restore() {
      var view = readView();
      search.value = view.q || "";
      statusFilter.value = option(statusFilter, view.status) ? view.status : "all";
      groupFilter.value = option(groupFilter, view.group) ? view.group : "all";
      if (judgesDisagree) { judgesDisagree.checked = view.jd === "1"; }
      if (modelsDisagree) { modelsDisagree.checked = view.md === "1" && !modelsDisagree.disabled; }
      if (view.sort && !sortBy(view.sort, view.order === "desc")) { sorted = { key: null, descending: false }; }
      apply();
    }

    search.addEventListener("input", apply);
    var clear = document.getElementById("clear-view");
    if (clear) { clear.addEventListener("click", clearView); }
    typesetOnScreen(bodies);
    [statusFilter, groupFilter, judgesDisagree, modelsDisagree].forEach(function (control) {
      if (control) { control.addEventListener("change", apply); }
    });
    document.querySelectorAll("th[data-sort]").forEach(function (header) {
      function click() {
        var name = header.dataset.sort;
        sortBy(name, header.getAttribute("aria-sort") === "ascending");
        apply();
      }
      header.tabIndex = 0;
      header.addEventListener("click", click);
      header.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); click(); }
      });
    });
    window.addEventListener("hashchange", restore);
    restore();
  }

  // A page that names MathJax in its body (`data-mathjax`: a cell's index) loads it only now, once
  // its rows can be filtered, and without MathJax's start-up pass over the page (at PhysElite's size
  // a walk of 100,000 nodes for a few dozen answers on screen): it typesets what it is asked to.
  function loadMathJax() {
    var source = document.body.dataset.mathjax;
    if (!source || document.querySelector('script[src="' + source + '"]')) { return; }
    window.MathJax.startup.typeset = false;
    var script = document.createElement("script");
    script.src = source;
    script.async = true;
    script.onload = function () { typeset(waiting.splice(0)); };
    document.head.appendChild(script);
  }

  // A cell's index may hold thousands of answers: a row's are typeset when it comes near the screen
  // (its spans of class `tex` made `math-text`, which MathJax typesets), never all at the page's
  // start: typesetting a few hundred rows would keep a PhysElite-sized index from answering for a
  // second. Rows are watched only once their body nears the screen (bodies of 200: see above), and a
  // row hidden by a filter is typeset when it is shown.
  function typesetOnScreen(bodies) {
    loadMathJax();
    function show(rows) {
      var spans = [];
      rows.forEach(function (row) {
        row.querySelectorAll(".tex").forEach(function (span) {
          OE.tex.set(row, (OE.tex.get(row) || "") + " " + span.textContent); // what the search still finds
          span.className = "math-text";
          spans.push(span);
        });
      });
      if (spans.length) { typeset(spans); }
    }
    if (!("IntersectionObserver" in window)) {
      show(Array.prototype.slice.call(document.querySelectorAll("tr.problem-row")));
      return;
    }
    function near(margin, then) {
      var watcher = new IntersectionObserver(function (seen) {
        var coming = seen.filter(function (entry) { return entry.isIntersecting; }).map(function (entry) {
          watcher.unobserve(entry.target);
          return entry.target;
        });
        if (coming.length) { then(coming); }
      }, { rootMargin: margin + "px 0px" });
      return watcher;
    }
    var rowWatcher = near(300, show);
    var bodyWatcher = near(900, function (coming) {
      coming.forEach(function (tbody) {
        Array.prototype.forEach.call(tbody.rows, function (row) { rowWatcher.observe(row); });
      });
    });
    bodies.forEach(function (tbody) { bodyWatcher.observe(tbody); });
  }

  // ---------------------------------------------------------------- a side-by-side page
  // The page holds the problem; each model's column is in its cell's folder (`side/<shard>.js`,
  // written by the cell's stage), and which models the plan has is the root stage's
  // (`OE.plan`): adding a model writes its own columns and that list, never this page.

  function setUpSide() {
    var page = document.body;
    var holder = document.getElementById("columns");
    if (page.dataset.page !== "side" || !holder) {
      return;
    }
    var plan = OE.plan, problem = page.dataset.problem, root = page.dataset.root || "";
    function done() {
      page.dataset.sideReady = "1";
      typeset(holder).then(function () { page.dataset.typeset = "1"; });
    }
    if (!plan || !plan.models || !plan.models.length) {
      holder.textContent = "No model's column: the report's root stage has not listed the plan's models yet.";
      done();
      return;
    }
    var pending = plan.models.length;
    function render() {
      holder.textContent = "";
      plan.models.forEach(function (model) {
        var column = document.createElement("article");
        column.className = "column";
        column.dataset.model = model.name;
        column.style.setProperty("--model", model.colour);
        var heading = document.createElement("h2");
        heading.textContent = model.name;
        column.appendChild(heading);
        var html = (OE.columns[model.name] || {})[problem];
        var content = document.createElement("div");
        if (html === undefined) {
          content.className = "error";
          content.textContent = "not in this model's cell (its report stage has not run, or the problem is not in it)";
        } else {
          content.innerHTML = html; // written and escaped by the cell's stage
        }
        column.appendChild(content);
        holder.appendChild(column);
      });
      done();
    }
    plan.models.forEach(function (model) {
      var script = document.createElement("script");
      script.src = root + model.cell + "side/" + page.dataset.shard + ".js";
      script.onload = script.onerror = function () { if (--pending === 0) { render(); } };
      document.head.appendChild(script);
    });
  }

  // A link to a part of a page inside closed sections (a judge conversation) opens them.
  function openTarget() {
    var id = decodeURIComponent(window.location.hash.replace(/^#/, ""));
    var target = id && !/[=&]/.test(id) ? document.getElementById(id) : null;
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
    if (target) { target.scrollIntoView(); }
  }

  function setUp() {
    setUpIndex();
    setUpSide();
    openTarget();
    window.addEventListener("hashchange", openTarget);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setUp);
  } else {
    setUp();
  }
})();
