// Evidence Board: the as-of slider. It only moves the "as of" field and submits the
// page's own GET form; the board has no script that writes anything anywhere.
"use strict";
(function () {
  var range = document.getElementById("asof-range");
  var input = document.getElementById("asof-input");
  if (!range || !input) { return; }
  var minUs = parseInt(range.getAttribute("data-min-us"), 10);
  if (!isFinite(minUs)) { range.hidden = true; return; }
  var minMs = Math.floor(minUs / 1000);
  var maxMs = Date.now();
  if (maxMs <= minMs) { maxMs = minMs + 1000; }
  function toIso(ms) { return new Date(ms).toISOString().replace(".000Z", "Z"); }
  function position(ms) { return Math.round((ms - minMs) / (maxMs - minMs) * 1000); }
  if (input.value) {
    var shown = Date.parse(/[zZ]|[+-]\d\d:\d\d$/.test(input.value) ? input.value : input.value + "Z");
    if (isFinite(shown)) { range.value = String(Math.max(0, Math.min(1000, position(shown)))); }
  }
  range.addEventListener("input", function () {
    var v = parseInt(range.value, 10);
    input.value = v >= 1000 ? "" : toIso(minMs + (maxMs - minMs) * v / 1000);
  });
  range.addEventListener("change", function () { range.form.submit(); });
})();
