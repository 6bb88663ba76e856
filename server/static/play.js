/* /join/{code}: join a race by name, ready, race, see the results, rematch. The render functions draw
   only from the state (race-state.js reduces the server's frames into it) and turn clicks, taps, drags
   and typed notation into commands for the connection (connection.js). No rules here: legal targets
   are the server's `legal` list, and a refused command shows the server's reason. */
"use strict";

(() => {
  const { el, formatMs, getJSON, plural, STATUS, verifyCommitment } = FTR;
  const { reduce, targets, can, gameOver, elapsed, runLength, moveLimit } = FTRRace;
  const $ = (id) => document.getElementById(id);

  const RANK_NAMES = { A: "ace", T: "10", J: "jack", Q: "queen", K: "king" };
  const SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
  const SUIT_SYMBOLS = { C: "♣", D: "♦", H: "♥", S: "♠" };

  /** "TH" -> "10♥, 10 of hearts" (a card button's accessible name): what the card shows first, so that the
      name contains the visible text (WCAG 2.5.3, axe-core's label-content-name-mismatch), then in words. */
  function cardName(text) {
    return `${cardShort(text)}, ${RANK_NAMES[text[0]] || text[0]} of ${SUIT_NAMES[text[1]]}`;
  }
  /** "TH" -> "10♥" (what the card shows). */
  function cardShort(text) {
    return (text[0] === "T" ? "10" : text[0]) + SUIT_SYMBOLS[text[1]];
  }
  /** Card codes in a server reason shown with symbols: "2C does not fit on TC" -> "2♣ does not fit on 10♣". */
  const withSymbols = (text) => text.replace(/(?<![0-9A-Za-z])([2-9TJQKA])([CDHS])(?![0-9A-Za-z])/g,
    (_, r, s) => cardShort(r + s));

  const REPLACED_CLOSE = 4000;  // protocol/README.md: replaced by a newer connection with the same token
  const TAKEN_OVER = "This game is now open in another tab or device, so this page has stopped: "
    + "press Play here to take it back.";

  let code = FTR.pathSegment(1);
  let state = FTRRace.initial(code);
  let selection = null;   // {source: "3" | "w" | "f2", count, blocked?: {card, on}} (blocked: not a run, nothing lifts)
  let pending = null;     // the next round {code, state, conn} until its lobby arrives (the results stay till then)
  const roving = { top: "stock", tableau: "1:1" };  // the board's two Tab stops: the data-key each group last had
  let conn = null;
  let confirmingResign = false;
  let confirmingRestart = false;  // a game still going ends with a restart: asked first, as a resign is
  let rematchAsked = false;

  let refusedName = "";  // a name typed to join that is claimed and whose key this browser lacks (bad_token)
  let ghost = null;      // the `ghost` frame this match races against (ghost.js), else null
  let mine = { cards: 0, ms: null };  // my cards up and the match clock ms I first had them (null: not known)
  let ghostShown = "";   // what the ghost's row last showed, so the clock's tick redraws it only when it moves

  /* Play alone: index.js leaves {code, name, number} in this tab's session storage. The page joins match `code`
     as `name` and says ready at once; the game number shows in the header of that match and of its restarts
     (`rounds`: their codes, added here), never of a rematch, which deals a new deal. */
  let alone = null;
  try { alone = JSON.parse(sessionStorage.getItem("ftr:alone") || "null"); } catch (error) { alone = null; }
  const aloneNumber = () => (alone && [alone.code, ...(alone.rounds || [])].includes(code) ? alone.number : "");
  let readyOnJoin = false;
  let restartAsked = false;

  function dispatch(frame) {
    const before = state;
    if (frame.type === "error" && frame.code === "bad_token" && !state.name && conn && conn.intent) {
      refusedName = conn.intent.name;
    }
    if (frame.type === "joined") refusedName = "";
    if (frame.type === "joined" && readyOnJoin) { readyOnJoin = false; conn.ready(); }
    followGhost(frame);
    state = reduce(state, frame);
    // A card picked stays picked through a frame that leaves the board as it was (a resent play acknowledged,
    // a resume): only a board that changed invalidates it.
    if ((frame.type === "position" || frame.type === "started")
        && JSON.stringify(before.view) !== JSON.stringify(state.view)) selection = null;
    if (frame.type === "next_round") {
      if (restartAsked && aloneNumber()) {  // the same deal again: its number too
        alone.rounds = [...(alone.rounds || []), frame.match];
        sessionStorage.setItem("ftr:alone", JSON.stringify(alone));
      }
      restartAsked = false;
      nextRound(frame);
      return;
    }
    if (frame.type === "joined" && frame.match && frame.match !== code) {  // the server's spelling of the code
      code = frame.match;
      history.replaceState(null, "", `/join/${encodeURIComponent(code)}`);
    }
    if (frame.type === "results" && before.phase !== "finished") afterResults();
    if (frame.type === "joined" || frame.type === "lobby" || frame.type === "results") refreshMatch();
    render();
  }

  function say(text, kind) { dispatch({ type: "page/message", text, kind }); }

  function connect() {
    conn = new FTRConnection.Connection(code, {
      onFrame: dispatch,
      onStatus: (status, closeCode) => dispatch({ type: "page/status", status, closeCode }),
    });
    conn.open();
  }

  async function refreshMatch() {
    const { status, body } = await getJSON(`/matches/${encodeURIComponent(code)}`);
    if (status === 200 && body.code === code) dispatch({ type: "page/match", state: body });
  }

  // ------------------------------------------------------------------ commands

  /** Another tab or device resumed this player with the same token: this page's connection was closed
      for good (4000), so anything it sent would go nowhere until the player takes the game back here. */
  const takenOver = () => state.connection === "gone" && state.closeCode === REPLACED_CLOSE;

  function send(command) {
    selection = null;
    if (takenOver()) { say(TAKEN_OVER, "error"); render(); return; }
    if (!state.view || gameOver(state)) { say("your game has ended", "error"); return; }
    conn.play(command);
    render();
  }

  function typed(text) {
    const result = FTRNotation.resolve(text, state.legal, state.view);
    switch (result.action) {
      case "play": send(result.command); return true;
      case "help": say(FTRNotation.HELP, "hint"); return true;
      case "hint": askHint(); return true;
      case "resign": conn.resign(); return true;
      case "ready": conn.ready(); return true;
      case "start": conn.start(); return true;
      case "quit": say("close the tab to leave: the game goes on, and this link brings you back", "hint"); return true;
      case "none": return false;
      default: say(result.message, "error"); return false;
    }
  }

  function askHint() {
    if (!(state.settings && state.settings.hints)) { say("this match does not allow hints", "error"); return; }
    conn.hint();
  }

  /** A move is on its way to the server: the board on screen is the position before it, so a click on it
      (the second click of a fast double-click) would act on cards about to move and be refused. */
  const moveInFlight = () => Boolean(conn && conn.moving());

  /** A click or tap on a pile: `source`/`count` when it was a card that can be picked up, `pile` the
      target it stands for ("3", "f", "w"). Ignored while a move is in flight. */
  function clickPile(source, count, pile) {
    if (gameOver(state) || state.phase !== "playing" || takenOver() || moveInFlight()) return;
    const picked = source ? pick(source, count) : null;
    if (selection) {
      const options = targets(state, selection);
      if (picked && picked.source === selection.source && picked.count === selection.count) {  // again: the best target
        if (options.length && !selection.blocked) send(options[0].command);
        else { selection = null; render(); }
        return;
      }
      const chosen = !selection.blocked && options.find((t) => t.target === pile);
      if (chosen) { send(chosen.command); return; }
    }
    if (!picked) { selection = null; render(); return; }
    select(picked.source, picked.count, true, picked.blocked);
  }

  /** What a tap on the card `count` from the top of `source` lifts (as patience pages select): the card
      and the run on it; a card the hint marks lifts the hint's cards; a card under cards that are not its
      run lifts nothing ({blocked: {card, on}}: the card and the one on it that breaks the run). */
  function pick(source, count) {
    if (!/^[0-9]+$/.test(source)) return { source, count: 1 };
    const hint = state.hint;
    if (hint && hint.source === source && count <= hint.cards) return { source, count: hint.cards };
    const column = state.view.tableau[Number(source) - 1];
    const run = runLength(state, Number(source) - 1);
    if (count <= run) return { source, count };
    const at = column.length - count;
    return { source, count, blocked: { card: column[at], on: column[at + 1] } };
  }

  function select(source, count, allowAtOnce, blocked) {
    selection = blocked ? { source, count, blocked } : { source, count };
    const options = blocked ? [] : targets(state, selection);
    if (allowAtOnce && count === 1 && options.length === 1) { send(options[0].command); return; }
    render();
  }

  /** The most cards a selection from `source` may hold: the run on top of a column, one elsewhere. */
  const runOf = (source) => (/^[0-9]+$/.test(source) ? runLength(state, Number(source) - 1) : 1);

  function clickStock() {
    if (state.phase !== "playing" || gameOver(state) || takenOver()) return;
    if (can(state, "s")) send("s");
    else if (can(state, "r")) send("r");
    else say("the stock is empty and there is no redeal left", "error");
  }

  // ------------------------------------------------------------------ the board

  function cardButton(text, source, count, pile, extra) {
    const lifted = selection && !selection.blocked && selection.source === source && count <= selection.count;
    const refused = selection && selection.blocked && selection.source === source && count === selection.count;
    const hinted = Boolean(source && state.hint && state.hint.source === source && count <= state.hint.cards);
    const red = text[1] === "H" || text[1] === "D";
    const button = el("button", {
      type: "button", class: `card${red ? " red" : ""}${lifted ? " lifted" : ""}${refused ? " refused" : ""}`
        + `${hinted ? " hinted" : ""}${extra ? " " + extra : ""}`,
      "aria-label": cardName(text) + (hinted ? `, hint ${state.hint.command}` : ""), "data-key": `${pile}:${count}`,
      draggable: source ? "true" : "false", "aria-pressed": source ? String(Boolean(lifted)) : undefined,
    }, el("span", { class: "corner", text: cardShort(text) }), el("span", { class: "big", text: SUIT_SYMBOLS[text[1]] }));
    button.addEventListener("click", (event) => { event.stopPropagation(); clickPile(source, count, pile); });
    if (source) {
      button.addEventListener("dragstart", (event) => {
        event.dataTransfer.setData("text/plain", `${source}:${count}`);
        event.dataTransfer.effectAllowed = "move";
        const picked = pick(source, count);
        select(picked.source, picked.count, false, picked.blocked);
      });
    }
    return button;
  }

  /** A drop zone: a pile that takes the dragged selection when it is one of its targets. */
  function dropZone(node, pile) {
    node.addEventListener("dragover", (event) => {
      if (selection && !selection.blocked && targets(state, selection).some((t) => t.target === pile)) event.preventDefault();
    });
    node.addEventListener("drop", (event) => {
      event.preventDefault();
      const chosen = selection && !selection.blocked && !moveInFlight()
        && targets(state, selection).find((t) => t.target === pile);
      if (chosen) send(chosen.command);
    });
    node.addEventListener("click", () => clickPile(null, 0, pile));
    return node;
  }

  function renderBoard() {
    const view = state.view;
    const board = $("board");
    if (!view) { board.replaceChildren(); return; }
    const options = selection && !selection.blocked ? targets(state, selection) : [];
    const best = options.length ? options[0].target : null;
    const isTarget = (pile) => options.some((t) => t.target === pile);
    const hint = state.hint;
    const hintTarget = (pile) => Boolean(hint && hint.target === pile);
    const mark = (pile) => (isTarget(pile) ? (pile === best ? " target best" : " target") : "")
      + (hintTarget(pile) ? " hint-target" : "");

    const tableMoves = FTRNotation.tableMoves(state.legal);
    const stockLabel = view.stock ? `Stock: ${plural(view.stock, "card")}` : (can(state, "r") ? "Stock: empty, redeal" : "Stock: empty");
    const stock = el("button", { type: "button", id: "stock",
                                 class: "card stock" + (view.stock ? "" : " slot") + (hint && ["s", "r"].includes(hint.command) ? " hinted" : ""),
                                 "aria-label": stockLabel, "data-key": "stock" },
      el("span", { text: view.stock ? String(view.stock) : (can(state, "r") ? "↺" : "") }));
    stock.addEventListener("click", clickStock);
    const stockPile = el("div", { class: "pile" }, el("span", { class: "label",
      text: view.redeals_left ? `Stock · ${plural(view.redeals_left, "redeal")}` : "Stock" }), stock,
      tableMoves && view.stock ? el("span", { class: "table-note", text: "moves on the table" }) : null);

    const shown = view.waste.slice(-4);
    const waste = el("div", { class: "cards-row waste" }, shown.length ? shown.map((t, i) => (i === shown.length - 1
      ? cardButton(t, "w", 1, "w", "") : el("div", { class: "card under" + (t[1] === "H" || t[1] === "D" ? " red" : ""),
                                                    "aria-hidden": "true" }, el("span", { class: "corner", text: cardShort(t) }))))
      : el("div", { class: "card slot", "aria-label": "Waste: empty", role: "img" }));
    const wastePile = el("div", { class: "pile", role: "group", "aria-label": "Waste" },
      el("span", { class: "label", text: `Waste ${view.waste.length}` }), waste);

    const slots = view.foundations.map((top, i) => {
      const source = `f${i + 1}`;
      const movable = top !== "-" && FTRRace.mostFrom(state, source) > 0;
      if (top === "-") {
        return el("button", { type: "button", class: "card slot", "aria-label": `Foundation ${i + 1}: empty`,
                              "data-key": source, onclick: () => clickPile(null, 0, "f") });
      }
      const button = cardButton(top, movable ? source : null, 1, "f", "");
      button.setAttribute("aria-label", `Foundation ${i + 1}: ${cardName(top)}`);
      button.dataset.key = source;  // one key per slot: focus stays on its slot across moves
      return button;
    });
    const foundations = dropZone(el("div", { class: "pile foundations" + mark("f"), role: "group", "aria-label": "Foundations" },
      el("span", { class: "label", text: "Foundations" + (isTarget("f") ? (best === "f" ? " ◀ best" : " ◀") : "") },
        hintTarget("f") ? el("span", { class: "hint-tag", text: ` hint ${hint.command}` }) : null),
      hintTarget("f") ? el("span", { class: "sr-only", text: `hint target: ${hint.command}` }) : null,
      el("div", { class: "cards-row" }, slots)), "f");

    const columns = view.tableau.map((cards, i) => {
      const pile = String(i + 1);
      const hidden = view.hidden[i] || 0;
      const column = dropZone(el("div", { class: "column" + mark(pile), role: "group", "aria-label": `Column ${pile}`,
                                          "data-pile": pile },
        el("span", { class: "num", "aria-hidden": "true", text: pile + (pile === best ? " ▼" : "") },
          hintTarget(pile) ? el("span", { class: "hint-tag", text: ` ${hint.command}` }) : null)), pile);
      if (isTarget(pile)) column.append(el("span", { class: "sr-only", text: pile === best ? "best target" : "target" }));
      if (hintTarget(pile)) column.append(el("span", { class: "sr-only", text: `hint target: ${hint.command}` }));
      for (let h = 0; h < hidden; h++) column.append(el("div", { class: "card down", role: "img", "aria-label": "face down" }));
      cards.forEach((t, j) => column.append(cardButton(t, pile, cards.length - j, pile, "")));
      if (!hidden && !cards.length) {
        column.append(el("button", { type: "button", class: "card slot", "aria-label": `Column ${pile}: empty`,
                                     "data-key": `${pile}:empty`, onclick: (e) => { e.stopPropagation(); clickPile(null, 0, pile); } }));
      }
      return column;
    });
    board.replaceChildren(
      el("div", { class: "row", "data-group": "top" }, stockPile, wastePile, foundations),
      el("div", { class: "tableau", "data-group": "tableau", style: `--columns: ${view.tableau.length}` }, columns));
    rove();
  }

  // ------------------------------------------------------------------ keyboard: one Tab stop per pile group

  const groupButtons = (group) => [...document.querySelectorAll(`#board [data-group="${group}"] button[data-key]`)];

  /** Roving tabindex: in each group (the stock/waste/foundations row, the tableau) only the button it had
      last (or its first) is in the Tab order; the arrow keys move within the group. */
  function rove() {
    for (const group of ["top", "tableau"]) {
      const buttons = groupButtons(group);
      const current = buttons.find((b) => b.dataset.key === roving[group]) || buttons[0];
      for (const button of buttons) button.tabIndex = button === current ? 0 : -1;
    }
  }

  /** The button an arrow key goes to from `button`, or null. Tableau: Left/Right the next column (as deep
      from its top as here), Up/Down the card under or over it in its column, Up from a column's first
      card the top row; top row: Left/Right along it, Down into the tableau. */
  function arrowTarget(button, key) {
    const group = button.closest("[data-group]").dataset.group;
    if (group === "top") {
      const buttons = groupButtons("top");
      const i = buttons.indexOf(button);
      if (key === "ArrowLeft") return buttons[i - 1] || null;
      if (key === "ArrowRight") return buttons[i + 1] || null;
      if (key === "ArrowDown") {
        const tableau = groupButtons("tableau");
        return tableau.find((b) => b.dataset.key === roving.tableau) || tableau[0] || null;
      }
      return null;
    }
    const columns = [...document.querySelectorAll("#board [data-group=tableau] .column")];
    const column = button.closest(".column");
    const inColumn = (c) => [...c.querySelectorAll("button[data-key]")];
    const here = inColumn(column);
    const j = here.indexOf(button);
    if (key === "ArrowUp") {
      if (j > 0) return here[j - 1];
      const top = groupButtons("top");
      return top.find((b) => b.dataset.key === roving.top) || top[0] || null;
    }
    if (key === "ArrowDown") return here[j + 1] || null;
    const next = columns[columns.indexOf(column) + (key === "ArrowLeft" ? -1 : 1)];
    if (!next) return null;
    const there = inColumn(next);
    return there[Math.max(0, there.length - (here.length - j))] || null;
  }

  /** After a redraw, focus the button that had it (by data-key), or the nearest one still there: the top
      card of its column, the stock for a waste that emptied. */
  function restoreFocus(key) {
    let again = document.querySelector(`[data-key="${CSS.escape(key)}"]`);
    if (!again) {
      const pile = key.split(":")[0];
      const buttons = /^[0-9]+$/.test(pile)
        ? [...document.querySelectorAll(`#board .column[data-pile="${pile}"] button[data-key]`)] : [];
      again = buttons[buttons.length - 1] || (pile === "w" ? $("stock") : null);
    }
    if (again) again.focus();
  }

  function renderSelection() {
    const bar = $("selection");
    bar.hidden = !selection;
    if (!selection) return;
    const { source, count, blocked } = selection;
    const options = blocked ? [] : targets(state, selection);
    const limit = moveLimit(state, source);
    const where = source === "w" ? "the waste" : source.startsWith("f") ? `foundation ${source.slice(1)}` : `column ${source}`;
    let text;
    if (blocked) {
      const run = runOf(source);
      text = `${cardShort(blocked.card)} cannot move: ${cardShort(blocked.on)} on it is not the next card of a run `
        + `(only the top ${plural(run, "card")} move${run === 1 ? "s" : ""} together)`;
    } else {
      text = `${plural(count, "card")} from ${where}: `;
      if (options.length) text += `${plural(options.length, "target")}, best ${options[0].command}`;
      else if (count > limit.onto) text += "too many to move at once";
      else text += "no target for them now";
    }
    $("selection-text").textContent = `${text} · ${limit.reason}`;
    $("more").disabled = Boolean(blocked) || count >= runOf(source);
    $("less").disabled = !blocked && count <= 1;
  }

  // ------------------------------------------------------------------ around the board

  function renderHero() {
    const s = state;
    const me = s.players[s.name];
    const phase = s.phase;
    $("state").className = "state " + ({ playing: "live", countdown: "countdown", finished: "finished", gone: "gone" }[phase] || "");
    const visitor = phase === "connecting" && s.connection === "open" && !s.name;  // connected, not joined (yet)
    $("state").textContent = takenOver() ? "open elsewhere" : s.connection === "closed" ? "reconnecting…" : visitor ? "not joined" : ({ connecting: "connecting",
      preparing: "preparing the deal", lobby: "lobby", countdown: "countdown", playing: "live", finished: "finished",
      closed: "closed", gone: "lost" }[phase] || phase);
    const count = Object.keys(s.players).length, wanted = s.settings ? s.settings.players : 0;
    $("headline").textContent = {
      connecting: `Match ${code}`, preparing: "Shuffling a solvable deal…",
      lobby: `Waiting for players · ${count}/${wanted}`, countdown: "Get ready…",
      playing: s.status === "playing" ? "Race on" : `Your game: ${STATUS[s.status] || s.status}`,
      finished: winnerLine(), closed: "This match was closed", gone: "The server lost this match",
    }[phase] || "";
    const ready = Object.values(s.players).filter((p) => p.ready).length;
    $("subline").textContent = visitor ? "Type your name to join" : {
      lobby: me ? `${ready} of ${count} ready · the race starts when everyone is ready` : "Type your name to join",
      countdown: "Everyone gets the same deal at the same instant.",
      playing: `${Object.values(s.players).filter((p) => FTRRace.stillPlaying(s, p)).length} of ${count} still playing`,
      finished: s.results && !s.results.seed ? "The seed is revealed when the day is over."  // a daily attempt
        : "The seed is revealed: checked against the commitment below.",
    }[phase] || "";
    const chips = [el("span", { class: "chip", id: "code-chip" }, el("span", { class: "chip-label", text: "code " }),
      el("b", { text: code }))];
    if (s.settings) {
      chips.push(el("span", { class: "chip" }, el("b", { text: s.settings.variant })));
      if (s.settings.time_limit_s) chips.push(el("span", { class: "chip" }, "limit ", el("b", { text: formatMs(s.settings.time_limit_s * 1000) })));
      chips.push(el("span", { class: "chip" }, "undo ", el("b", { text: s.settings.undo })));
      const chosen = FTR.chosenDealChip(s.settings);
      if (chosen) chips.push(chosen);
    }
    if (aloneNumber()) {
      chips.push(el("span", { class: "chip", id: "number-chip", title: `game ${aloneNumber()}` }, "game ",
                    el("b", { text: aloneNumber() })));
    }
    if (s.round > 1) chips.push(el("span", { class: "chip", id: "round-chip" }, "round ", el("b", { text: String(s.round) })));
    $("chips").replaceChildren(...chips);
    $("round-line").textContent = s.name ? `you race as ${s.name}` : "race from a link";
    // While racing the header is one compact line (the board needs the screen); the lobby stays roomy.
    $("page").classList.toggle("racing", phase === "playing" && Boolean(s.view));
    // Only state changes are announced (the hero holds the ticking clock, so it is no live region).
    const told = [$("state").textContent, $("headline").textContent].filter(Boolean).join(": ");
    if ($("announce").textContent !== told) $("announce").textContent = told;
  }

  // "wins" only for a win (the same headline as the watch page's).
  function winnerLine() { return FTR.winnerLine(state.results, state.name); }

  const UNTIMED_SHOWN_MS = 3600 * 1000;  // an untimed match's time left shows in its last hour

  function tick() {
    const now = Date.now();
    let label = "waiting", value = "–:––";
    const clock = $("clock");
    clock.classList.toggle("countdown", state.phase === "countdown");
    if (state.phase === "gone") {
      label = "stopped";
    } else if (state.phase === "countdown") {
      label = "starts in"; value = FTRRace.countdown(state, now).toFixed(1);
    } else if (state.phase === "playing" || state.phase === "finished") {
      label = state.phase === "finished" || FTRRace.ENDED.has(state.status) ? "your time" : "your clock";
      value = formatMs(elapsed(state, now), true);
      // No limit chosen (a game alone, a race of 0 minutes): the server's cap of an untimed match (24 h) shows
      // only in its last hour, not as a countdown the player never asked for.
      const untimed = state.settings && !state.settings.time_limit_s;
      const shown = state.deadline && (!untimed || state.deadline - now - state.clockOffset < UNTIMED_SHOWN_MS);
      if (shown && state.phase === "playing" && state.status === "playing") {
        const left = `${formatMs(Math.max(0, state.deadline - now - state.clockOffset))} left`;
        label = $("page").classList.contains("racing") ? left : `${label} · ${left}`;  // the compact header: short
      }
    }
    $("clock-label").textContent = label;
    $("clock-value").textContent = value;
    const shadow = ghostRow();  // the ghost moves on its recorded times: redrawn when it has moved
    if (shadow && `${shadow.moves} ${shadow.foundation} ${shadow.status}` !== ghostShown) renderRace();
  }

  // ------------------------------------------------------------------ the ghost (a recorded game, never a card)

  function followGhost(frame) {
    if (frame.type === "ghost") ghost = frame;
    if (frame.type === "started") {  // a resumed game's time of its cards up is not known until the next card
      mine = { cards: FTRRace.foundationCount(frame.view), ms: frame.moves ? null : 0 };
    }
    if (frame.type === "position" && frame.foundation > mine.cards) mine = { cards: frame.foundation, ms: frame.time_ms };
  }

  /** The ghost as a row of the race at the match clock now: its recorded progress, ended once the match has. */
  function ghostRow() {
    if (!ghost || !["playing", "finished"].includes(state.phase)) return null;
    const ms = state.phase === "finished" ? Infinity : Math.max(0, Date.now() + state.clockOffset - state.startAt);
    const now = FTRGhost.at(ghost, ms);
    return { name: ghost.label, ghost: true, moves: now.moves, foundation: now.foundation, status: now.status,
             time_ms: now.timeMs, connected: true };
  }

  function ghostGap() {
    if (!ghost) return null;
    const done = state.phase === "finished" || FTRRace.ENDED.has(state.status);
    return FTRGhost.gap(ghost, mine.cards, done && state.status === "won" ? state.timeMs : mine.ms, state.status);
  }

  function renderGhost() {
    $("ghost-line").hidden = !ghost;
    if (!ghost) return;
    const g = ghostGap();
    $("ghost-record").textContent = `${ghost.label}: ${STATUS[ghost.status] || ghost.status} · `
      + `${plural(ghost.foundation, "card")} up · ${plural(ghost.moves, "move")} · ${formatMs(ghost.time_ms, true)}`;
    $("ghost-gap").textContent = FTRGhost.gapLine(ghost, g);
    $("ghost-gap").className = "ghost-gap" + (g ? (g.ahead ? " ahead" : " behind") : "");
  }

  function renderRace() {
    const won = (p) => (p.status === "won" ? 0 : 1);
    // Once the results are in, their ranking orders the table: it breaks a tie in cards by the time of
    // the last card put up (server/core/ranking.py), which the live rows do not carry.
    const ranked = new Map(state.results ? state.results.ranking.map((row, i) => [row.name, i]) : []);
    const place = (p) => ranked.get(p.name) ?? ranked.size;
    const shadow = ghostRow();
    ghostShown = shadow ? `${shadow.moves} ${shadow.foundation} ${shadow.status}` : "";
    const rows = [...Object.values(state.players), ...(shadow ? [shadow] : [])].sort((a, b) => place(a) - place(b) || won(a) - won(b)
      || (won(a) ? b.foundation - a.foundation : a.time_ms - b.time_ms) || a.moves - b.moves || a.name.localeCompare(b.name));
    const total = state.view ? cardTotal(state.view) : 104;
    $("race").querySelector("tbody").replaceChildren(...rows.map((p) => {
      const lobby = ["lobby", "preparing", "connecting", "countdown"].includes(state.phase);
      const status = lobby ? (p.ready ? "ready" : "lobby") : p.status;
      // The status goes under the name with "you" and "away": a column of its own left a name of 8 letters
      // too little of the panel's 300 px.
      return el("tr", p.ghost ? { class: "ghost", "data-ghost": ghost.name } : { "data-name": p.name },
        el("td", { class: "who", title: p.name }, el("span", { class: "name", text: p.name }),
          el("span", { class: "tags" },
            p.name === state.name && !p.ghost ? el("span", { class: "away", text: "you" }) : null,
            p.bot ? el("span", { class: "away bot", text: "bot", title: "a bot the server plays" }) : null,
            p.ghost ? el("span", { class: "away", text: "ghost" }) : null,
            p.connected || !lobby ? null : el("span", { class: "away", text: "away" }),
            el("span", { class: `pill ${status}`, text: STATUS[status] || status }))),
        el("td", {}, el("div", { class: "bar" }, el("div", { class: "track" },
          el("div", { class: "fill" + (p.status === "won" ? " won" : ""), style: `width: ${Math.round(100 * p.foundation / total)}%` })),
          el("span", { class: "count" }, el("b", { class: "foundation", text: String(p.foundation) })))),
        el("td", { class: "num moves", text: String(p.moves) }));
    }));
    // The compact strip above the board: everyone's cards up while racing, in the table's order. A ghost's chip
    // says "ghost" (its title the full label): a ghost of the player's own name is told apart at a glance.
    const racing = state.phase === "playing" && Boolean(state.view);
    $("race-line").hidden = !racing;
    const split = racing ? splitMark() : null;
    $("racers").replaceChildren(...(racing ? rows : []).map((p) => el("li", {
      class: "racer" + (p.ghost ? " ghost" : p.name === state.name ? " me" : ""), "data-name": p.ghost ? null : p.name,
      title: p.name },
    el("span", { class: "name", text: p.ghost ? "ghost" : p.name === state.name ? `${p.name} (you)` : p.name }), " ",
    el("b", { class: "foundation", text: String(p.foundation) }),
    p.name === state.name && !p.ghost ? split : null,
    p.status === "playing" ? null : el("span", { class: `pill ${p.status}`, text: STATUS[p.status] || p.status }))));
    renderGhost();
  }

  /** The gap to the ghost as a racing game's split beside my cards up in the compact strip (the phone's only
      view of the race while playing): "+12.3" behind, "−4.0" ahead, the whole sentence as its label; null
      without a ghost or before a time can be compared. */
  function splitMark() {
    const g = ghost ? ghostGap() : null;
    if (!g || g.ms === null) return null;
    const seconds = FTRGhost.gapSeconds(g.ms);  // as the sentence says it
    const line = FTRGhost.gapLine(ghost, g);
    return el("span", { class: "split " + (seconds === "0.0" ? "level" : g.ahead ? "ahead" : "behind"),
                        text: seconds === "0.0" ? "±0.0" : `${g.ahead ? "−" : "+"}${seconds}`, title: line,
                        "aria-label": line });
  }

  /** Every card of the deal, counted from the view (what lies anywhere plus what is up). */
  function cardTotal(view) {
    return view.tableau.reduce((n, c) => n + c.length, 0) + view.hidden.reduce((n, h) => n + h, 0) + view.stock
      + view.waste.length + FTRRace.foundationCount(view);
  }

  function renderCounters() {
    const s = state;
    const parts = [el("span", {}, "Moves ", el("b", { id: "moves", text: String(s.moves) })),
      el("span", {}, "Foundations ", el("b", { text: `${s.foundation}` })), el("span", {}, "Undos ", el("b", { text: String(s.undos) }))];
    $("counters").replaceChildren(...parts);
    const playing = s.phase === "playing" && !gameOver(s) && !takenOver();
    $("draw").disabled = !playing || !(can(s, "s") || can(s, "r"));
    $("draw").textContent = can(s, "s") || !can(s, "r") ? "Draw" : "Redeal";
    $("finish").hidden = !can(s, "finish");
    $("undo").disabled = !playing || !can(s, "u");
    $("hint").hidden = !(s.settings && s.settings.hints);
    $("hint").disabled = !playing;
    $("resign").disabled = !playing;
    $("resign").hidden = confirmingResign;
    $("confirm-resign").hidden = !confirmingResign || !playing;
    $("command").disabled = (!playing && s.phase !== "lobby") || takenOver();
    $("send").disabled = $("command").disabled;
    $("game-actions").classList.toggle("dead", s.status === "dead");
    // Restarting is fair only alone: the server takes it in a match of one player that is no daily attempt.
    $("restart").hidden = !FTRRace.canRestart(s) || takenOver() || confirmingRestart;
    $("confirm-restart").hidden = !confirmingRestart || !FTRRace.canRestart(s);
  }

  function renderMessage() {
    const box = $("message");
    let text = state.message ? withSymbols(state.message) : "";
    let kind = state.messageKind;
    if (!text && state.status === "dead" && state.phase === "playing") {
      text = deadOffer();
      kind = "error";
    } else if (!text && state.phase === "playing" && gameOver(state)) {
      text = `Your game is over (${STATUS[state.status] || state.status}): waiting for the others…`;
    }
    if (takenOver()) { text = TAKEN_OVER; kind = "error"; }
    box.textContent = text;
    box.className = "message" + (kind ? " " + kind : "");
    // While racing the message sits by the buttons (where the thumb and the eyes are), else above the panels.
    const home = state.phase === "playing" && state.view ? $("message-board-home") : $("message-page-home");
    if (box.parentNode !== home) home.append(box);
    $("take-back-bar").hidden = !takenOver();
  }

  /** What a dead game offers: Undo where the undo policy allows (the legal list says), Restart in a game
      played alone (FTRRace.canRestart: the server's rule for the `restart` frame), and Resign. */
  function deadOffer() {
    const offers = [can(state, "u") ? "Undo" : null, FTRRace.canRestart(state) ? "Restart" : null]
      .filter(Boolean);
    return offers.length ? `No card can reach the foundations any more: ${offers.join(", ")}, or Resign.`
      : "No card can reach the foundations any more: Resign to end your game.";
  }

  function renderLobby() {
    const me = state.players[state.name];
    const inLobby = ["lobby", "preparing"].includes(state.phase);
    $("join-panel").hidden = !(inLobby || state.phase === "connecting") || Boolean(state.name)
      || Boolean(FTRConnection.savedPlayer(code));
    $("lobby-panel").hidden = !inLobby || !state.name;
    $("claimed-note").hidden = !refusedName || Boolean(state.name);
    if (refusedName) $("claimed-link").href = FTR.playerPath(refusedName);
    $("ready").disabled = !me || me.ready || takenOver();
    $("start").disabled = takenOver();
    $("ready").textContent = me && me.ready ? "Ready ✓" : "Ready";
    $("start").hidden = !FTRConnection.hostToken(code);
    // The link to send, with Copy (and the system's share sheet where there is one), as soon as the match
    // exists: the host sees it before joining, everyone in the lobby.
    const link = shareLink();
    $("share-box").hidden = !(["connecting", "preparing", "lobby"].includes(state.phase) && state.settings
      && !takenOver());
    $("share-link").href = link;
    $("share-link").textContent = link;
    $("share-sheet").hidden = typeof navigator.share !== "function";
    $("lobby-note").textContent = state.settings
      ? `${state.settings.variant} · ${plural(state.settings.players, "player")} · undo ${state.settings.undo}` : "";
  }

  const shareLink = () => `${location.origin}/join/${encodeURIComponent(code)}`;

  async function copyLink() {
    const note = $("copy-note");
    try {
      await navigator.clipboard.writeText(shareLink());
      note.textContent = "Copied ✓";
    } catch (error) {  // no clipboard (a page not served over https) or no permission: select it instead
      const range = document.createRange();
      range.selectNodeContents($("share-link"));
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      note.textContent = "Selected: copy it with your browser";
    }
  }

  async function shareSheet() {
    try {
      await navigator.share({ title: "Forty Thieves Race", text: "Race me on the same Forty Thieves deal", url: shareLink() });
    } catch (error) {
      if (error && error.name !== "AbortError") copyLink();  // the sheet failed (not closed by the player): copy
    }
  }

  /** Long columns: the covered cards' visible strip (--strip on a column) shrinks just enough for the part
      of the page that must stay on screen while racing (the board to the message on a phone, to the
      Command field on a desktop; the CSS names it in --fit-end) to fit the window, down to --strip-min.
      Only the longest columns shrink: every column's covered length is capped at one length, the one that
      takes the overflow off the rows of columns (each row is as tall as its longest column). A face-down
      card shows half a strip. */
  function fitColumns() {
    const board = $("board");
    const columns = [...board.querySelectorAll(".column")];
    columns.forEach((column) => column.style.removeProperty("--strip"));
    if (!(state.phase === "playing" && state.view)) return;
    const style = getComputedStyle(board);
    const most = parseFloat(style.getPropertyValue("--strip-max")), least = parseFloat(style.getPropertyValue("--strip-min"));
    const end = $(style.getPropertyValue("--fit-end").trim() || "message");
    if (!(most > 0 && least > 0 && end)) return;
    // The selection bar's room is kept whether it shows or not: a tap must not squeeze or stretch the board.
    const bar = $("selection");
    const barBefore = !bar.hidden && (bar.compareDocumentPosition(end) & Node.DOCUMENT_POSITION_FOLLOWING);
    const reserve = Math.max(0, 56 - (barBefore ? bar.offsetHeight : 0));
    const over = end.getBoundingClientRect().bottom + window.scrollY + reserve - window.innerHeight;
    if (over <= 0) return;
    const units = columns.map((column) => {
      const cards = [...column.querySelectorAll(".card")];
      return cards.slice(1).reduce((n, _, i) => n + (cards[i].classList.contains("down") ? 0.5 : 1), 0);
    });
    const rows = new Map();
    columns.forEach((column, i) => rows.set(column.offsetTop, Math.max(rows.get(column.offsetTop) || 0, units[i] * most)));
    const demands = [...rows.values()];
    const target = demands.reduce((a, b) => a + b, 0) - over;
    const covered = (cap) => demands.reduce((sum, d) => sum + Math.min(d, cap), 0);
    let low = 0, high = Math.max(...demands);
    for (let step = 0; step < 24; step++) {
      const cap = (low + high) / 2;
      if (covered(cap) > target) high = cap; else low = cap;
    }
    columns.forEach((column, i) => {
      if (units[i] * most > low) column.style.setProperty("--strip", `${Math.max(least, low / units[i]).toFixed(1)}px`);
    });
  }

  /** A game alone on this match's deal racing `name`'s game of it as a ghost (POST /matches `ghost` with the
      match): the play page of the new match joins it under my name and starts it at once, as "Play alone" does.
      A chosen position is dealt as its text (the results' seed then is that text), a seed as itself. */
  async function raceGhost(r, name) {
    const me = state.name || localStorage.getItem("ftr:name") || "";
    const dealt = r.seed.includes("\n") ? { deal: r.seed } : { seed: r.seed };
    const settings = { variant: state.settings.variant, players: 1, ...dealt, solvable_only: false, undo: "full",
                       hints: true, time_limit_s: 0, autoplay: state.settings.autoplay, ghost: { name, match: code } };
    let body;
    try { body = await FTR.createMatch(settings); } catch (error) { say(error.message, "error"); return; }
    const number = /^[0-9]+$/.test(r.seed) ? r.seed : "";
    sessionStorage.setItem("ftr:alone", JSON.stringify({ code: body.code, name: me, number }));
    location.href = `/join/${encodeURIComponent(body.code)}`;
  }

  function renderResults() {
    const r = state.results;
    $("results-panel").hidden = !r;
    if (!r) return;
    $("results").replaceChildren(...r.ranking.map((row) => el("li", { class: `place p${row.rank}`, "data-name": row.name },
      el("span", { class: `rank r${row.rank}`, text: String(row.rank) }), " ",
      el("b", { class: "name", text: row.name }), " ",
      row.bot ? el("span", { class: "pill bot", text: "bot", title: "a bot the server played" }) : null,
      row.bot ? " " : null,
      el("span", { class: `pill ${row.status}`, text: STATUS[row.status] || row.status }),
      el("span", { class: "line", text: ` ${plural(row.foundation, "card")} · ${plural(row.moves, "move")} · `
        + formatMs(row.time_ms, true) + (row.undos ? ` · ${plural(row.undos, "undo")}` : "")
        + (row.hints ? ` · ${plural(row.hints, "hint")}` : "") }),
      // Once the deal is revealed, anyone's game of it can be raced again, alone, as a ghost (never a daily's).
      r.seed && row.moves > 0 ? el("button", { type: "button", class: "race-ghost",
        text: "Race this game", "aria-label": `Race ${row.name}'s game as a ghost`,
        onclick: () => raceGhost(r, row.name) }) : null)));
    // A daily attempt's results carry no seed (the day's deal stays secret while anyone can play it), and it
    // has no rematch (one attempt per name and day) nor a replay before the day is over.
    const daily = !r.seed;
    $("rematch").hidden = daily;
    $("rematch").disabled = rematchAsked;
    $("replays-link").hidden = daily;
    $("replays-link").href = `/watch/${encodeURIComponent(code)}`;
    const names = state.rematch.names;
    $("rematch-note").textContent = names.length ? `${names.join(", ")} want${names.length === 1 ? "s" : ""} a rematch` : "";
    // What the match did to the named players' histories: each new record, and each pair's score over all
    // their races (the series table's rounds are this chain of rematches only).
    const records = r.records || [];
    $("records").hidden = !records.length;
    $("records").replaceChildren(...records.map((note) => el("li", { class: note.name === state.name ? "mine" : "" },
      FTR.recordLine(note, state.name))));
    const against = ghost ? FTRGhost.gapLine(ghost, ghostGap()) : "";  // how I did against the ghost
    $("ghost-result").hidden = !ghost;
    $("ghost-result").textContent = ghost ? `Against ${ghost.label} (${formatMs(ghost.time_ms, true)}, `
      + `${STATUS[ghost.status] || ghost.status}): ${against || "no card up since the deal"}` : "";
    // A daily attempt's results carry its player's streak as the server recorded it, this day counted.
    const streak = $("results-streak");
    streak.hidden = !hasStreak(r);
    streak.textContent = hasStreak(r) ? FTR.streakLine(r) : "";
    const pairs = r.head_to_head || [];
    $("rivalries").hidden = !pairs.length;
    $("rivalries-list").replaceChildren(...pairs.map((pair) => el("li", { "data-names": `${pair.a} ${pair.b}` },
      FTR.rivalryLine(pair, state.name))));
    const mine = state.name && FTR.heldName(state.name);
    $("my-page").hidden = !mine;
    if (mine) $("my-page").href = FTR.playerPath(mine);
    const series = state.series;
    $("series").hidden = !(series && series.standings && series.standings.length && series.rounds.length > 1);
    if (series && series.standings) {
      $("series-body").replaceChildren(...series.standings.map((row) => el("tr", { "data-name": row.name },
        el("td", { class: "who", text: row.name }), el("td", { class: "num", text: String(row.rounds_won) }),
        el("td", { class: "num", text: String(row.foundation) }), el("td", { class: "num", text: formatMs(row.time_ms) }))));
    }
  }

  /** Whether results `r` carry a streak (a daily attempt's, on a server that recorded it). */
  function hasStreak(r) { return r.streak !== null && r.streak !== undefined; }

  async function afterResults() {
    const r = state.results;
    const verify = $("verify");
    if (!r.seed) { await dailyResults(r, verify); return; }
    verify.replaceChildren(el("div", {}, "seed ", el("code", { text: r.seed.length > 80 ? "(a dealt position)" : r.seed }),
      " · nonce ", el("code", { text: r.nonce }), " · commitment ", el("code", { text: r.commitment })));
    const ok = await verifyCommitment(r);
    if (ok !== null) {
      verify.append(el("div", { class: ok ? "ok" : "bad", id: "verified" }, ok
        ? "✓ SHA-256(nonce + seed) equals the commitment published before the deal"
        : "✗ SHA-256(nonce + seed) does NOT equal the commitment"));
    }
  }

  /** A daily attempt's results: its place on the day's board (kept up to date as the day goes on) with a link
      to it and the line to share (daily-share.js), and the day's seed checked against the commitment once the
      day is revealed (GET /matches/{code} names the day; the reveal is asked for only when the leaderboard says
      the day is final, so no request is refused). */
  async function dailyResults(r, verify) {
    const secret = el("div", { id: "seed-note" }, "The seed is revealed when the day is over, then checked "
      + "against the commitment ", el("code", { text: r.commitment }));
    verify.replaceChildren(secret);
    const match = await getJSON(`/matches/${encodeURIComponent(code)}`);
    const day = match.status === 200 && match.body.daily;
    if (!day) return;
    const base = `/daily/${day.date}/${encodeURIComponent(day.variant)}`;
    const boardLink = el("a", { href: `/daily#board-${encodeURIComponent(day.variant)}`, text: "the day's board →" });
    const final = await new Promise((resolve) => {
      // The results' own streak line says it already where the server put it there.
      const place = FTRDaily.placeView(day.date, day.variant, state.name, { follow: true, extra: boardLink,
        streak: !hasStreak(r),
        fallback: (board) => `${plural(board.total, "attempt")} ended`, onEntry: (entry, board) => resolve(board.final) });
      place.element.querySelector(".place-row").id = "day-rank";
      verify.prepend(place.element);
    });
    if (!final) return;
    const revealed = await getJSON(`${base}/reveal`);
    if (revealed.status !== 200) return;
    const seed = revealed.body.seed;
    secret.replaceChildren("seed ", el("code", { text: seed }), " · commitment ", el("code", { text: r.commitment }));
    const ok = await verifyCommitment({ seed, nonce: "", commitment: r.commitment });  // the day's: SHA-256(seed)
    if (ok !== null) {
      verify.append(el("div", { class: ok ? "ok" : "bad", id: "verified" }, ok
        ? "✓ SHA-256(seed) equals the commitment published before the day"
        : "✗ SHA-256(seed) does NOT equal the commitment"));
    }
  }

  /** The recovery code of a name this join (or the daily attempt that led here) claimed: a panel, once; it
      steps aside while racing (the board needs the screen) and is back at the results until dismissed. */
  let claim = null;  // {name, code, dismissed}
  function renderClaim() {
    if (!claim && state.claimed) claim = { ...state.claimed, dismissed: false };
    const home = $("claim-home");
    if (!claim || claim.dismissed) { home.replaceChildren(); return; }
    if (!home.firstChild) {
      home.append(FTR.recoveryPanel(claim.name, claim.code, () => { claim.dismissed = true; render(); }));
    }
    home.hidden = state.phase === "playing" && Boolean(state.view);
  }

  function render() {
    const playing = ["playing", "finished"].includes(state.phase) && state.view;
    $("table-panel").hidden = !playing;
    $("race-panel").hidden = state.phase === "connecting" && !Object.keys(state.players).length;
    const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
    renderHero();
    renderClaim();
    renderLobby();
    renderBoard();
    renderSelection();
    renderCounters();
    renderMessage();
    renderRace();
    renderResults();
    fitColumns();
    tick();
    if (focused && document.activeElement !== document.querySelector(`[data-key="${CSS.escape(focused)}"]`)) {
      restoreFocus(focused);
    }
  }

  // ------------------------------------------------------------------ rounds

  /** The next round exists (`next_round`): its connection opens now, but this page goes on showing the
      results (and the series table) until that round's lobby has arrived; then it moves over (adoptRound). */
  function nextRound(frame) {
    FTRConnection.savePlayer(frame.match, state.name, frame.token);
    FTRConnection.saveHostToken(frame.match, frame.host_token);
    if (pending && pending.code === frame.match) return;
    if (pending) pending.conn.close();
    const next = { ...FTRRace.initial(frame.match), name: state.name, series: state.series,
                   round: frame.round || state.round + 1 };
    const round = pending = { code: frame.match, state: next, conn: null };
    round.conn = new FTRConnection.Connection(frame.match, {
      onFrame: (f) => {
        round.state = reduce(round.state, f);
        if (["lobby", "countdown", "started"].includes(f.type) && pending === round) adoptRound(round);
      },
      onStatus: (status, closeCode) => { round.state = reduce(round.state, { type: "page/status", status, closeCode }); },
    });
    round.conn.open();
    render();
  }

  /** The next round's lobby is here: its connection becomes the page's, the old one closes. */
  function adoptRound(round) {
    pending = null;
    conn.close();
    conn = round.conn;
    conn.handlers = { onFrame: dispatch, onStatus: (status, closeCode) => dispatch({ type: "page/status", status, closeCode }) };
    code = round.code;
    history.pushState(null, "", `/join/${encodeURIComponent(code)}`);
    state = round.state;
    selection = null;
    ghost = null;  // the next round sends its own ghost, if it races one
    rematchAsked = false;
    confirmingResign = false;
    confirmingRestart = false;
    refreshMatch();
    render();
  }

  /** A late friend's link may be of a round that has ended: go to the newest round of the series. */
  async function newestRound() {
    for (let hops = 0; hops < 50; hops++) {
      const { status, body } = await getJSON(`/matches/${encodeURIComponent(code)}`);
      if (status === 404) { dispatch({ type: "page/message", text: `There is no match with the code “${code}”.`, kind: "error" }); return false; }
      if (status !== 200) return true;
      if (body.code && body.code !== code) {
        // The server's spelling of the code ("k7qm..." typed in lower case, O for 0): the token is kept
        // under it (connection.js saves the `joined` frame's match), so a reload finds it again.
        code = body.code;
        history.replaceState(null, "", `/join/${encodeURIComponent(code)}`);
        state = { ...state, code };
      }
      dispatch({ type: "page/match", state: body });
      if (!body.next_round || FTRConnection.savedPlayer(code)) return true;
      code = body.next_round;
      history.replaceState(null, "", `/join/${encodeURIComponent(code)}`);
      state = FTRRace.initial(code);
    }
    return true;
  }

  // ------------------------------------------------------------------ wiring

  function wire() {
    $("join-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const name = $("name").value.trim();
      if (!name) return;
      localStorage.setItem("ftr:name", name);
      conn.join(name);
    });
    $("ready").addEventListener("click", () => conn.ready());
    // Taking the game back: a fresh connection resumes with the saved token (the other tab is then the
    // one replaced); whatever this page had queued was never sent and is dropped with the old connection,
    // and so is the server's word that another connection took over (it told of the connection replaced).
    $("take-back").addEventListener("click", () => { selection = null; connect(); say(""); });
    $("start").addEventListener("click", () => conn.start());
    $("copy-link").addEventListener("click", copyLink);
    $("share-sheet").addEventListener("click", shareSheet);
    window.addEventListener("resize", fitColumns);
    $("draw").addEventListener("click", clickStock);
    $("finish").addEventListener("click", () => send("finish"));
    $("undo").addEventListener("click", () => send("u"));
    $("hint").addEventListener("click", askHint);
    $("resign").addEventListener("click", () => { confirmingResign = true; render(); $("resign-yes").focus(); });
    $("resign-no").addEventListener("click", () => { confirmingResign = false; render(); $("resign").focus(); });
    $("resign-yes").addEventListener("click", () => { confirmingResign = false; selection = null; conn.resign(); render(); });
    const restart = () => {
      confirmingRestart = false; selection = null; restartAsked = true;
      conn.restart();
      say("Restarting: the same deal, from the start", "hint");
    };
    $("restart").addEventListener("click", () => {
      if (state.phase === "finished" || gameOver(state)) { restart(); return; }  // nothing left to lose
      confirmingRestart = true; render(); $("restart-yes").focus();
    });
    $("restart-yes").addEventListener("click", restart);
    $("restart-no").addEventListener("click", () => { confirmingRestart = false; render(); $("restart").focus(); });
    $("rematch").addEventListener("click", () => {
      conn.rematch();
      rematchAsked = true;
      render();
      say("Rematch asked: the next round starts with everyone who clicks in time", "hint");
    });
    // ▲/▼ within the run on top of the column, never past it; ▼ from a card that cannot move: that run
    $("more").addEventListener("click", () => {
      if (selection && !selection.blocked && selection.count < runOf(selection.source)) select(selection.source, selection.count + 1, false);
    });
    $("less").addEventListener("click", () => {
      if (selection && selection.blocked) select(selection.source, runOf(selection.source), false);
      else if (selection && selection.count > 1) select(selection.source, selection.count - 1, false);
    });
    const board = $("board");
    board.addEventListener("focusin", (event) => {
      const button = event.target.closest("button[data-key]");
      const group = button && button.closest("[data-group]");
      if (!group) return;
      roving[group.dataset.group] = button.dataset.key;
      rove();
    });
    board.addEventListener("keydown", (event) => {
      if (!["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"].includes(event.key)) return;
      const button = event.target.closest("button[data-key]");
      const next = button && button.closest("[data-group]") ? arrowTarget(button, event.key) : null;
      if (next) { event.preventDefault(); next.focus(); }
    });
    $("cancel").addEventListener("click", () => { selection = null; render(); });
    $("command-form").addEventListener("submit", (event) => {
      event.preventDefault();
      if (typed($("command").value)) $("command").value = "";
    });
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && selection) { selection = null; render(); }
    });
    $("command-help").textContent = FTRNotation.HELP;
    $("name").value = localStorage.getItem("ftr:name") || "";
    // The daily page claimed the name before coming here: it left the recovery code for this page to show.
    try {
      const left = JSON.parse(sessionStorage.getItem("ftr:claimed") || "null");
      sessionStorage.removeItem("ftr:claimed");
      if (left && left.name && left.code) claim = { name: left.name, code: left.code, dismissed: false };
    } catch (error) { /* nothing left */ }
    setInterval(tick, 100);
  }

  wire();
  render();
  newestRound().then((ok) => {
    if (!ok) return;
    connect();
    if (alone && alone.code === code && alone.name && !FTRConnection.savedPlayer(code)) {
      readyOnJoin = true;
      conn.join(alone.name);
    }
    render();
  });
})();
