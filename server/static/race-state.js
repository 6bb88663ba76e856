/* The play page's state, and the one pure function that turns a server frame into the next state (as
   client_cli/state.py does for the terminal). No DOM, no I/O, no rules: the view and the legal list are
   the server's, kept as sent. Local facts (the connection's status, a message to show) come in as
   frames of the page's own: {type: "page/status"}, {type: "page/message"}, {type: "page/match"}. */
"use strict";

const FTRRace = (() => {
  const ENDED = new Set(["won", "dead", "resigned", "timeout"]);
  const MATCH_GONE_CLOSE = 4004;  // protocol/README.md: the server lost the match (its Redis lost its data)

  function initial(code) {
    return {
      code, name: "", phase: "connecting",  // connecting, preparing, lobby, countdown, playing, finished, closed, gone
      connection: "connecting", closeCode: 0, settings: null, commitment: "", round: 1, nextRound: null, series: null,
      startAt: 0, deadline: 0, clockOffset: 0, view: null, legal: [], moves: 0, undos: 0, foundation: 0,
      status: "lobby", timeMs: 0, players: {}, results: null, message: "", messageKind: "", daily: false,
      rematch: { names: [], next: null, windowMs: 0 }, lastCommand: "",
      hint: null,    // the last suggestion read against the legal list (resolveHint), until the next position
      claimed: null, // {name, code}: this join claimed the name, and code is its recovery code (never stored)
    };
  }

  function foundationCount(view) {
    const ranks = { A: 1, T: 10, J: 11, Q: 12, K: 13 };
    return view.foundations.filter((t) => t && t !== "-" && t !== "??")
      .reduce((sum, t) => sum + (ranks[t[0]] || Number(t[0])), 0);
  }

  // ---------------------------------------------------------------- runs and move limits, read from the view

  /** Each preset's build rule and move rule (server/engine/variants.py PRESETS; RULES.md sections 2, 3 and
      7). The page needs them to lift a card with the run on it and to say how many cards move at once;
      tests/browser/test_play_moves.py checks this table against the engine's presets. */
  const VARIANT_RULES = {
    classic: ["same_suit", "supermove"], relaxed: ["same_suit", "sequence"], josephine: ["same_suit", "sequence"],
    lucas: ["same_suit", "supermove"], maria: ["alternate_colour", "supermove"], indian: ["any_other_suit", "single"],
    streets: ["alternate_colour", "supermove"], number_ten: ["alternate_colour", "sequence"],
    rank_and_file: ["alternate_colour", "sequence"], emperor: ["alternate_colour", "supermove"],
    sixty_thieves: ["same_suit", "supermove"],
  };
  const RANKS = "A23456789TJQK";
  const isRed = (text) => text[1] === "H" || text[1] === "D";

  /** The build and move rule of the match's variant, {build, move}, or null when the page does not know it. */
  function rulesOf(state) {
    const rules = state.settings && VARIANT_RULES[state.settings.variant];
    return rules ? { build: rules[0], move: rules[1] } : null;
  }

  /** May `card` ("8S") lie on `onto` ("9S") in a column under build rule `build` (RULES.md section 2)? */
  function fits(card, onto, build) {
    if (RANKS.indexOf(card[0]) + 1 !== RANKS.indexOf(onto[0])) return false;
    if (build === "same_suit") return card[1] === onto[1];
    if (build === "alternate_colour") return isRed(card) !== isRed(onto);
    return card[1] !== onto[1];  // any_other_suit
  }

  /** How many top cards of column `index` (0-based) form a run (RULES.md section 3): 0 for an empty
      column, else at least 1. Without the variant's rules, every face-up card counts (the old reading). */
  function runLength(state, index) {
    const column = state.view ? state.view.tableau[index] || [] : [];
    const rules = rulesOf(state);
    if (!rules || !column.length) return column.length;
    let i = column.length - 1;
    while (i > 0 && fits(column[i], column[i - 1], rules.build)) i--;
    return column.length - i;
  }

  /** Empty columns of the view (no card, none face down). */
  const emptyColumns = (view) => view.tableau.filter((column, i) => !column.length && !view.hidden[i]).length;

  /**
   * How many cards one command may take from `source` now, and why: {onto, into, reason}. `onto`: onto a
   * card or a foundation, `into`: into an empty column (0: none is empty; Infinity: no limit). The number
   * follows the variant's move rule (RULES.md section 3: supermove 2^e onto a card and 2^(e-1) into an
   * empty column, e the empty columns; single 1; sequence no limit) and is never below what the server's
   * legal list moves from `source`. `reason` is the selection bar's "max 2 at once: 1 empty column".
   */
  function moveLimit(state, source) {
    const most = mostFrom(state, source);
    if (source === "w" || source.startsWith("f")) {
      return { onto: 1, into: 1, reason: `max 1 at once: ${source === "w" ? "the waste's" : "a foundation's"} top card` };
    }
    const rules = rulesOf(state);
    if (!rules || !state.view) return { onto: most, into: most, reason: `max ${most} at once: the legal moves` };
    const empty = emptyColumns(state.view);
    if (rules.move === "sequence") return { onto: Infinity, into: Infinity, reason: "no limit: a run moves as a unit" };
    if (rules.move === "single") return { onto: 1, into: 1, reason: "max 1 at once: this variant moves one card at a time" };
    const onto = Math.max(2 ** empty, most);
    const into = empty ? 2 ** (empty - 1) : 0;
    const reason = empty
      ? `max ${onto} at once: ${empty} empty column${empty === 1 ? "" : "s"} (${into} into an empty one)`
      : `max ${onto} at once: no empty column`;
    return { onto, into, reason };
  }

  // ---------------------------------------------------------------- hints

  /**
   * A suggested `command` read against the view and the legal list: {command, source, target, cards, text},
   * source "3" | "w" | "fN" | "" (a draw, a redeal, finish), target "3" | "f" | "", cards the legal entry's
   * count (0 when the command is not in the list), text a sentence for people ("move 9S from column 4 to
   * column 7"; card codes, which the page shows with suit symbols).
   */
  function resolveHint(state, command) {
    const entry = state.legal.find(([c]) => c === command);
    const cards = entry ? entry[1] : 0;
    const words = { s: "draw a card", r: "redeal the waste", finish: "put every card up", u: "undo" };
    if (Object.hasOwn(words, command)) return { command, source: "", target: "", cards, text: words[command] };
    const dash = command.indexOf("-");
    if (dash < 0 || !state.view) return { command, source: "", target: "", cards, text: "" };
    const source = command.slice(0, dash);
    const rawTarget = command.slice(dash + 1).split("x")[0];
    const target = rawTarget.startsWith("f") ? "f" : rawTarget;
    const view = state.view;
    let moved = [];
    if (source === "w") moved = view.waste.slice(-1);
    else if (source.startsWith("f")) moved = [view.foundations[Number(source.slice(1)) - 1]];
    else moved = (view.tableau[Number(source) - 1] || []).slice(-Math.max(cards, 1));
    const from = source === "w" ? "the waste" : source.startsWith("f") ? `foundation ${source.slice(1)}` : `column ${source}`;
    const to = target === "f" ? "a foundation" : `column ${target}`;
    const what = moved.length > 1 ? `the ${moved.length} cards ${moved[0]}..${moved[moved.length - 1]}` : moved[0] || "a card";
    return { command, source, target, cards: cards || 1, text: `move ${what} from ${from} to ${to}` };
  }


  function withPlayer(state, name, update) {
    const old = state.players[name] || { name, ready: false, connected: true, status: "lobby", moves: 0,
                                         foundation: 0, time_ms: 0 };
    return { ...state, players: { ...state.players, [name]: { ...old, ...update } } };
  }

  /** The next state after `frame` (a server message, or one of the page's own). Never mutates `state`. */
  function reduce(state, frame) {
    switch (frame.type) {
      case "page/status":  // closeCode: why a connection was closed for good ("gone"), else 0
        return { ...state, connection: frame.status, closeCode: frame.closeCode || 0,
                 // 4004: the server lost the match (protocol/README.md), whatever the page was doing: over
                 phase: frame.status === "gone" && frame.closeCode === MATCH_GONE_CLOSE && state.phase !== "finished"
                   ? "gone" : state.phase };
      case "page/message":
        return { ...state, message: frame.text, messageKind: frame.kind || "" };
      case "page/match":  // GET /matches/{code}: settings, round, series, daily (the public state)
        return { ...state, settings: state.settings || frame.state.settings, round: frame.state.round || state.round,
                 daily: Boolean(frame.state.daily) || state.daily,  // {date, variant} of a daily attempt, else absent
                 nextRound: frame.state.next_round || null, series: frame.state.series || state.series,
                 commitment: state.commitment || frame.state.commitment || "" };
      case "joined": {  // a join that claimed the name brings its recovery code (shown once: state.claimed)
        const claimed = frame.recovery_code ? { name: frame.name, code: frame.recovery_code } : state.claimed;
        return withPlayer({ ...state, code: frame.match, name: frame.name, claimed }, frame.name, {});
      }
      case "lobby": {
        let next = { ...state, settings: frame.settings, commitment: frame.commitment || state.commitment };
        if (["preparing", "lobby", "countdown", "closed"].includes(frame.state)
            && ["connecting", "preparing", "lobby"].includes(state.phase)) next.phase = frame.state;
        for (const p of frame.players) {  // a bot (the server plays it) is marked so in the race and the results
          next = withPlayer(next, p.name, { ready: p.ready, connected: p.connected, bot: Boolean(p.bot) });
        }
        return next;
      }
      case "countdown":
        return { ...state, startAt: frame.start_at_ms,
                 phase: ["playing", "finished"].includes(state.phase) ? state.phase : "countdown", message: "" };
      case "started": {
        const foundation = foundationCount(frame.view);
        let next = { ...state, phase: state.phase === "finished" ? "finished" : "playing",
                     startAt: frame.start_at_ms, deadline: frame.deadline_ms, view: frame.view, legal: frame.legal,
                     moves: frame.moves, undos: frame.undos || 0, foundation,
                     status: frame.status || "playing", hint: null };
        for (const p of Object.values(next.players)) {
          if (p.status === "lobby") next = withPlayer(next, p.name, { status: "playing", foundation });
        }
        // A resumed game is past move 0: my row of the race table shows what `started` says of it (the
        // others' rows come from the `progress` frames the server sends right after).
        if (state.name) next = withPlayer(next, state.name, { moves: frame.moves, foundation, status: next.status });
        return next;
      }
      case "position": {
        const next = { ...state, view: frame.view, legal: frame.legal, moves: frame.moves, undos: frame.undos,
                       foundation: frame.foundation, status: frame.status, timeMs: frame.time_ms,
                       lastCommand: frame.command, message: "", messageKind: "", hint: null };
        return withPlayer(next, state.name, { moves: frame.moves, foundation: frame.foundation,
                                              status: frame.status, time_ms: frame.time_ms });
      }
      case "progress":
      case "finished": {
        // ended: a `finished` frame ends a game; a `progress` saying "dead" is a player stuck with an undo left
        let next = withPlayer(state, frame.name, { moves: frame.moves, foundation: frame.foundation,
                                                   status: frame.status, time_ms: frame.time_ms,
                                                   ended: frame.type === "finished" });
        if (frame.name === state.name && ENDED.has(frame.status)) next = { ...next, status: frame.status, timeMs: frame.time_ms };
        return next;
      }
      case "results": {
        let next = { ...state, results: frame, phase: "finished" };
        for (const row of frame.ranking) {
          next = withPlayer(next, row.name, { moves: row.moves, foundation: row.foundation, status: row.status,
                                              time_ms: row.time_ms });
          if (row.name === state.name) next = { ...next, status: row.status, timeMs: row.time_ms, moves: row.moves };
        }
        return next;
      }
      case "rejected":
        return { ...state, message: `${frame.command}: ${frame.reason}`, messageKind: "refused" };
      case "suggestion": {  // the hint is marked on the board (state.hint) until the next position
        const hint = frame.command ? resolveHint(state, frame.command) : null;
        return { ...state, hint, messageKind: "hint", message: frame.command
          ? `Hint: ${frame.command}` + (hint && hint.text ? ` (${hint.text})` : "")
          : "Hint: none (nothing left to draw): try a move of your own, undo, or resign" };
      }
      case "error":  // "closed" (the match never started), or "no_match" once joined (the server lost it): over
        return { ...state, message: frame.message, messageKind: "error",
                 phase: frame.code === "closed" ? "closed"
                   : frame.code === "no_match" && !["connecting", "finished"].includes(state.phase) ? "gone" : state.phase };
      case "pong":
        return { ...state, clockOffset: Math.round(frame.server_time_ms - frame.local_ms) };
      case "rematch":  // public event of this match: who wants another round, and its code
        return { ...state, rematch: { ...state.rematch, names: frame.names || [], next: frame.next || state.rematch.next } };
      case "next_round":
        return { ...state, rematch: { ...state.rematch, next: frame.match, windowMs: frame.window_ms || 0 } };
      default:
        return state;
    }
  }

  // ---------------------------------------------------------------- questions the page asks of a state

  /** Is `command` in the server's legal list? */
  const can = (state, command) => state.legal.some(([c]) => c === command);

  /** My game is over (dead counts only when no undo is offered: the server's legal list says). */
  const gameOver = (state) => ENDED.has(state.status) && !(state.status === "dead" && can(state, "u"));

  /** Is player `p` (a row of `state.players`) still playing? A stuck player (status "dead", an undo left,
      no `finished` yet) is: their game goes on. My own row asks my game (gameOver). */
  const stillPlaying = (state, p) => (p.name === state.name && state.view ? !gameOver(state)
    : p.status === "playing" || (p.status === "dead" && !p.ended));

  /** May I restart (the server's rule): alone in the match, not a daily attempt, once the deal is out. */
  // Alone: one person in the match (its bots race from their own views, so a restart stays fair).
  const canRestart = (state) => Boolean(state.name) && !state.daily
    && Object.values(state.players).filter((p) => !p.bot).length === 1
    && (state.phase === "playing" || state.phase === "finished");

  /** The clock of my game in ms: running while I play, my final time once my game ended. */
  function elapsed(state, nowMs) {
    if (!["playing", "finished"].includes(state.phase) || !state.startAt) return 0;
    if (ENDED.has(state.status) || state.phase === "finished") return state.timeMs;
    return Math.max(0, nowMs + state.clockOffset - state.startAt);
  }

  /** Seconds until the start instant (server clock). */
  const countdown = (state, nowMs) => Math.max(0, (state.startAt - nowMs - state.clockOffset) / 1000);

  /**
   * The legal targets of a selection {source: "3" | "w" | "f2", count} as [{target, command, kind}],
   * best first, from the legal list only. kind: "foundation" (X-f), "card" (a column that is not empty
   * in the view) or "empty" (an empty column; A-B for one card, A-BxK for K). Best: a foundation, then a
   * non-empty column, then an empty column (the lowest numbered first within each, the server's order);
   * a card on a foundation is never lost, a move onto a card keeps the empty columns free. While a hint is
   * shown (state.hint) its command comes first: the second tap on the hinted cards plays the hint, and the
   * bar's "best" is the target the board marks as the hint's.
   */
  function targets(state, selection) {
    if (!selection || !state.view) return [];
    const view = state.view;
    const found = [];
    for (const [command, cards] of state.legal) {
      const dash = command.indexOf("-");
      if (dash < 0 || command.slice(0, dash) !== selection.source || cards !== selection.count) continue;
      const target = command.slice(dash + 1).split("x")[0];
      let kind = "foundation";
      if (!target.startsWith("f")) {
        const i = Number(target) - 1;
        kind = view.tableau[i] && (view.tableau[i].length || view.hidden[i]) ? "card" : "empty";
      }
      found.push({ target: target.startsWith("f") ? "f" : target, command, kind });
    }
    const order = { foundation: 0, card: 1, empty: 2 };
    const hinted = state.hint ? state.hint.command : null;
    const rank = (t) => (t.command === hinted ? -1 : order[t.kind]);
    return found.map((t, i) => ({ ...t, i })).sort((a, b) => rank(a) - rank(b) || a.i - b.i);
  }

  /** The most cards any legal move takes from `source` (the "at most N at once" of the selection bar). */
  function mostFrom(state, source) {
    return state.legal.reduce((most, [command, cards]) => (command.split("-")[0] === source && command.includes("-")
      ? Math.max(most, cards) : most), 0);
  }

  return { initial, reduce, can, gameOver, stillPlaying, canRestart, elapsed, countdown, targets, mostFrom, foundationCount, ENDED,
           VARIANT_RULES, fits, runLength, moveLimit, resolveHint };
})();
