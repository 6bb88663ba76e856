/* /daily/{date}: a day's archive. Data: GET /daily/{date} (JSON: each variant's board, and once revealed its
   seed, attempt index, deal and the replays' paths). The seed is checked in the browser against the commitment
   published before the day (SHA-256 of the seed: common.js verifyCommitment with an empty nonce, as the play page
   checks a daily attempt). "Play this day (practice)": POST /daily/{date}/{variant}/practice, then the play page
   with the practice's player token (on no board); with "Race the day's best" ticked (shown when the board has a
   first row) the practice races that attempt as a ghost (body "ghost": "top"). The place of this browser's last name, with its line to
   share, as on /daily (daily-share.js). */
"use strict";

(() => {
  const { el, formatMs, getJSON, plural, STATUS, verifyCommitment } = FTR;
  const $ = (id) => document.getElementById(id);
  const date = FTR.pathSegment(1);

  function boardRows(entries) {
    return entries.map((e) => el("tr", { "data-name": e.name },
      el("td", {}, el("span", { class: `rank ${e.status === "won" ? "r" + e.rank : ""}`, text: e.rank })),
      el("td", { class: "who" }, el("span", { class: "name", text: e.name }), " ",
        el("span", { class: `pill ${e.status}`, text: STATUS[e.status] || e.status })),
      el("td", { class: "num", text: e.foundation }),
      el("td", { class: "num", text: e.moves }),
      el("td", { class: "num", text: formatMs(e.time_ms || 0, true) }),
      el("td", {}, e.replay ? el("a", { href: e.replay, text: "replay" }) : "")));
  }

  /** The practice form of a revealed day's `variant`; `top`: the board's first entry, or undefined. */
  function practiceForm(variant, top) {
    const id = `practice-name-${variant}`;
    const input = el("input", { id, maxlength: 24, autocomplete: "nickname", required: true,
                                value: localStorage.getItem("ftr:name") || "" });
    const problem = el("div", { class: "message error", role: "alert" });
    // The day's first attempt as a ghost: its progress on its own timing beside the player's, never its board.
    const race = top ? el("input", { type: "checkbox", id: `practice-ghost-${variant}` }) : null;
    const form = el("form", { class: "inline-form practice" }, el("label", { for: id, text: "Name" }), input,
      el("button", { type: "submit", text: "Play this day (practice)" }),
      race ? el("label", { class: "ghost-choice", for: race.id }, race,
        ` Race the day's best (${top.name}, ${formatMs(top.time_ms || 0)})`) : "", problem);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      problem.textContent = "";
      const name = input.value.trim();
      // A claimed name needs its key, held where the daily page holds it (common.js's store of player keys
      // where the page has one, else the daily's own). A free name is claimed by the practice: its key is kept
      // here and its recovery code left for the play page to show once, as the daily page does.
      const key = typeof FTR.playerKey === "function" ? FTR.playerKey(name)
        : JSON.parse(localStorage.getItem("ftr:daily:names") || "{}")[name];
      const response = await fetch(`/daily/${date}/${encodeURIComponent(variant)}/practice`, {
        method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ name, player_key: key || null, token: key || null,
                               ...(race && race.checked ? { ghost: "top" } : {}) }) });
      const body = await response.json().catch(() => ({}));
      if (response.status !== 200) { problem.textContent = body.message || `refused (${response.status})`; return; }
      if (body.player_key && typeof FTR.keepPlayerKey === "function") FTR.keepPlayerKey(body.name, body.player_key);
      if (body.recovery_code) sessionStorage.setItem("ftr:claimed", JSON.stringify({ name: body.name, code: body.recovery_code }));
      localStorage.setItem(`ftr:player:${body.match}`, JSON.stringify({ name: body.name, token: body.player_token }));
      location.href = `/join/${encodeURIComponent(body.match)}`;
    });
    return form;
  }

  async function variantPanel(info) {
    const state = info.final ? "final" : "live";
    const panel = el("section", { class: "panel", "data-variant": info.variant },
      el("h3", {}, `${info.variant} · ${state} board`,
        el("span", { class: "note", text: ` ${plural(info.total, "attempt")} ended` })));
    if (info.entries.length) {
      panel.append(el("div", { class: "scroll-x" }, el("table", { class: "standings day-board" },
        el("thead", {}, el("tr", {}, el("th", { text: "#" }), el("th", { text: "Player" }),
          el("th", { class: "num", text: "Cards" }), el("th", { class: "num", text: "Moves" }),
          el("th", { class: "num", text: "Time" }), el("th", { text: "Replay" }))),
        el("tbody", {}, ...boardRows(info.entries)))));
      if (info.total > info.entries.length) {
        panel.append(el("div", { class: "sub", text: `the first ${info.entries.length} of ${info.total}` }));
      }
    } else {
      panel.append(el("div", { class: "empty", text: "No attempt ended on this day." }));
    }
    const mine = localStorage.getItem("ftr:name");
    if (mine) panel.append(FTRDaily.placeView(date, info.variant, mine).element);
    const verify = el("div", { class: "verify" }, "commitment ", el("code", { text: info.commitment }));
    panel.append(verify);
    if (!info.final) {
      verify.append(el("div", { class: "seed-note", text: "The seed is revealed when the day is over and every attempt has ended." }));
      return panel;
    }
    verify.append(el("div", {}, "seed ", el("code", { class: "seed", text: info.seed }),
      ` · attempt index ${info.attempt_index}`));
    const ok = await verifyCommitment({ seed: info.seed, nonce: "", commitment: info.commitment });
    if (ok !== null) {
      verify.append(el("div", { class: `check ${ok ? "ok" : "bad"}`, role: "status" }, ok
        ? "✓ SHA-256(seed) equals the commitment published before the day"
        : "✗ SHA-256(seed) does NOT equal the commitment"));
    }
    panel.append(el("details", {}, el("summary", { text: "The deal" }),
      el("pre", { class: "reveal-deal", text: info.deal }),
      el("p", { class: "sub" }, "Rebuild it yourself: ",
        el("code", { text: `forty-thieves-engine deal --seed ${info.seed} --variant ${info.variant}` }))));
    panel.append(practiceForm(info.variant, info.entries.find((e) => e.rank === 1)));
    return panel;
  }

  function nav(day) {
    $("previous").href = `/daily/${day.previous}`;
    $("previous").textContent = `← ${day.previous}`;
    $("next").hidden = !day.next;
    if (day.next) {
      $("next").href = `/daily/${day.next}`;
      $("next").textContent = `${day.next} →`;
    }
    const picker = $("archive-date");
    picker.value = day.date;
    $("archive-form").addEventListener("submit", (event) => {
      event.preventDefault();
      if (picker.value) location.href = `/daily/${picker.value}`;
    });
  }

  async function start() {
    // No date in the address (or a malformed escape): no request, which /daily (today) would answer.
    const { status, body } = date ? await getJSON(`/daily/${encodeURIComponent(date)}`) : { status: 404, body: null };
    if (status !== 200 || !body || !Array.isArray(body.variants)) {
      $("state").textContent = "unavailable";
      $("headline").textContent = date ? `No daily challenge on ${date}` : "No such day";
      $("subline").textContent = (body && body.message) || `The server answered ${status}.`;
      return;
    }
    $("state").textContent = body.today ? "today" : "archive";
    $("state").className = body.today ? "state live" : "state";
    $("headline").textContent = `Daily challenge · ${body.date}`;
    if (body.today) $("subline").textContent = "This day is still going: its seed is revealed when it is over.";
    document.title = `Daily challenge ${body.date} · Forty Thieves Race`;
    nav(body);
    $("variants").replaceChildren(...await Promise.all(body.variants.map(variantPanel)));
  }

  start();
})();
