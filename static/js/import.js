// The import form: only the chosen format's help is shown next to the select, and the time
// zone field is required when that format needs one, so the browser asks for it before the
// file is sent. Without JavaScript every format's help is listed and the server checks.
(function () {
  "use strict";

  function update() {
    var select = document.querySelector("#import-form select[name=format]");
    var zone = document.querySelector("#import-form input[name=timezone]");
    if (!select) return;
    var needsZone = false;
    document.querySelectorAll("#format-help [data-format]").forEach(function (item) {
      var chosen = item.getAttribute("data-format") === select.value;
      item.hidden = !chosen;
      if (chosen) needsZone = item.hasAttribute("data-needs-tz");
    });
    if (zone) zone.required = needsZone;
  }

  document.addEventListener("change", function (event) {
    if (event.target.matches && event.target.matches("#import-form select[name=format]")) update();
  });
  document.addEventListener("DOMContentLoaded", update);
})();
