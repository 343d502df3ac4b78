// Filter forms that htmx submits on change and on submit (data-once): a request identical to
// the one just made is skipped. Changing a field and then pressing the form's button fires
// "change" and then "submit" with the same fields, which sent the request twice and pushed
// two identical history entries.
(function () {
  "use strict";

  function fields(form) {
    return new URLSearchParams(new FormData(form)).toString();
  }

  document.addEventListener("htmx:confirm", function (event) {
    var form = event.target;
    if (!form.matches || !form.matches("form[data-once]")) return;
    var now = fields(form);
    if (form.dataset.sent === now) {
      event.preventDefault(); // htmx issues the request only if detail.issueRequest() is called
      return;
    }
    form.dataset.sent = now;
  });

  // What the page was rendered with counts as sent: pressing the button without a change
  // asks for nothing new.
  function remember() {
    document.querySelectorAll("form[data-once]").forEach(function (form) {
      if (form.dataset.sent === undefined) form.dataset.sent = fields(form);
    });
  }
  document.addEventListener("DOMContentLoaded", remember);
  document.addEventListener("htmx:afterSettle", remember);
  // A page restored from htmx's history shows the fields as they were when it was left, not
  // necessarily what its results were asked with: the next request always goes.
  document.addEventListener("htmx:historyRestore", function () {
    document.querySelectorAll("form[data-once]").forEach(function (form) {
      form.dataset.sent = "";
    });
  });
})();

// An address naming something inside a closed <details> (a fact of a folded segment) opens it,
// in browsers that do not do so themselves.
(function () {
  "use strict";

  function openTarget() {
    if (!location.hash) return;
    var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    if (target) target.scrollIntoView();
  }
  document.addEventListener("DOMContentLoaded", openTarget);
  window.addEventListener("hashchange", openTarget);
})();

// htmx leaves the page as it was when an answer is an error (403, 404, 500), so a click seemed
// to do nothing. Say what the server said, from the error page's own sentence.
(function () {
  "use strict";

  document.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail.xhr;
    var page = new DOMParser().parseFromString(xhr.responseText || "", "text/html");
    var heading = page.querySelector(".error-page h1");
    var said = page.querySelectorAll(".error-page .reason, .error-page .next");
    var words = heading ? heading.textContent.trim() + ". " : "";
    if (said.length) {
      words += Array.prototype.map.call(said, function (p) { return p.textContent.trim(); }).join(" ");
    } else {
      words += "The server answered " + xhr.status + ".";
    }
    var notice = document.getElementById("htmx-error");
    if (!notice) {
      notice = document.createElement("p");
      notice.id = "htmx-error";
      notice.className = "error";
      notice.setAttribute("role", "alert");
      var main = document.querySelector("main");
      if (!main) return;
      main.insertBefore(notice, main.firstChild);
    }
    notice.textContent = words; // textContent: the answer is not ours to run
  });
})();
