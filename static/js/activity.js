// The day page's small enhancements; everything here also works, more plainly, without it.
// Hovering or focusing a timeline bar shows its frame below the drawing (the bar's <title> is the
// no-JS tooltip), and the copy button puts the context block on the clipboard.
(function () {
  "use strict";

  function showFrame(event) {
    var bar = event.target.closest && event.target.closest("a.bar");
    var detail = document.getElementById("frame-detail");
    if (!bar || !detail) return;
    // textContent, never innerHTML: window titles are third-party text.
    detail.textContent = bar.getAttribute("data-summary");
    detail.setAttribute("data-frame", bar.getAttribute("data-frame"));
    detail.hidden = false;
  }

  function copy(event) {
    var button = event.target.closest && event.target.closest("button[data-copy]");
    if (!button) return;
    var source = document.querySelector(button.getAttribute("data-copy"));
    if (!source || !navigator.clipboard) return;
    navigator.clipboard.writeText(source.textContent).then(
      function () { button.textContent = "Copied"; },
      function () { button.textContent = "Copy failed: select the text instead"; }
    );
    setTimeout(function () { button.textContent = "Copy"; }, 2000);
  }

  function revealCopyButtons() {
    // Shown only where the clipboard API exists (secure contexts), so no button does nothing.
    if (!navigator.clipboard) return;
    document.querySelectorAll("button[data-copy][hidden]").forEach(function (button) {
      button.hidden = false;
    });
  }

  document.addEventListener("mouseover", showFrame);
  document.addEventListener("focusin", showFrame);
  document.addEventListener("click", copy);
  document.addEventListener("DOMContentLoaded", revealCopyButtons);
  document.addEventListener("htmx:afterSwap", revealCopyButtons);
})();
