// olympiad-eval report viewer: filters and sorts a cell's index, and configures MathJax (loaded
// after this file, from the report's own assets) to typeset only the `.math-text` elements.
"use strict";

window.MathJax = {
  tex: {
    inlineMath: [["$", "$"], ["\\(", "\\)"]],
    displayMath: [["$$", "$$"], ["\\[", "\\]"]],
    processEscapes: true,
  },
  options: {
    ignoreHtmlClass: "tex2jax_ignore",
    processHtmlClass: "math-text",
    enableMenu: false,
  },
  svg: { fontCache: "global" },
  startup: { typeset: true },
};

(function () {
  function naturalKey(text) {
    return String(text).split(/(\d+)/).map(function (part, index) {
      return index % 2 ? part.padStart(12, "0") : part.toLowerCase();
    }).join("");
  }

  var STATUS_ORDER = { correct: 0, partial: 1, wrong: 2, "judge-error": 3, failed: 4 };

  function setUpIndex() {
    var search = document.getElementById("search");
    var statusFilter = document.getElementById("status-filter");
    var groupFilter = document.getElementById("group-filter");
    var count = document.getElementById("shown-count");
    var body = document.querySelector("table.problems tbody");
    if (!search || !statusFilter || !groupFilter || !body) {
      return;
    }
    var rows = Array.prototype.slice.call(body.querySelectorAll("tr.problem-row"));
    var texts = rows.map(function (row) { return row.textContent.toLowerCase(); });

    function keep(row, index, words, status, group) {
      var data = row.dataset;
      if (group !== "all" && data.group !== group) { return false; }
      if (status === "wrong" && data.status !== "wrong") { return false; }
      if (status === "judge-error" && data.status !== "judge-error") { return false; }
      if (status === "truncated" && data.truncated !== "1") { return false; }
      if (status === "undecided" && data.undecided !== "1") { return false; }
      for (var w = 0; w < words.length; w++) {
        if (texts[index].indexOf(words[w]) < 0) { return false; }
      }
      return true;
    }

    function apply() {
      var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
      var status = statusFilter.value, group = groupFilter.value, shown = 0;
      rows.forEach(function (row, index) {
        var visible = keep(row, index, words, status, group);
        row.hidden = !visible;
        if (visible) { shown++; }
      });
      count.textContent = String(shown);
    }

    var sortKeys = {
      id: function (row) { return naturalKey(row.dataset.id); },
      group: function (row) { return naturalKey(row.dataset.group) + " " + naturalKey(row.dataset.id); },
      level: function (row) { return row.dataset.level === undefined ? -1 : parseInt(row.dataset.level, 10); },
      status: function (row) { return STATUS_ORDER[row.dataset.status]; },
      score: function (row) { return parseFloat(row.dataset.score); },
    };
    var order = rows.map(function (row, index) { return index; });

    function sortBy(header) {
      var key = header.dataset.sort, of = sortKeys[key];
      if (!of) { return; }
      var descending = header.getAttribute("aria-sort") === "ascending";
      document.querySelectorAll("th[data-sort]").forEach(function (th) { th.removeAttribute("aria-sort"); });
      header.setAttribute("aria-sort", descending ? "descending" : "ascending");
      var keys = rows.map(of);
      order.sort(function (a, b) {
        var x = keys[a], y = keys[b];
        var c = x < y ? -1 : x > y ? 1 : a - b;
        return descending ? -c : c;
      });
      var fragment = document.createDocumentFragment();
      order.forEach(function (index) { fragment.appendChild(rows[index]); });
      body.appendChild(fragment);
    }

    search.addEventListener("input", apply);
    statusFilter.addEventListener("change", apply);
    groupFilter.addEventListener("change", apply);
    document.querySelectorAll("th[data-sort]").forEach(function (header) {
      header.tabIndex = 0;
      header.addEventListener("click", function () { sortBy(header); });
      header.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sortBy(header); }
      });
    });
    apply();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setUpIndex);
  } else {
    setUpIndex();
  }
})();
