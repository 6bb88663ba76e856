/* /daily: today's leaderboards, live, the place of this browser's last name with its line to share
   (daily-share.js), that name's groups' boards (/groups/{group}), and the links to past days (/daily/{date}).
   Data: GET /daily, GET /daily/{date}/{variant}/leaderboard,
   the Server-Sent Events of /daily/{date}/{variant}/events ("attempt"), and after the day
   GET /daily/{date}/{variant}/reveal. Degrades to a notice when the server has no daily challenge. */
"use strict";

(() => {
  const { el, formatMs, getJSON, follow, plural, STATUS } = FTR;
  const $ = (id) => document.getElementById(id);
  let offset = 0, endsAt = 0, today = null;
  const CARDS = 104;

  function notice(title, text) {
    $("state").textContent = "unavailable";
    $("headline").textContent = title;
    $("subline").textContent = text;
    $("clock").hidden = true;
  }

  function rowOf(entry) {
    const pct = Math.min(100, (100 * (entry.foundation || 0)) / CARDS);
    return el("tr", { "data-name": entry.name },
      el("td", {}, // A medal colour only for a win: a resigned attempt with 0 cards ranks first of nobody but is no gold.
      el("span", { class: `rank ${entry.status === "won" ? "r" + (entry.rank || "") : ""}`, text: entry.rank || "·" })),
      el("td", { class: "who", text: entry.name }),
      el("td", {}, el("span", { class: `pill ${entry.status}`, text: STATUS[entry.status] || entry.status })),
      el("td", {}, el("div", { class: "bar" },
        el("div", { class: "track" }, el("div", { class: "fill" + (entry.status === "won" ? " won" : ""), style: `width:${pct}%` })),
        el("span", { class: "count" }, el("b", { text: entry.foundation || 0 }), el("span", { class: "of", text: ` / ${CARDS}` })))),
      // A phone keeps the time (what ranks a win first) and leaves out the moves.
      el("td", { class: "num hide-sm", text: entry.moves }),
      el("td", { class: "num", text: formatMs(entry.time_ms || 0, true) }));
  }

  /** "Play today's deal": the attempt (POST /daily/{variant}/attempt) with the name's player key this browser
      holds (common.js, as the CLI's tokens file keeps it), then the play page resumes it with the player token.
      An attempt that claimed the name leaves its recovery code for the play page to show once. */
  function playForm(variant) {
    const id = `daily-name-${variant}`;
    const input = el("input", { id, maxlength: 24, autocomplete: "nickname", required: true,
                                value: localStorage.getItem("ftr:name") || "" });
    const problem = el("div", { class: "message error", role: "alert" });
    const form = el("form", { class: "inline-form daily-play" }, el("label", { for: id, text: "Name" }), input,
      el("button", { type: "submit", text: `Play today's ${variant} deal` }), problem);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const name = input.value.trim();
      const key = FTR.playerKey(name);
      problem.textContent = "";
      // The key under both names: `token` is what servers from before named players read.
      const response = await fetch(`/daily/${encodeURIComponent(variant)}/attempt`, {
        method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ name, player_key: key, token: key || null }) });
      const body = await response.json().catch(() => ({}));
      if (response.status !== 200) { problem.textContent = body.message || `refused (${response.status})`; return; }
      const claimed = body.player_key || body.name_token;
      if (claimed) FTR.keepPlayerKey(name, claimed);
      if (body.recovery_code) sessionStorage.setItem("ftr:claimed", JSON.stringify({ name, code: body.recovery_code }));
      localStorage.setItem("ftr:name", name);
      localStorage.setItem(`ftr:player:${body.match}`, JSON.stringify({ name, token: body.player_token }));
      location.href = `/join/${encodeURIComponent(body.match)}`;
    });
    return form;
  }

  function variantPanel(info) {
    const tbody = el("tbody");
    const note = el("span", { class: "note", text: `${plural(info.attempts, "attempt")} · ${info.finished} finished` });
    const empty = el("div", { class: "empty", text: "No attempt yet today: be the first." });
    const reveal = el("div", { class: "verify" }, "commitment ", el("code", { text: info.commitment }));
    // id: the play page's "the day's board →" of an attempt links to /daily#board-VARIANT.
    const panel = el("section", { class: "panel", id: `board-${info.variant}`, "data-variant": info.variant },
      el("h3", {}, `${info.variant} · leaderboard`, note),
      el("div", { class: "scroll-x" }, el("table", { class: "standings" },
        el("thead", {}, el("tr", {}, el("th", { text: "#" }), el("th", { text: "Player" }), el("th", { text: "Status" }),
          el("th", { text: "Foundations" }), el("th", { class: "num hide-sm", text: "Moves" }), el("th", { class: "num", text: "Time" }))),
        tbody)),
      empty, reveal, playForm(info.variant));
    const base = `/daily/${today.date}/${encodeURIComponent(info.variant)}`;
    // The place of the name this browser last played under, once its attempt has ended (with its share line).
    const mine = localStorage.getItem("ftr:name");
    const place = mine ? FTRDaily.placeView(today.date, info.variant, mine) : null;
    if (place) panel.insertBefore(place.element, reveal);
    let pending = null;
    async function load() {
      const { status, body } = await getJSON(`${base}/leaderboard?offset=0&limit=50`);
      if (status !== 200) { empty.textContent = (body && body.message) || "The leaderboard is not available."; return; }
      tbody.replaceChildren(...body.entries.map(rowOf));
      empty.hidden = body.entries.length > 0;
      // The leaderboard's total counts ended attempts only; GET /daily counts the attempts made too.
      const counts = await getJSON("/daily");
      const made = (counts.status === 200 && counts.body.variants.find((v) => v.variant === info.variant)) || info;
      note.textContent = `${plural(Math.max(made.attempts, body.total), "attempt")} · ${body.total} finished`
        + (body.final ? " · final" : "");
      const chip = document.querySelector(`#chips [data-variant="${CSS.escape(info.variant)}"] .n`);
      if (chip) chip.textContent = ` ${plural(Math.max(made.attempts, body.total), "attempt")}`;
      if (body.final) {
        const revealed = await getJSON(`${base}/reveal`);
        if (revealed.status === 200) reveal.append(el("div", {}, "seed ", el("code", { text: revealed.body.seed })));
      }
    }
    function soon() { clearTimeout(pending); pending = setTimeout(load, 600); if (place) place.refresh(); }
    load();
    follow(`${base}/events`, {
      attempt(data) {
        const row = tbody.querySelector(`tr[data-name="${CSS.escape(data.name)}"]`);
        const fresh = rowOf({ ...data, rank: row ? Number(row.querySelector(".rank").textContent) || 0 : 0 });
        if (row) row.replaceWith(fresh); else tbody.append(fresh);
        fresh.classList.add("flash");
        empty.hidden = true;
        soon();  // the server ranks: fetch its order shortly after
      },
    });
    return panel;
  }

  function tick() {
    const left = endsAt - (Date.now() + offset);
    $("clock-value").textContent = left > 0 ? formatMs(left) : "over";
  }

  async function start() {
    // The command as it runs from another machine: this page's own address as the server.
    // Its words in groups that a narrow screen wraps between, never inside ("--" on one line, "server" on the
    // next would read as another command); a copy takes the same text.
    const words = ["forty-thieves daily", "--name YOUR_NAME", `--server ${location.origin}`];
    $("daily-command").replaceChildren(...words.flatMap((part, i) => [...(i ? [" "] : []),
      el("span", { class: "words", text: part })]));
    let answer;
    try { answer = await getJSON("/daily"); } catch (error) { answer = { status: 0 }; }
    if (answer.status === 404 || answer.status === 405) {
      notice("No daily challenge on this server", "This server runs matches only. Watch one from its code on the home page.");
      return;
    }
    if (answer.status !== 200 || !answer.body || !Array.isArray(answer.body.variants)) {
      notice("The daily challenge is unavailable", `The server answered ${answer.status || "nothing"}; try again later.`);
      return;
    }
    today = answer.body;
    offset = today.now_ms - Date.now();
    endsAt = today.ends_at_ms;
    $("state").className = "state live";
    $("state").textContent = "live";
    $("headline").textContent = `Daily challenge · ${today.date}`;
    $("chips").replaceChildren(...today.variants.map((v) => el("span", { class: "chip", "data-variant": v.variant },
      el("b", { text: v.variant }), el("span", { class: "n", text: ` ${plural(v.attempts, "attempt")}` }))));
    $("variants").replaceChildren(...today.variants.map(variantPanel));
    // The panels exist only now: the browser looked for the link's #board-VARIANT before they did.
    const linked = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (linked) linked.scrollIntoView();
    archiveNav(today.date);
    groupLinks();
    setInterval(tick, 500);
    tick();
  }

  /** "Your groups' boards": the groups of the name this browser last played under (one it holds a key of), each
      a link to its page (the day's board among its members); hidden for no such name or no group. */
  async function groupLinks() {
    const name = FTR.heldName(localStorage.getItem("ftr:name") || "");
    if (!name) return;
    const { status, body } = await getJSON(`${FTR.playerPath(name)}?limit=1`, FTR.playerKey(name))
      .catch(() => ({ status: 0 }));
    const groups = (status === 200 && body && body.groups) || [];
    $("groups-panel").hidden = !groups.length;
    $("groups-note").textContent = `as ${body ? body.name : name}`;
    $("group-links").replaceChildren(...groups.map((g) => el("li", { "data-group": g.group },
      el("a", { href: `/groups/${encodeURIComponent(g.group)}`, text: g.name }))));
  }

  /** The links to past days: yesterday, and any day by the date picker (up to yesterday). */
  function archiveNav(date) {
    const day = new Date(`${date}T00:00:00Z`);
    day.setUTCDate(day.getUTCDate() - 1);
    const yesterday = day.toISOString().slice(0, 10);
    $("yesterday").href = `/daily/${yesterday}`;
    $("yesterday").textContent = `Yesterday's deals (${yesterday}) →`;
    const picker = $("archive-date");
    picker.max = yesterday;
    picker.value = yesterday;
    $("archive-form").addEventListener("submit", (event) => {
      event.preventDefault();
      if (picker.value) location.href = `/daily/${picker.value}`;
    });
  }

  start();
})();
