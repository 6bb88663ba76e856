/* /: create a race (POST /matches; the host token stays in local storage for the play page's Start
   button) or go to a code's play or watch page; links to the pages of the names this browser holds keys of. */
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const onlySolvable = new Set(["classic", "relaxed"]);  // the variants the server keeps solvable deals of

  $("variant").addEventListener("change", () => {
    const pooled = onlySolvable.has($("variant").value);
    $("solvable").checked = pooled;
    $("solvable").disabled = !pooled;
  });

  $("create").addEventListener("submit", async (event) => {
    event.preventDefault();
    $("create-error").textContent = "";
    $("create-button").disabled = true;
    const settings = {
      variant: $("variant").value, players: Number($("players").value), time_limit_s: Number($("time-limit").value) * 60,
      undo: $("undo").value, hints: $("hints").checked, solvable_only: $("solvable").checked && !$("solvable").disabled,
      autoplay: $("autoplay").checked,
    };
    // A game number is a decimal seed string (server/engine/README.md, "The deal algorithm"); empty: the server draws the deal.
    const seed = $("seed").value.trim();
    if (seed && !/^[0-9]{1,200}$/.test(seed)) {
      $("create-error").textContent = "a game number is digits only (or leave it empty for a new deal)";
      $("create-button").disabled = false;
      return;
    }
    if (seed) settings.seed = seed;
    try {
      const response = await fetch("/matches", { method: "POST", headers: { "Content-Type": "application/json" },
                                                  body: JSON.stringify(settings) });
      const body = await response.json();
      if (response.status !== 201) { $("create-error").textContent = body.message || `refused (${response.status})`; return; }
      localStorage.setItem(`ftr:host:${body.code}`, body.host_token);
      location.href = `/join/${encodeURIComponent(body.code)}`;
    } catch (error) {
      $("create-error").textContent = `could not reach the server: ${error}`;
    } finally {
      $("create-button").disabled = false;
    }
  });

  const code = () => $("code").value.trim();
  $("go").addEventListener("submit", (event) => {
    event.preventDefault();
    if (code()) location.href = "/join/" + encodeURIComponent(code());
  });
  $("go-watch").addEventListener("click", () => { if (code()) location.href = "/watch/" + encodeURIComponent(code()); });

  // The names this browser races as (it holds their keys): the last one used first.
  const last = localStorage.getItem("ftr:name") || "";
  const names = Object.keys(FTR.playerKeys()).sort((a, b) => (b === last) - (a === last) || a.localeCompare(b));
  $("my-pages").hidden = !names.length;
  $("my-page-links").replaceChildren(...names.flatMap((name, i) => [i ? ", " : "",
    FTR.el("a", { href: FTR.playerPath(name), text: `${name}'s page →` })]));
})();
