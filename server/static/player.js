/* /players/{name}: a named player's games, records, a chart of time and cards up, the head-to-head and the
   groups it is in (GET /players/{name}, JSON). On one's own page (this browser holds the name's key,
   common.js): making a group, the link and QR code that take the key to another device, a new key (the old
   one stops working), and deleting the history. Recovering with a code works
   from any browser. A link /players/{name}#key=KEY keeps the key it brings and drops the fragment from the
   address bar (a fragment never reaches the server, nor its logs); the key goes to the server only in a
   request's header, never in an address. */
"use strict";

(() => {
  const { el, formatMs, getJSON, plural, STATUS } = FTR;
  const $ = (id) => document.getElementById(id);
  const SVG = "http://www.w3.org/2000/svg";
  const RECENT = 50;       // games asked for (GET /players/{name}?limit=)
  const CHART_GAMES = 30;  // the chart's last games

  let name = FTR.pathSegment(1);
  let profile = null;
  let confirmingDelete = false;
  let confirmingRotate = false;

  function say(text, kind) {
    $("message").textContent = text;
    $("message").className = "message" + (kind ? " " + kind : "");
  }

  let linkKey = "";  // a key a link brought for a name this browser holds another key for: asked about
  /** #key=KEY (the link "Use on another device" made on a device that holds the key): keep it, and take the
      fragment off the address, so that the key is neither in the history nor shown. The key kept, or "". */
  function keyFromFragment() {
    if (!location.hash.startsWith("#key=")) return "";
    let key = "";
    try { key = decodeURIComponent(location.hash.slice(5)); } catch (error) { key = ""; }
    history.replaceState(null, "", location.pathname + location.search);
    if (!/^[A-Za-z0-9_-]{16,200}$/.test(key)) {
      say("That link holds no player key: make a new one on the other device.", "error");
      return "";
    }
    const held = FTR.playerKey(name);
    if (held && held !== key) {  // anyone can make such a link: it replaces the key held here only when asked to
      linkKey = key;
      return "";
    }
    FTR.keepPlayerKey(name, key);
    localStorage.setItem("ftr:name", name);
    return key;
  }
  const brought = keyFromFragment();

  function askLinkKey() {
    $("link-key").hidden = !linkKey;
    document.querySelectorAll(".link-key-name").forEach((node) => { node.textContent = profile ? profile.name : name; });
  }

  function answerLinkKey(use) {
    if (use) {
      FTR.keepPlayerKey(profile ? profile.name : name, linkKey);
      say(`This browser keeps the link's key for ${profile ? profile.name : name} now.`, "hint");
    }
    linkKey = "";
    askLinkKey();
    if (profile) render();
  }

  // The key held here, unless the server refused it (a new key made on another device, or the name claimed anew):
  // the page is then read as anyone's, neither "yours" nor with the player's groups.
  let refusedKey = "";
  const ownKey = () => {
    const held = profile ? FTR.playerKey(profile.name) : "";
    return held !== refusedKey ? held : "";
  };

  // ------------------------------------------------------------------ the games

  /** A game's row: date (a phone leaves the year out), variant, deal, rank of N with the status, time,
      moves, cards up, and the link to its replay (the match's page: every player's replay once it is over). */
  function gameRow(game) {
    const replay = game.match ? `/watch/${encodeURIComponent(game.match)}` : "";
    const [year, ...day] = String(game.date || "").split("-");
    return el("tr", { "data-match": game.match || "" },
      el("td", { class: "date" }, el("span", { class: "hide-sm", text: `${year}-` }), day.join("-")),
      el("td", { class: "hide-sm", text: game.variant }),
      el("td", { class: "deal", text: game.deal }),
      el("td", { class: "result" }, el("span", { class: "rank-of", text: `${game.rank} of ${game.of}` }), " ",
        el("span", { class: `pill ${game.status}`, text: STATUS[game.status] || game.status })),
      el("td", { class: "num", text: formatMs(game.time_ms || 0, true) }),
      el("td", { class: "num hide-sm", text: String(game.moves) }),
      el("td", { class: "num", text: String(game.foundation) }),
      el("td", {}, replay ? el("a", { href: replay }, "replay",
        el("span", { class: "sr-only", text: ` of ${game.deal}, ${game.date}` })) : ""));
  }

  function renderRecent() {
    const games = profile.recent || [];
    $("recent-panel").hidden = false;
    $("recent-body").replaceChildren(...games.map(gameRow));
    $("recent-empty").hidden = games.length > 0;
    $("recent-note").textContent = games.length < profile.games ? `the last ${games.length} of ${profile.games}` : "";
  }

  // ------------------------------------------------------------------ the chart (plain SVG)

  const svg = (tag, attrs, ...children) => {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
    for (const child of children) node.append(child);
    return node;
  };

  /** Time (left axis) and cards up (right axis) of the last games, the oldest on the left: one point per game
      on each line (circle.time-point, circle.cards-point), a won game's time point filled. */
  function chartEl(games, width) {
    // As wide as its panel (the text stays 12 px on a phone), 300 to 1100 units.
    const W = Math.round(Math.min(1100, Math.max(300, width || 640))), H = 220;
    const left = 44, right = 36, top = 14, bottom = 30;
    const n = games.length;
    const times = games.map((g) => g.time_ms || 0), cards = games.map((g) => g.foundation || 0);
    // The time axis tops at a round time just over the longest game: the smallest step from 10 s to 30 min of
    // which it takes at most six.
    const longest = Math.max(1, ...times);
    const step = [10, 30, 60, 120, 300, 600, 1800].map((s) => s * 1000).find((s) => longest / s <= 6) || 3600000;
    const timeTop = Math.max(1, Math.ceil(longest / step)) * step;
    const cardsTop = Math.max(104, ...cards);
    const x = (i) => left + (n === 1 ? (W - left - right) / 2 : (i * (W - left - right)) / (n - 1));
    const y = (value, most) => top + (H - top - bottom) * (1 - value / most);
    const grid = [0, 0.5, 1].map((f) => {
      const at = y(f, 1);
      return svg("g", { class: "tick" }, svg("line", { x1: left, x2: W - right, y1: at, y2: at }),
        svg("text", { x: left - 6, y: at + 4, "text-anchor": "end", class: "time-axis" }, formatMs(timeTop * f)),
        svg("text", { x: W - right + 6, y: at + 4, class: "cards-axis" }, String(Math.round(cardsTop * f))));
    });
    const dates = [svg("text", { x: x(0), y: H - 12, "text-anchor": n === 1 ? "middle" : "start" }, games[0].date),
      n > 1 ? svg("text", { x: x(n - 1), y: H - 12, "text-anchor": "end" }, games[n - 1].date) : ""];
    const line = (cls, values, most) => svg("polyline", { class: cls,
      points: values.map((v, i) => `${x(i).toFixed(1)},${y(v, most).toFixed(1)}`).join(" ") });
    const points = (cls, values, most, label) => values.map((v, i) => svg("circle", {
      class: cls + (games[i].status === "won" ? " won" : ""), cx: x(i).toFixed(1), cy: y(v, most).toFixed(1), r: 4 },
    svg("title", {}, `${games[i].date} ${games[i].deal}: ${label(games[i])}`)));
    const won = games.filter((g) => g.status === "won").length;
    const summary = `Time and cards up over the last ${plural(n, "game")}, the oldest first: ${plural(won, "win")}; `
      + `times from ${formatMs(Math.min(...times))} to ${formatMs(Math.max(...times))}, `
      + `cards up from ${Math.min(...cards)} to ${Math.max(...cards)}.`;
    // Drawn at its size (width W px, never scaled up: a resize draws it again), narrower where the panel is.
    return svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img", class: "chart-svg", id: "chart-svg",
                        "aria-labelledby": "chart-svg-title chart-svg-desc", "data-points": String(n) },
      svg("title", { id: "chart-svg-title" }, "Time and cards up"), svg("desc", { id: "chart-svg-desc" }, summary),
      ...grid, ...dates, line("time-line", times, timeTop), line("cards-line", cards, cardsTop),
      ...points("time-point", times, timeTop, (g) => `${formatMs(g.time_ms || 0, true)}, ${STATUS[g.status] || g.status}`),
      ...points("cards-point", cards, cardsTop, (g) => `${plural(g.foundation, "card")} up`));
  }

  function renderChart() {
    const games = (profile.recent || []).slice(0, CHART_GAMES).reverse();
    $("chart-panel").hidden = !games.length;
    if (!games.length) return;
    $("chart-note").replaceChildren(el("span", { class: "key time", text: "● time" }), " (left) · ",
      el("span", { class: "key cards", text: "● cards up" }), ` (right) · the last ${plural(games.length, "game")}`);
    $("chart").replaceChildren(chartEl(games, $("chart").clientWidth));
  }

  // ------------------------------------------------------------------ records and head-to-head

  const rate = (wins, games) => (games ? `${Math.round((100 * wins) / games)}\u00a0%` : "–");  // "100 %" on one line
  const time = (ms) => (ms >= 0 ? formatMs(ms, true) : "–");

  function renderRecords() {
    const variants = Object.entries(profile.variants || {}).sort(([a], [b]) => a.localeCompare(b));
    const deals = profile.records || [];
    $("records-panel").hidden = !variants.length && !deals.length;
    const num = (text) => el("td", { class: "num", text });
    $("variants-body").replaceChildren(...variants.map(([variant, v]) => el("tr", { "data-variant": variant },
      el("td", { text: variant }), num(String(v.games)), num(String(v.wins)), num(rate(v.wins, v.games)),
      num(time(v.best_time_ms ?? -1)), num(String(v.most_foundation ?? 0)))));
    $("deals-table").hidden = !deals.length;
    $("deals-body").replaceChildren(...deals.map((r) => el("tr", { "data-deal": r.deal },
      el("td", { class: "deal", text: r.deal }), el("td", { class: "hide-sm", text: r.variant }),
      el("td", { class: "num", text: time(r.best_time_ms ?? -1) }),
      el("td", { class: "num", text: (r.fewest_moves ?? -1) >= 0 ? String(r.fewest_moves) : "–" }),
      el("td", { class: "num", text: `${r.wins ?? 0} of ${r.games ?? 0}` }))));
  }

  function renderRivals() {
    const rivals = profile.head_to_head || [];
    $("rivals-panel").hidden = !rivals.length;
    $("rivals-body").replaceChildren(...rivals.map((h) => el("tr", { "data-name": h.name },
      el("td", { class: "who" }, el("a", { href: FTR.playerPath(h.name), text: h.name })),
      el("td", { class: "num", text: String(h.races) }), el("td", { class: "num", text: String(h.wins) }),
      el("td", { class: "num", text: String(h.losses) }), el("td", { class: "num", text: String(h.draws) }))));
  }

  // ------------------------------------------------------------------ groups

  /** The player's groups as links to their pages; on one's own page also "Make a group" (POST /groups with
      the key held here: the new group's page opens, its link to send friends on it). */
  function renderGroups() {
    const groups = profile.groups || [];
    const mine = Boolean(ownKey());
    $("groups-panel").hidden = !groups.length && !mine;
    $("group-links").replaceChildren(...groups.map((g) => el("li", { "data-group": g.group },
      el("a", { href: `/groups/${encodeURIComponent(g.group)}`, text: g.name }))));
    $("groups-empty").hidden = groups.length > 0;
    $("group-form").hidden = !mine;
  }

  async function createGroup(event) {
    event.preventDefault();
    const wanted = $("group-name-input").value.trim();
    if (!wanted || !profile) return;
    $("group-problem").textContent = "";
    const response = await fetch("/groups", { method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json", Authorization: `Bearer ${ownKey()}` },
      body: JSON.stringify({ name: wanted, player: profile.name, player_key: ownKey() }) });
    const body = await response.json().catch(() => ({}));
    if (response.status !== 201 || !body.group) {
      $("group-problem").textContent = body.message || `refused (${response.status})`;
      return;
    }
    location.href = `/groups/${encodeURIComponent(body.group)}`;
  }

  // ------------------------------------------------------------------ one's own page

  const deviceLink = () => `${location.origin}${FTR.playerPath(profile.name)}#key=${encodeURIComponent(ownKey())}`;

  /** The link as a QR code (qrcode-generator, vendor/), drawn as one SVG path of its dark modules. */
  function qrEl(text) {
    const code = qrcode(0, "M");
    code.addData(text);
    code.make();
    const count = code.getModuleCount(), margin = 4;
    let path = "";
    for (let r = 0; r < count; r++) {
      for (let c = 0; c < count; c++) if (code.isDark(r, c)) path += `M${c + margin} ${r + margin}h1v1h-1z`;
    }
    const size = count + 2 * margin;
    return svg("svg", { viewBox: `0 0 ${size} ${size}`, role: "img", "aria-label": "QR code of the link",
                        class: "qr-svg", "shape-rendering": "crispEdges" },
      svg("rect", { width: size, height: size, fill: "#fff" }), svg("path", { d: path, fill: "#000" }));
  }

  function renderOwn() {
    const mine = Boolean(ownKey());
    $("own-panel").hidden = !mine;
    if (!mine) return;
    $("own-name").textContent = profile.name;
    document.querySelectorAll(".own-name").forEach((node) => { node.textContent = profile.name; });
    $("delete-button").hidden = confirmingDelete;
    $("confirm-delete").hidden = !confirmingDelete;
    $("rotate-button").hidden = confirmingRotate;
    $("confirm-rotate").hidden = !confirmingRotate;
    $("confirm-delete-text").textContent = `Delete all of ${profile.name}'s games, records and head-to-head? This `
      + "cannot be undone, and the name is free for anyone to take again.";
  }

  function showDevice() {
    const open = $("device").hidden;
    $("device").hidden = !open;
    $("device-button").setAttribute("aria-expanded", String(open));
    if (!open) return;
    const link = deviceLink();
    $("device-link").href = link;
    $("device-link").textContent = link;
    $("device-qr").replaceChildren(qrEl(link));
  }

  async function copyDevice() {
    try {
      await navigator.clipboard.writeText(deviceLink());
      $("device-note").textContent = "Copied ✓";
    } catch (error) {
      const range = document.createRange();
      range.selectNodeContents($("device-link"));
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      $("device-note").textContent = "Selected: copy it with your browser";
    }
  }

  async function deleteHistory() {
    const held = profile.name;
    const response = await fetch(FTR.playerPath(held), { method: "DELETE",
                                                         headers: { Authorization: `Bearer ${ownKey()}` } });
    confirmingDelete = false;
    if (response.status === 204) {
      FTR.forgetPlayerKey(held);
      say(`${held}'s history is deleted, and the name is free again.`, "hint");
      await load();
      return;
    }
    const body = await response.json().catch(() => ({}));
    say(body.message || `refused (${response.status})`, "error");
    render();
  }

  /** POST /players/{name}/key with the key held: a new one, kept here; the old one (other devices, links made
      before) stops working. */
  async function rotateKey() {
    confirmingRotate = false;
    const response = await fetch(`${FTR.playerPath(profile.name)}/key`, { method: "POST",
      headers: { Authorization: `Bearer ${ownKey()}`, Accept: "application/json" } });
    const body = await response.json().catch(() => ({}));
    if (response.status === 200 && body.player_key) {
      FTR.keepPlayerKey(profile.name, body.player_key);
      say(`A new key for ${profile.name} is kept here: other devices and older links no longer race as it.`, "hint");
      if (!$("device").hidden) showDevice();  // the link shown had the old key: closed, to be made again
    } else {
      say(body.message || `refused (${response.status})`, "error");
    }
    render();
  }

  async function recover(event) {
    event.preventDefault();
    const code = $("recovery-code-input").value.trim();
    if (!code) return;
    const response = await fetch(`${FTR.playerPath(profile ? profile.name : name)}/recover`, {
      method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ recovery_code: code }) });
    const body = await response.json().catch(() => ({}));
    if (response.status !== 200) { say(body.message || `refused (${response.status})`, "error"); return; }
    $("recovery-code-input").value = "";
    FTR.keepPlayerKey(profile.name, body.player_key);
    localStorage.setItem("ftr:name", profile.name);
    say(`This browser races as ${profile.name} again: the old key and recovery code no longer work.`, "hint");
    $("claim-home").replaceChildren(FTR.recoveryPanel(profile.name, body.recovery_code, null,
      `${profile.name} is yours on this browser again`));
    await load();  // read again with the new key: the player's groups come with it
  }

  // ------------------------------------------------------------------ the page

  function render() {
    if (!profile) return;
    const mine = Boolean(ownKey());
    $("state").textContent = mine ? "you" : "player";
    $("state").className = "state" + (mine ? " finished" : "");
    $("headline").textContent = profile.name;
    document.title = `${profile.name} · Forty Thieves Race`;
    $("subline").textContent = `${plural(profile.games, "game")} · ${plural(profile.wins, "win")} · `
      + `${rate(profile.wins, profile.games)} won`;
    $("streak").textContent = FTR.streakLine(profile);
    renderOwn();
    renderRecent();
    renderChart();
    renderRecords();
    renderRivals();
    renderGroups();
    $("recover-panel").hidden = false;
  }

  async function load() {
    // With the key held here the page holds the player's groups too; a key no longer the player's reads as anyone.
    const url = `${FTR.playerPath(name)}?limit=${RECENT}`, held = name ? FTR.playerKey(name) : "";
    // No name in the address (or a malformed escape): nobody, asked of no server.
    let { status, body } = name ? await getJSON(url, held) : { status: 404, body: null };
    refusedKey = status === 403 && held ? held : "";
    if (refusedKey) ({ status, body } = await getJSON(url));
    if (status === 404) {
      profile = null;
      $("state").textContent = "nobody";
      $("headline").textContent = name || "No such player";
      $("subline").textContent = name ? `Nobody has the name “${name}” on this server: the first race or daily `
        + "attempt with it claims it." : "This address names no player.";
      for (const id of ["own-panel", "recent-panel", "chart-panel", "records-panel", "rivals-panel", "groups-panel",
        "recover-panel"]) {
        $(id).hidden = true;
      }
      return;
    }
    if (status !== 200 || !body) {
      $("state").textContent = "unavailable";
      $("subline").textContent = (body && body.message) || `The server answered ${status}; try again later.`;
      return;
    }
    // A key brought by a link was kept under the name as the address spells it: keep it under the name as
    // claimed (one key per name, whatever its case).
    if (brought && body.name !== name) {
      FTR.keepPlayerKey(body.name, brought);
      localStorage.setItem("ftr:name", body.name);
    }
    profile = body;
    name = body.name;
    render();
  }

  function wire() {
    $("device-button").addEventListener("click", showDevice);
    $("copy-device").addEventListener("click", copyDevice);
    $("delete-button").addEventListener("click", () => { confirmingDelete = true; render(); $("delete-no").focus(); });
    $("delete-no").addEventListener("click", () => { confirmingDelete = false; render(); $("delete-button").focus(); });
    $("delete-yes").addEventListener("click", deleteHistory);
    $("rotate-button").addEventListener("click", () => { confirmingRotate = true; render(); $("rotate-no").focus(); });
    $("rotate-no").addEventListener("click", () => { confirmingRotate = false; render(); $("rotate-button").focus(); });
    $("rotate-yes").addEventListener("click", rotateKey);
    $("recover-form").addEventListener("submit", recover);
    $("group-form").addEventListener("submit", createGroup);
    $("link-key-yes").addEventListener("click", () => answerLinkKey(true));
    $("link-key-no").addEventListener("click", () => answerLinkKey(false));
    let resized = null;
    window.addEventListener("resize", () => {
      clearTimeout(resized);
      resized = setTimeout(() => { if (profile) renderChart(); }, 150);
    });
  }

  wire();
  askLinkKey();
  if (brought) say(`This browser keeps ${name}'s key now: it races as ${name} here too.`, "hint");
  load();
})();
