/* /watch/{code}: live standings, countdown and clock; the final ranking; every player's replay.
   Data: GET /matches/{code}, the Server-Sent Events of /matches/{code}/events, GET .../results and
   GET .../replays/{name}?positions=1 (the server sends every position: no rules here). */
"use strict";

(() => {
  const { el, boardEl, changed, formatMs, getJSON, follow, plural, STATUS, verifyCommitment } = FTR;
  const $ = (id) => document.getElementById(id);
  const code = FTR.pathSegment(1);

  // daily: {date, variant} of a daily attempt (GET /matches/{code}); its seed is the day's, revealed by the daily
  // challenge once the day is over (revealed: then true).
  const match = { state: "connecting", settings: null, startAt: 0, deadline: 0, cards: 104, openBoards: false,
                  daily: null, revealed: false };
  const players = new Map();   // name -> {name, ready, connected, bot, status, moves, foundation, time_ms}
  const boards = new Map();    // name -> view (open-boards matches only)
  let offset = 0;              // server clock minus this clock (ms)
  let results = null;
  const replays = new Map();   // name -> record with positions and views
  const replay = { name: null, index: 0, timer: null };

  const now = () => Date.now() + offset;

  function player(name) {
    if (!players.has(name)) {
      players.set(name, { name, ready: false, connected: true, status: "lobby", moves: 0, foundation: 0, time_ms: 0,
                          undos: 0, ended: false });
    }
    return players.get(name);
  }

  // At the start instant the server makes every player of the match "playing", with the cards the deal's
  // autoplay put up (server/store/scripts/matches.py START); no spectator event says so, and a player's first
  // progress event comes only with a first move. So the page does the same at once, then reads those cards
  // from GET /matches; the events behind wait for that answer, or a first move would look like cards put up.
  let starting = null;  // the promise of that read, once the start is seen
  function started() {
    if (starting) return starting;
    const waiting = [...players.values()].filter((p) => p.status === "lobby");
    if (!waiting.length) { starting = Promise.resolve(); return starting; }
    for (const p of waiting) p.status = "playing";
    renderHero(); renderStandings();
    starting = (async () => {
      for (let tries = 0; tries < 25; tries++) {  // the server's start timer may run a moment after the instant
        const { status, body } = await getJSON(`/matches/${encodeURIComponent(code)}`).catch(() => ({ status: 0 }));
        if (status === 200 && body.state !== "countdown") {
          // Everyone got the same deal: the cards of any player who has not moved yet are everyone's at the
          // start, and the count of each player no event has told of since.
          const unmoved = body.players.find((info) => info.moves === 0 && info.status !== "lobby");
          if (unmoved) for (const p of waiting) if (p.moves === 0) p.foundation = unmoved.foundation;
          renderHero(); renderStandings();
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    return starting;
  }

  // ------------------------------------------------------------------ header, hero, clock

  function renderChips() {
    const s = match.settings;
    const chips = [el("span", { class: "chip" }, "code ", el("b", { text: code }))];
    if (s) {
      chips.push(el("span", { class: "chip" }, el("b", { text: s.variant })));
      chips.push(el("span", { class: "chip" }, el("b", { text: s.players }), s.players === 1 ? " player" : " players"));
      if (s.time_limit_s) chips.push(el("span", { class: "chip" }, "limit ", el("b", { text: formatMs(s.time_limit_s * 1000) })));
      chips.push(el("span", { class: "chip", id: "boards-chip" }, "boards ",
        el("b", { text: s.open_boards ? "open" : match.daily ? "hidden until the day is over"
          : results ? "in the replays below" : "hidden until the end" })));
      const chosen = FTR.chosenDealChip(s);
      if (chosen) chips.push(chosen);
    }
    $("chips").replaceChildren(...chips);
  }

  function effectiveState() {
    if (match.state === "countdown" && match.startAt && now() >= match.startAt) return "playing";
    return match.state;
  }

  function winnerLine() { return FTR.winnerLine(results); }

  // A stuck player (status dead, told by a progress event: an undo is left) still plays; a finished one does not.
  const running = (p) => p.status === "playing" || (p.status === "dead" && !p.ended);

  function raceTime(p) {
    // A player still playing is on the race clock; an ended game shows when it ended (results: its time).
    if (!results && effectiveState() === "playing" && running(p) && match.startAt) {
      const elapsed = Math.max(0, now() - match.startAt);
      return match.deadline ? Math.min(elapsed, match.deadline - match.startAt) : elapsed;
    }
    return p.time_ms;
  }

  function renderHero() {
    const state = effectiveState();
    const badge = $("state");
    badge.className = "state " + ({ playing: "live", countdown: "countdown", finished: "finished", gone: "gone" }[state] || "");
    badge.textContent = { preparing: "preparing the deal", lobby: "lobby", countdown: "countdown",
      playing: "live", finished: "finished", connecting: "connecting", missing: "not found", gone: "lost" }[state] || state;
    const count = players.size, wanted = match.settings ? match.settings.players : 0;
    const headline = {
      preparing: "Shuffling a solvable deal…", lobby: `Waiting for players · ${count}/${wanted}`,
      countdown: "Get ready…", playing: "Race on", finished: winnerLine(),
      missing: "No such match", connecting: "Connecting…", gone: "The server lost this match",
    }[state] || "";
    $("headline").textContent = (match.round > 1 && headline ? `Round ${match.round} · ` : "") + headline;
    const ready = [...players.values()].filter((p) => p.ready).length;
    const sub = {
      preparing: "The server is proving a deal solvable before anyone sees it.",
      lobby: `${ready} of ${count} ready · the race starts when everyone is ready`,
      countdown: "Everyone gets the same deal at the same instant.",
      playing: `${[...players.values()].filter(running).length} of ${count} still playing`,
      finished: match.daily && !match.revealed ? "The seed is revealed when the day is over."
        : "The seed is revealed: check it against the commitment below.",
      missing: `There is no match with the code “${code}”.`, connecting: "", gone: match.goneMessage,
    }[state];
    $("subline").textContent = sub || "";
  }

  function tick() {
    const state = effectiveState();
    const clock = $("clock");
    let label = "waiting", value = "–:––";
    clock.classList.remove("countdown");
    if (state === "countdown") {
      label = "starts in"; value = ((match.startAt - now()) / 1000).toFixed(1);
      clock.classList.add("countdown");
    } else if (state === "playing") {
      const elapsed = now() - match.startAt;
      label = "race clock"; value = formatMs(match.deadline ? Math.min(elapsed, match.deadline - match.startAt) : elapsed, true);
      if (match.deadline) label = `race clock · ${formatMs(Math.max(0, match.deadline - now()))} left`;
    } else if (state === "gone") {
      label = "stopped: the match is lost";
    } else if (state === "finished") {
      label = "final"; value = formatMs(Math.max(0, ...[...players.values()].map((p) => p.time_ms)), true);
    }
    $("clock-label").textContent = label;
    $("clock-value").textContent = value;
    if (state === "playing") {  // the running race time of the players still playing
      for (const row of $("standings").querySelectorAll("tbody tr")) {
        const p = players.get(row.dataset.name), cell = row.querySelector(".time");
        if (p && cell && running(p)) cell.textContent = formatMs(raceTime(p), true);
      }
    }
    if (state !== tick.lastState) {
      tick.lastState = state;
      if (state === "playing") events.after(started);
      renderHero(); renderStandings();
    }
  }

  // ------------------------------------------------------------------ standings and feed

  // The live ranking is the one the standings' note states: by cards on the foundations, a win first (by
  // time, then moves, as in the results); equal cards share a rank (1, 1, 3). Within a shared rank the rows
  // go by name: having moved more or less says nothing of who is ahead.
  function liveKey(p) { return p.status === "won" ? [0, p.time_ms, p.moves] : [1, -p.foundation]; }
  /** Arrays of numbers compared item by item (a missing item counts as 0): negative when `a` goes first. */
  function compareKeys(a, b) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const x = a[i] ?? 0, y = b[i] ?? 0;
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  }

  function renderStandings(flashed) {
    const tbody = $("standings").querySelector("tbody");
    const rows = [];
    const state = effectiveState();
    const before = ["lobby", "preparing", "countdown", "connecting"].includes(state);  // nobody ranks yet
    let ordered;
    if (results) {
      ordered = results.ranking.map((r) => ({ ...player(r.name), ...r }));
      $("standings-note").textContent = "final";
    } else {
      ordered = [...players.values()].sort((a, b) => compareKeys(liveKey(a), liveKey(b)) || a.name.localeCompare(b.name));
      ordered.forEach((p, i) => {
        p.rank = i && compareKeys(liveKey(p), liveKey(ordered[i - 1])) === 0 ? ordered[i - 1].rank : i + 1;
      });
    }
    for (const p of ordered) {
      const status = before && !results ? (p.ready ? "ready" : "lobby") : p.status;
      const pct = Math.min(100, (100 * p.foundation) / match.cards);
      rows.push(el("tr", { "data-name": p.name, class: flashed === p.name ? "flash" : "" },
        el("td", {}, before && !results ? el("span", { class: "rank", text: "–", title: "the race has not started" })
          : el("span", { class: `rank r${p.rank}`, text: p.rank })),
        el("td", { class: "who" }, p.name,
          p.bot ? el("span", { class: "away bot", text: "bot", title: "a bot the server plays" }) : null,
          p.connected === false && status === "playing" ? el("span", { class: "away", text: "away" }) : null),
        el("td", {}, el("span", { class: `pill ${status}`, text: STATUS[status] || status })),
        el("td", {}, el("div", { class: "bar" },
          el("div", { class: "track" }, el("div", { class: "fill" + (p.status === "won" ? " won" : ""), style: `width:${pct}%` })),
          el("span", { class: "count" }, el("b", { class: "foundation", text: p.foundation }),
            el("span", { class: "of", text: ` / ${match.cards}` })))),
        el("td", { class: "num moves", text: p.moves }),
        el("td", { class: "num hide-sm time", text: raceTime(p) ? formatMs(raceTime(p), true) : "–" })));
    }
    tbody.replaceChildren(...rows);
    $("no-players").hidden = ordered.length > 0;
  }

  /** A stream id ("1764490000000-0") as [ms, seq]; none (a line from GET .../results) comes last. */
  function streamKey(id) {
    if (!id) return [Infinity, 0];
    const [ms, seq] = id.split("-").map(Number);
    return [ms, seq || 0];
  }

  // Newest first by the stream id of the event a line tells of: the same order whether the events came one
  // by one while the race ran or all at once from the catch-up of a page opened later.
  function feed(text, ms, id, kind) {
    const list = $("feed");
    const key = streamKey(id);
    const item = el("li", { "data-id": id || "", "data-kind": kind || "" },
      el("time", { text: ms === undefined ? "" : formatMs(ms) }), el("span", { text }));
    const below = [...list.children].find((li) => compareKeys(streamKey(li.dataset.id), key) <= 0);
    list.insertBefore(item, below || null);
    while (list.children.length > 60) list.lastChild.remove();
  }

  // ------------------------------------------------------------------ events

  // The stream's events are handled one at a time, in order: the read of the start (started) holds the
  // ones behind it until it is answered.
  const events = {
    chain: Promise.resolve(),
    after(task) {
      this.chain = this.chain.then(task).catch((error) => console.error(error));
      return this.chain;
    },
  };

  const joined = new Set();  // the names a "joined" line was written for

  const handlers = {
    lobby(data, id) {
      if (!["countdown", "playing", "finished"].includes(match.state)) match.state = data.state;
      match.settings = data.settings;
      for (const info of data.players) {
        Object.assign(player(info.name), { ready: info.ready, connected: info.connected, bot: Boolean(info.bot) });
        if (!joined.has(info.name)) { joined.add(info.name); feed(`${info.name} joined`, undefined, id); }
      }
      renderChips(); renderHero(); renderStandings();
    },
    countdown(data, id) {
      match.state = match.state === "finished" ? "finished" : "countdown";
      match.startAt = data.start_at_ms;
      if (match.settings && match.settings.time_limit_s) match.deadline = data.start_at_ms + match.settings.time_limit_s * 1000;
      feed(`Countdown: ${data.seconds} s, then the deal`, undefined, id);
      renderHero(); renderStandings();
    },
    async progress(data, id) {
      if (player(data.name).status === "lobby") await started();  // a move before this page's clock saw the start
      const p = player(data.name);
      const up = data.foundation - p.foundation, undid = (data.undos || 0) - (p.undos || 0), was = p.status;
      Object.assign(p, { moves: data.moves, foundation: data.foundation, status: data.status, time_ms: data.time_ms,
                         undos: data.undos || 0 });
      if (undid > 0) {
        feed(`${data.name} undid ${undid === 1 ? "a move" : undid + " moves"} · ${data.foundation} on the foundations`, data.time_ms, id);
      } else if (up > 0) {
        feed(`${data.name} put ${up === 1 ? "a card" : up + " cards"} up · ${data.foundation} on the foundations`, data.time_ms, id);
      }
      if (data.status === "dead" && was !== "dead") {
        feed(`${data.name} is stuck: no card can reach a foundation (an undo is left)`, data.time_ms, id, "stuck");
      }
      renderStandings(data.name); renderHero();
    },
    async finished(data, id) {
      if (player(data.name).status === "lobby") await started();
      Object.assign(player(data.name), { moves: data.moves, foundation: data.foundation, status: data.status, time_ms: data.time_ms,
                                          ended: true });
      const how = { won: "won", dead: "is stuck (no card can reach a foundation)", resigned: "resigned", timeout: "ran out of time" };
      feed(`${data.name} ${how[data.status] || data.status} · ${plural(data.moves, "move")}`, data.time_ms, id);
      renderStandings(data.name); renderHero();
    },
    results(data, id) { showResults(data, id); },
    rematch(data, id) {
      feed(`${data.names.join(", ")} ${data.names.length === 1 ? "wants" : "want"} a rematch`, undefined, id);
      showNextRound(data.next, data.names);
    },
    error(data) {  // the server lost the match (its Redis restarted without its data): nothing more will come
      match.state = "gone";
      match.goneMessage = data.message || "the server lost this match";
      feed("The server lost this match: the race cannot go on", undefined, undefined, "gone");
      renderHero(); renderStandings(); tick();
    },
    board(data) {
      // The start boards are written just after the start: a quick first move's board may come before.
      if (data.moves === 0 && data.time_ms === 0 && boards.has(data.name)) return;
      boards.set(data.name, data.view);
      renderBoards();
    },
  };

  function renderBoards() {
    if (!boards.size || results) { $("boards-panel").hidden = true; return; }
    $("boards-panel").hidden = false;
    $("boards").replaceChildren(...[...boards.entries()].map(([name, view]) =>
      el("div", {}, el("div", { class: "who" }, el("span", { text: name }),
        el("span", { class: "note", text: `${plural(player(name).moves, "move")} · ${player(name).foundation} up` })), boardEl(view))));
  }

  // ------------------------------------------------------------------ results and replays

  /** The results, from the stream (`id`: its event's) or from GET .../results (no id: the event's line takes
      its place in the feed when the catch-up brings it). */
  async function showResults(data, id) {
    if (results) {
      const line = $("feed").querySelector('li[data-kind="results"][data-id=""]');
      if (line && id) { line.remove(); feed(line.querySelector("span").textContent, undefined, id, "results"); }
      return;
    }
    results = data;
    match.state = "finished";
    for (const row of data.ranking) {
      Object.assign(player(row.name), { status: row.status, moves: row.moves, foundation: row.foundation, time_ms: row.time_ms });
    }
    $("podium").replaceChildren(...data.ranking.map((r) => el("div", { class: `place p${r.rank}`, "data-name": r.name },
      el("div", { class: "top" }, el("span", { class: `rank r${r.rank}`, text: r.rank }),
        el("span", { class: "name", text: r.name })),
      el("span", { class: "line", text: `${STATUS[r.status] || r.status} · ${formatMs(r.time_ms, true)}` }),
      el("span", { class: "line", text: `${plural(r.moves, "move")} · ${r.foundation}/${match.cards} cards up` +
        (r.undos ? ` · ${plural(r.undos, "undo")}` : "") + (r.hints ? ` · ${plural(r.hints, "hint")}` : "") }))));
    $("final-panel").hidden = false;
    $("final-note").textContent = plural(data.ranking.length, "player");
    const verify = $("verify");
    feed(`Results: ${winnerLine()}`, undefined, id, "results");
    renderChips(); renderHero(); renderStandings(); renderBoards(); tick();
    if (!data.seed) { dailyResults(data, verify); return; }  // a daily attempt: nothing to check before the day
    verify.replaceChildren(el("div", {}, "seed ", el("code", { text: data.seed.length > 80 ? "(a dealt position)" : data.seed }),
      " · nonce ", el("code", { text: data.nonce })), el("div", {}, "commitment ", el("code", { text: data.commitment })));
    verifyCommitment(data).then((ok) => {
      if (ok !== null) verify.append(el("div", { class: ok ? "ok" : "" },
        ok ? "✓ SHA-256(nonce + seed) equals the commitment published before the start" : "✗ the commitment does not match"));
    });
    setupReplays();
  }

  /** A daily attempt's results: they carry no seed (the day's deal stays secret while anyone can play it), so
      the commitment waits for the day's seed, which the daily challenge reveals once the day is over; it is
      asked for only when the day's leaderboard says so (no request that must be refused). Its replay is the
      daily challenge's too (GET /matches/{code}/replays refuses a daily attempt's): linked once public. */
  async function dailyResults(data, verify) {
    const day = match.daily;
    const base = day ? `/daily/${day.date}/${encodeURIComponent(day.variant)}` : null;
    const note = el("div", { id: "seed-note" },
      "The seed is revealed when the day is over: it is checked then against the commitment.");
    const replayLine = el("div", { id: "daily-replay" }, "The replay is public once the day is over",
      day ? el("span", {}, " · ", el("a", { href: `/daily#board-${encodeURIComponent(day.variant)}`, text: "the day's board →" })) : "");
    verify.replaceChildren(note, el("div", {}, "commitment ", el("code", { text: data.commitment })), replayLine);
    if (!base) return;
    const board = await getJSON(`${base}/leaderboard?offset=0&limit=1`);
    if (board.status !== 200 || !board.body.final) return;
    const revealed = await getJSON(`${base}/reveal`);
    if (revealed.status !== 200) return;
    match.revealed = true;
    const seed = revealed.body.seed;
    note.replaceChildren("seed ", el("code", { text: seed }));
    const name = data.ranking[0].name;
    replayLine.replaceChildren(el("a", { href: `${base}/replay/${encodeURIComponent(name)}`,
      text: `${name}'s game record (JSON) →` }));
    renderHero();
    const ok = await verifyCommitment({ seed, nonce: "", commitment: data.commitment });  // the day's: SHA-256(seed)
    if (ok !== null) verify.insertBefore(el("div", { class: ok ? "ok" : "", id: "verified" },
      ok ? "✓ SHA-256(seed) equals the commitment published before the day" : "✗ the commitment does not match"),
    replayLine);
  }

  // The next round of a series (a rematch): a link to watch it, and who asked for it.
  function showNextRound(next, names) {
    if (!next) return;
    const line = $("next-round");
    line.hidden = false;
    line.replaceChildren(el("a", { href: `/watch/${encodeURIComponent(next)}`, text: `round ${(match.round || 1) + 1} →` }),
      names && names.length ? ` ${names.join(", ")} ${names.length === 1 ? "wants" : "want"} a rematch` : "");
  }

  function setupReplays() {
    $("replay-panel").hidden = false;
    $("replay-tabs").replaceChildren(...results.ranking.map((r) => el("button", {
      type: "button", role: "tab", "data-name": r.name, text: `${r.rank}. ${r.name}`,
      onclick: () => selectReplay(r.name),
    })));
    selectReplay(results.ranking[0].name);
  }

  async function selectReplay(name) {
    stop();
    replay.name = name;
    for (const tab of $("replay-tabs").children) tab.setAttribute("aria-selected", String(tab.dataset.name === name));
    if (!replays.has(name)) {
      $("step-info").textContent = "loading the replay…";
      const { status, body } = await getJSON(`/matches/${encodeURIComponent(code)}/replays/${encodeURIComponent(name)}?positions=1`);
      if (status !== 200) { $("step-info").textContent = (body && body.message) || `replay unavailable (${status})`; return; }
      replays.set(name, body);
    }
    if (replay.name !== name) return;
    const record = replays.get(name);
    $("scrub").max = String(record.moves.length);
    showStep(0);
  }

  function showStep(index) {
    const record = replays.get(replay.name);
    if (!record) return;
    index = Math.max(0, Math.min(record.moves.length, index));
    replay.index = index;
    $("scrub").value = String(index);
    const info = $("step-info");
    info.replaceChildren(index === 0
      ? el("span", {}, el("b", { text: "The deal" }), ` · ${plural(record.moves.length, "move")} to come`)
      : el("span", {}, `move ${index}/${record.moves.length} `, el("b", { text: record.moves[index - 1] }),
        ` at ${formatMs(record.times_ms[index - 1], true)}`));
    $("replay-board").replaceChildren(boardEl(record.views[index], changed(record.views[index - 1], record.views[index])));
    $("play").textContent = replay.timer ? "❚❚ Pause" : "▶ Play";
  }

  function stop() {
    clearInterval(replay.timer);
    replay.timer = null;
    $("play").textContent = "▶ Play";
  }

  function togglePlay() {
    const record = replays.get(replay.name);
    if (!record) return;
    if (replay.timer) { stop(); return; }
    if (replay.index >= record.moves.length) showStep(0);
    replay.timer = setInterval(() => {
      if (replay.index >= record.moves.length) { stop(); return; }
      showStep(replay.index + 1);
    }, 450);
    showStep(replay.index);
  }

  $("first").onclick = () => { stop(); showStep(0); };
  $("prev").onclick = () => { stop(); showStep(replay.index - 1); };
  $("next").onclick = () => { stop(); showStep(replay.index + 1); };
  $("last").onclick = () => { stop(); showStep(Infinity); };
  $("play").onclick = togglePlay;
  $("scrub").oninput = (event) => { stop(); showStep(Number(event.target.value)); };
  document.addEventListener("keydown", (event) => {
    if ($("replay-panel").hidden || event.target.tagName === "INPUT") return;
    if (event.key === "ArrowLeft") { stop(); showStep(replay.index - 1); }
    if (event.key === "ArrowRight") { stop(); showStep(replay.index + 1); }
    if (event.key === " ") { event.preventDefault(); togglePlay(); }
  });

  // ------------------------------------------------------------------ start

  async function start() {
    $("code").textContent = code;
    document.title = `Match ${code} · Forty Thieves Race`;
    const { status, body, headers } = await getJSON(`/matches/${encodeURIComponent(code)}`);
    if (status !== 200) {
      match.state = "missing"; renderHero(); return;
    }
    const serverNow = Number(headers.get("X-Server-Time-Ms"));
    offset = serverNow ? serverNow - Date.now() : 0;
    Object.assign(match, { state: body.state, settings: body.settings, startAt: body.start_at_ms,
      deadline: body.deadline_ms, cards: body.cards || 104, openBoards: body.settings.open_boards, round: body.round || 1,
      daily: body.daily || null });
    if (match.round > 1) document.title = `Match ${code} · round ${match.round} · Forty Thieves Race`;
    for (const p of body.players) Object.assign(player(p.name), p);
    renderChips(); renderHero(); renderStandings();
    setInterval(tick, 100);
    tick();
    follow(`/matches/${encodeURIComponent(code)}/events`, Object.fromEntries(Object.entries(handlers).map(
      ([name, handle]) => [name, (data, id) => events.after(() => handle(data, id))])));
    if (body.state === "finished") {
      const final = await getJSON(`/matches/${encodeURIComponent(code)}/results`);
      if (final.status === 200) showResults(final.body);
      showNextRound(body.next_round, body.rematch);
    }
  }

  start();
})();
