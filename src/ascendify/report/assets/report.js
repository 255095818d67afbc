// Sortable tables: click a header to sort by that column (numbers, effort, text).
(function () {
  "use strict";
  var EFFORT = { skipped: -1, none: 0, low: 1, medium: 2, high: 3 };
  function key(cell, type) {
    var t = cell.textContent.trim();
    if (type === "num") { var n = parseFloat(t); return isNaN(n) ? -1 : n; }
    if (type === "effort") { return t in EFFORT ? EFFORT[t] : -1; }
    return t.toLowerCase();
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.querySelectorAll("thead th");
    heads.forEach(function (th, col) {
      th.addEventListener("click", function () {
        var asc = !th.classList.contains("asc");
        heads.forEach(function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(asc ? "asc" : "desc");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var type = th.getAttribute("data-type") || "text";
        rows.sort(function (a, b) {
          var x = key(a.cells[col], type), y = key(b.cells[col], type);
          return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1);
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();
