// The annotator's page: keyboard shortcuts (i, a, e, n, ?) and autosaved drafts.
(function () {
  "use strict";
  const form = document.getElementById("label-form");
  if (!form) return;
  const help = document.getElementById("help");
  const helpButton = document.getElementById("help-button");
  const status = document.getElementById("draft-status");
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  let timer = null;

  function typing(target) {
    return target && (target.tagName === "TEXTAREA" || target.tagName === "SELECT" ||
      (target.tagName === "INPUT" && ["text", "search", "number"].includes(target.type)));
  }

  function toggleHelp() {
    help.hidden = !help.hidden;
    helpButton.setAttribute("aria-expanded", String(!help.hidden));
  }

  function choose(value) {
    const radio = form.querySelector(`input[name=decision][value=${value}]`);
    radio.checked = true;
    radio.focus();
    if (value === "abstain") form.querySelector("select[name=service]").value = "";
    saveSoon();
  }

  function saveSoon() {
    clearTimeout(timer);
    timer = setTimeout(save, 500);
  }

  function save() {
    const body = new FormData(form);
    status.textContent = "Saving draft…";
    fetch(form.dataset.draftUrl, { method: "POST", body, headers: { "X-CSRFToken": csrf } })
      .then((r) => r.text().then((text) => { status.textContent = r.ok ? text : "Draft not saved: " + text; }))
      .catch(() => { status.textContent = "Draft not saved: the server did not answer."; });
  }

  helpButton.addEventListener("click", toggleHelp);
  form.addEventListener("change", saveSoon);
  form.addEventListener("input", saveSoon);
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "Escape" && typing(event.target)) { event.target.blur(); return; }
    if (typing(event.target)) return;
    if (event.key === "i") { event.preventDefault(); choose("intervene"); }
    else if (event.key === "a") { event.preventDefault(); choose("abstain"); }
    else if (event.key === "e") {
      event.preventDefault();
      const select = form.querySelector("select[name=episode]");
      (select.options.length > 1 ? select : form.querySelector("input[name=new_episode]")).focus();
    }
    else if (event.key === "n") { event.preventDefault(); clearTimeout(timer); form.requestSubmit(); }
    else if (event.key === "?") { event.preventDefault(); toggleHelp(); }
  });
})();
