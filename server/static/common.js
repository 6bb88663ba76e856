/* Shared helpers of the pages: elements, cards, boards, times, JSON and event streams, and the player keys
   this browser holds (local storage "ftr:players") with the words for records and head-to-head.
   No rules live here: positions come from the server as views (RULES.md section 8). */
"use strict";

const FTR = (() => {
  const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
  const RANKS = { T: "10" };

  /** el("div", {class: "x"}, child, "text", ...): a new element. */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key === "style") node.style.cssText = value;
      else if (key.startsWith("data-")) node.setAttribute(key, value);
      else if (key in node) node[key] = value;
      else node.setAttribute(key, value);
    }
    for (const child of children.flat()) {
      if (child === undefined || child === null || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  /** "QH" -> {rank: "Q", suit: "♥", red: true}; "-" or "??" -> null. */
  function parseCard(text) {
    if (!text || text.length < 2 || text === "??") return null;
    const suit = text[text.length - 1];
    const rank = text.slice(0, -1);
    if (!(suit in SUITS)) return null;
    return { rank: RANKS[rank] || rank, suit: SUITS[suit], red: suit === "H" || suit === "D" };
  }

  /** A face-up card ("QH" shows "Q♥" in red), a face-down card, or an empty slot. */
  function cardEl(text, extra) {
    const card = parseCard(text);
    if (!card) return el("div", { class: "card slot" + (extra ? " " + extra : ""), text: "" });
    return el("div", { class: "card" + (card.red ? " red" : "") + (extra ? " " + extra : ""),
                       title: card.rank + card.suit, "data-card": text },
      card.rank + card.suit, el("span", { class: "big", text: card.suit }));
  }

  function downCard() { return el("div", { class: "card down", title: "face down" }); }

  /** "1 move", "2 moves". */
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

  /** A board from a view {tableau, hidden, foundations, stock, waste, redeals_left} (protocol WireView). */
  function boardEl(view, hot) {
    hot = hot || new Set();
    const foundations = el("div", { class: "pile" }, el("span", { class: "label", text: "Foundations" }),
      el("div", { class: "cards-row" }, view.foundations.map((t, i) => cardEl(t === "-" ? null : t,
        hot.has("f" + i) ? "hot" : ""))));
    const shownWaste = view.waste.slice(-6);
    const waste = el("div", { class: "pile" },
      el("span", { class: "label", text: `Waste ${view.waste.length}` }),
      el("div", { class: "cards-row waste" }, shownWaste.length
        ? shownWaste.map((t, i) => cardEl(t, i === shownWaste.length - 1 && hot.has("w") ? "hot" : ""))
        : cardEl(null)));
    const stock = el("div", { class: "pile" },
      el("span", { class: "label", text: view.redeals_left ? `Stock · ${plural(view.redeals_left, "redeal")}` : "Stock" }),
      view.stock ? el("div", { class: "card stock", title: plural(view.stock, "card") }, el("span", { text: view.stock }))
        : cardEl(null));
    const columns = view.tableau.map((cards, i) => {
      const hidden = view.hidden[i] || 0;
      const column = el("div", { class: "column" }, el("span", { class: "num", text: i + 1 }));
      for (let h = 0; h < hidden; h++) column.append(downCard());
      cards.forEach((t, j) => column.append(cardEl(t, j === cards.length - 1 && hot.has("c" + i) ? "hot" : "")));
      if (!hidden && !cards.length) column.append(cardEl(null));
      return column;
    });
    return el("div", { class: "board" },
      el("div", { class: "row" }, stock, waste, foundations),
      el("div", { class: "tableau", style: `--columns: ${view.tableau.length}` }, columns));
  }

  /** Which piles changed between two views (to outline them): "c0".., "w", "f0".. */
  function changed(before, after) {
    const hot = new Set();
    if (!before || !after) return hot;
    after.tableau.forEach((c, i) => {
      if (JSON.stringify(c) !== JSON.stringify(before.tableau[i])) hot.add("c" + i);
    });
    after.foundations.forEach((t, i) => { if (t !== before.foundations[i]) hot.add("f" + i); });
    if (JSON.stringify(after.waste) !== JSON.stringify(before.waste)) hot.add("w");
    return hot;
  }

  /** 83450 -> "1:23.4"; 3725000 -> "1:02:05". */
  function formatMs(ms, tenths) {
    ms = Math.max(0, Math.floor(ms));
    const h = Math.floor(ms / 3600000), m = Math.floor(ms / 60000) % 60, s = Math.floor(ms / 1000) % 60;
    const pad = (n) => String(n).padStart(2, "0");
    const base = h ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
    return tenths && !h ? `${base}.${Math.floor(ms / 100) % 10}` : base;
  }

  /** The address's path segment number `index` (0: the first, e.g. "players"), decoded; "" when it is missing
      or its escapes are malformed (%E0%A4%A), so a page then says "no such ..." rather than stop loading. */
  function pathSegment(index) {
    const part = location.pathname.split("/").filter(Boolean)[index] || "";
    try { return decodeURIComponent(part); } catch (error) { return ""; }
  }

  /** GET url as JSON: {status, body, headers}; with a player key, sent as Authorization (what only the key
      holder is shown, e.g. a player's groups). */
  async function getJSON(url, key = "") {
    const headers = { Accept: "application/json" };
    if (key) headers.Authorization = `Bearer ${key}`;
    const response = await fetch(url, { headers, cache: "no-store" });
    let body = null;
    try { body = await response.json(); } catch (error) { body = null; }
    return { status: response.status, body, headers: response.headers };
  }

  /** POST /matches with `settings`: the created match's answer ({code, host_token, ...}), its host token kept
      where the pages look for it (ftr:host:CODE). Throws an Error whose message says why not: the server's
      refusal as it worded it, or that the server could not be reached. */
  async function createMatch(settings) {
    let response;
    try {
      response = await fetch("/matches", { method: "POST", headers: { "Content-Type": "application/json" },
                                           body: JSON.stringify(settings) });
    } catch (error) {
      throw new Error(`could not reach the server: ${error}`);
    }
    const body = await response.json().catch(() => ({}));
    if (response.status !== 201) throw new Error(body.message || `refused (${response.status})`);
    localStorage.setItem(`ftr:host:${body.code}`, body.host_token);
    return body;
  }

  /** Follow a Server-Sent Events stream; handlers[name](data, id). Resumes after a drop or a cut
      from the last id seen (the server resumes with ?from=ID, nothing lost or repeated). The server's
      `error` event ends it for good (handlers.error(data): {code, message}; the match is gone). */
  function follow(url, handlers, onState) {
    let last = null, source = null, retry = null, over = false;
    function open() {
      const target = last ? `${url}${url.includes("?") ? "&" : "?"}from=${encodeURIComponent(last)}` : url;
      source = new EventSource(target);
      source.onopen = () => onState && onState("open");
      source.onerror = (event) => {
        if (over || event instanceof MessageEvent) return;  // the server's own `error` event: below
        onState && onState("retrying");
        if (source.readyState === EventSource.CLOSED) reopen(2000);
      };
      // `event: error` from the server (the match is gone: {type, code, message}): the stream is over for good,
      // so no reconnect (EventSource would reconnect by itself, and find no match).
      source.addEventListener("error", (event) => {
        if (!(event instanceof MessageEvent)) return;  // the connection failed: onerror retries
        let data = null;
        try { data = JSON.parse(event.data); } catch (error) { data = { message: String(event.data) }; }
        over = true;
        source.close();
        clearTimeout(retry);
        if (handlers.error) handlers.error(data, event.lastEventId);
      });
      for (const name of Object.keys(handlers).filter((name) => name !== "error")) {
        source.addEventListener(name, (event) => {
          if (event.lastEventId) last = event.lastEventId;
          let data = null;
          try { data = JSON.parse(event.data); } catch (error) { return; }
          handlers[name](data, event.lastEventId);
        });
      }
      source.addEventListener("dropped", () => reopen(200));
    }
    function reopen(delay) {
      if (source) source.close();
      clearTimeout(retry);
      retry = setTimeout(open, delay);
    }
    open();
    return { close: () => { clearTimeout(retry); if (source) source.close(); } };
  }

  /** Is SHA-256(nonce + seed), in hex, the commitment published at creation (server/README.md, "A match's life")?
      {seed, nonce, commitment} -> true / false, or null where the browser has no SubtleCrypto. */
  async function verifyCommitment(data) {
    if (!(window.crypto && crypto.subtle)) return null;
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(data.nonce + data.seed));
    const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
    return hex === data.commitment;
  }

  const STATUS = { playing: "playing", won: "won", dead: "stuck", resigned: "resigned", timeout: "time up",
                   lobby: "in lobby", ready: "ready" };

  /** The headline of a match's results ({ranking: [{rank, name, status, foundation, time_ms}]}): "wins" only for
      a win; when nobody won (all resigned, stuck or out of time), who ranks first and with how many cards. A
      game of one (a solo game, a daily attempt) races nobody: its own result, "You" when `me` is its player
      ("You won in 4:12", "Your game: stuck with 57 cards up"). */
  function winnerLine(results, me) {
    if (!results) return "Race over";
    if (results.ranking.length === 1) {
      const only = results.ranking[0];
      const you = Boolean(me) && only.name === me;
      if (only.status === "won") return `${you ? "You" : only.name} won in ${formatMs(only.time_ms)}`;
      return `${you ? "Your" : only.name + "'s"} game: ${STATUS[only.status] || only.status} with `
        + `${plural(only.foundation, "card")} up`;
    }
    const first = results.ranking.filter((r) => r.rank === 1);
    const names = first.map((r) => r.name);
    const both = names.join(" and ");
    if (first.every((r) => r.status === "won")) return names.length === 1 ? `${names[0]} wins!` : `${both} share the win`;
    const cards = first[0] ? first[0].foundation : 0;
    return `Nobody won · ${both} ${names.length === 1 ? "ranks" : "rank"} first with ${plural(cards, "card")} up`;
  }

  /** The chip that tells everyone the host chose the deal (settings.chosen_deal), or null. */
  function chosenDealChip(settings) {
    if (!settings || !settings.chosen_deal) return null;
    return el("span", { class: "chip chosen", id: "chosen-chip",
      title: "The host dealt a seed or a position of their own: they may have seen this deal before the race." },
      el("b", { text: "deal chosen by the host" }));
  }

  // ------------------------------------------------------------------ named players

  const PLAYERS = "ftr:players";         // {name as claimed: player key}
  const LEGACY_DAILY = "ftr:daily:names";  // the daily page's older {name: token}: the token is the player key

  /** Every player key this browser holds, {name: key} (the daily's older tokens moved in on the first read). */
  function playerKeys() {
    let keys = {};
    try { keys = JSON.parse(localStorage.getItem(PLAYERS) || "{}") || {}; } catch (error) { keys = {}; }
    const legacy = localStorage.getItem(LEGACY_DAILY);
    if (legacy) {
      try {
        for (const [name, key] of Object.entries(JSON.parse(legacy) || {})) if (key && !keys[name]) keys[name] = key;
      } catch (error) { /* unreadable: nothing to move */ }
      localStorage.setItem(PLAYERS, JSON.stringify(keys));
      localStorage.removeItem(LEGACY_DAILY);
    }
    return keys;
  }

  const fold = (name) => name.toLocaleLowerCase();

  /** The key held for `name` ("" when none): the name as typed, else the one held in another case of it
      (the server finds a name in any case). */
  function playerKey(name) {
    const keys = playerKeys();
    if (keys[name]) return keys[name];
    const other = Object.keys(keys).filter((held) => fold(held) === fold(name));
    return other.length === 1 ? keys[other[0]] : "";
  }

  /** The name as held here for `name` typed in any case, or "" when this browser holds no key of it. */
  function heldName(name) {
    const keys = playerKeys();
    if (keys[name]) return name;
    return Object.keys(keys).find((held) => fold(held) === fold(name)) || "";
  }

  /** Keep `key` as the player key of `name` (replacing one of another case of it: one key per name). */
  function keepPlayerKey(name, key) {
    const keys = Object.fromEntries(Object.entries(playerKeys()).filter(([held]) => fold(held) !== fold(name)));
    keys[name] = key;
    localStorage.setItem(PLAYERS, JSON.stringify(keys));
  }

  function forgetPlayerKey(name) {
    const keys = Object.fromEntries(Object.entries(playerKeys()).filter(([held]) => fold(held) !== fold(name)));
    localStorage.setItem(PLAYERS, JSON.stringify(keys));
  }

  /** "/players/Ann": a player's page (the key never goes into an address the server sees). */
  const playerPath = (name) => `/players/${encodeURIComponent(name)}`;

  /** What a value of a record is: "3:31.4" (a time, to the tenth: a fraction of a second may break a record),
      "212 moves", "87 cards up". */
  const amount = (what, value) => (what === "time" ? formatMs(value, true) : what === "moves" ? plural(value, "move")
    : `${plural(value, "card")} up`);

  /** Where a deal's record is, from its label (as the CLI says it): "on deal seed 1234", "on deal 3f2a9c01be77"
      (a chosen position's label "deal 3f2a9c01be77"), "on the daily of 2026-12-07" ("daily 2026-12-07"). */
  function dealWords(label) {
    if (label.startsWith("daily ")) return `on the daily of ${label.slice(6)}`;
    return label.startsWith("deal ") ? `on ${label}` : `on deal ${label}`;
  }

  /** A named player's daily streak in words, from the server's {streak, best_streak, freezes} (the attempt's
      answer, a board entry, GET /players/{name}); the CLI says the same: "Streak 5 (best 9) · 1 freeze". */
  function streakLine(s) {
    return `Streak ${s.streak || 0} (best ${s.best_streak || 0}) · ${plural(s.freezes || 0, "freeze")}`;
  }

  /** A new personal record in words ({name, variant, deal, what, value, previous}, protocol RecordNote), as the
      CLI says it: "New record on deal seed 1234: 212 moves, 9 fewer than your best"; "First win on deal seed
      1234: 3:31" (previous -1); another player's begins with the name and says "their best". */
  function recordLine(note, me) {
    const where = note.deal ? dealWords(note.deal) : `in ${note.variant}`;
    let text;
    if (note.previous < 0) {
      text = note.what === "cards" ? `first game of ${note.variant}: ${amount(note.what, note.value)}`
        : `first win ${where}: ${amount(note.what, note.value)}`;
    } else {
      const gain = Math.abs(note.previous - note.value);
      const by = { time: `${formatMs(gain, true)} faster`, moves: `${gain} fewer`, cards: `${gain} more` }[note.what];
      const whose = note.name === me ? "your" : "their";
      text = `new record ${where}: ${amount(note.what, note.value)}, ${by} than ${whose} best`;
    }
    return note.name === me ? text[0].toUpperCase() + text.slice(1) : `${note.name}: ${text}`;
  }

  /** Two players' score over all their races ({a, b, a_wins, b_wins, draws, races}, protocol Rivalry):
      "ann 23-17 bob between the two of them, over all their races (41, 1 drawn)", as the CLI says it; the
      viewer's name (me), when it is pair.b, goes first: "bob 17-23 ann ...". */
  function rivalryLine(pair, me) {
    if (me && me === pair.b) {
      pair = { a: pair.b, b: pair.a, a_wins: pair.b_wins, b_wins: pair.a_wins, draws: pair.draws, races: pair.races };
    }
    return `${pair.a} ${pair.a_wins}-${pair.b_wins} ${pair.b} between the two of them, over all their races`
      + ` (${pair.races}${pair.draws ? `, ${pair.draws} drawn` : ""})`;
  }

  /** The panel a claim (or a recovery) shows once: the recovery code, Copy, what it is for, and Done.
      `onDone` runs when it is dismissed (the panel is removed then). */
  function recoveryPanel(name, code, onDone, title) {
    const copied = el("span", { class: "note", role: "status" });
    const codeEl = el("code", { class: "recovery-code", id: "recovery-code", text: code });
    const copy = el("button", { type: "button", id: "copy-recovery", text: "Copy" });
    const done = el("button", { type: "button", id: "recovery-done", class: "quiet", text: "Done, I kept it" });
    const panel = el("section", { class: "panel claim-panel", id: "claim-panel", "aria-labelledby": "claim-title" },
      el("h3", { id: "claim-title", text: title || `${name} is your name on this server now` }),
      el("p", {}, "Your recovery code, shown only this once:"),
      el("div", { class: "share-row" }, codeEl, copy, copied),
      el("p", { class: "note", id: "recovery-what" }, "Keep it somewhere safe: on another device, or if this browser "
        + "forgets you, it gives you back the name with its games and records (on your page: Recover with a code)."),
      el("div", { class: "actions" }, done));
    copy.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(code);
        copied.textContent = "Copied ✓";
      } catch (error) {  // no clipboard (not https) or no permission: select it for the person to copy
        const range = document.createRange();
        range.selectNodeContents(codeEl);
        getSelection().removeAllRanges();
        getSelection().addRange(range);
        copied.textContent = "Selected: copy it with your browser";
      }
    });
    done.addEventListener("click", () => { panel.remove(); if (onDone) onDone(); });
    return panel;
  }

  return { el, cardEl, boardEl, changed, formatMs, getJSON, pathSegment, follow, STATUS, parseCard,
           createMatch, verifyCommitment, plural, winnerLine, chosenDealChip, playerKeys, playerKey, heldName, keepPlayerKey, forgetPlayerKey, playerPath,
           recordLine, rivalryLine, recoveryPanel, streakLine };
})();
