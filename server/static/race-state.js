/* The play page's state, and the one pure function that turns a server frame into the next state (as
   client_cli/state.py does for the terminal). No DOM, no I/O, no rules: the view and the legal list are
   the server's, kept as sent. Local facts (the connection's status, a message to show) come in as
   frames of the page's own: {type: "page/status"}, {type: "page/message"}, {type: "page/match"}. */
"use strict";

const FTRRace = (() => {
  const ENDED = new Set(["won", "dead", "resigned", "timeout"]);
  const MATCH_GONE_CLOSE = 4004;  // README "Protocol": the server lost the match (its Redis lost its data)

  function initial(code) {
    return {
      code, name: "", phase: "connecting",  // connecting, preparing, lobby, countdown, playing, finished, closed, gone
      connection: "connecting", closeCode: 0, settings: null, commitment: "", round: 1, nextRound: null, series: null,
      startAt: 0, deadline: 0, clockOffset: 0, view: null, legal: [], moves: 0, undos: 0, foundation: 0,
      status: "lobby", timeMs: 0, players: {}, results: null, message: "", messageKind: "", daily: false,
      rematch: { names: [], next: null, windowMs: 0 }, lastCommand: "",
    };
  }

  function foundationCount(view) {
    const ranks = { A: 1, T: 10, J: 11, Q: 12, K: 13 };
    return view.foundations.filter((t) => t && t !== "-" && t !== "??")
      .reduce((sum, t) => sum + (ranks[t[0]] || Number(t[0])), 0);
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
                 // 4004: the server lost the match (README "Protocol"), whatever the page was doing: over
                 phase: frame.status === "gone" && frame.closeCode === MATCH_GONE_CLOSE && state.phase !== "finished"
                   ? "gone" : state.phase };
      case "page/message":
        return { ...state, message: frame.text, messageKind: frame.kind || "" };
      case "page/match":  // GET /matches/{code}: settings, round, series, daily (the public state)
        return { ...state, settings: state.settings || frame.state.settings, round: frame.state.round || state.round,
                 daily: Boolean(frame.state.daily) || state.daily,
                 nextRound: frame.state.next_round || null, series: frame.state.series || state.series,
                 commitment: state.commitment || frame.state.commitment || "" };
      case "joined":
        return withPlayer({ ...state, code: frame.match, name: frame.name }, frame.name, {});
      case "lobby": {
        let next = { ...state, settings: frame.settings, commitment: frame.commitment || state.commitment };
        if (["preparing", "lobby", "countdown", "closed"].includes(frame.state)
            && ["connecting", "preparing", "lobby"].includes(state.phase)) next.phase = frame.state;
        for (const p of frame.players) next = withPlayer(next, p.name, { ready: p.ready, connected: p.connected });
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
                     status: frame.status || "playing" };
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
                       lastCommand: frame.command, message: "", messageKind: "" };
        return withPlayer(next, state.name, { moves: frame.moves, foundation: frame.foundation,
                                              status: frame.status, time_ms: frame.time_ms });
      }
      case "progress":
      case "finished": {
        let next = withPlayer(state, frame.name, { moves: frame.moves, foundation: frame.foundation,
                                                   status: frame.status, time_ms: frame.time_ms });
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
      case "suggestion":
        return { ...state, message: frame.command ? `Hint: ${frame.command}`
          : "Hint: none (nothing left to draw): try a move of your own, undo, or resign", messageKind: "hint" };
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

  /** May I restart (the server's rule): alone in the match, not a daily attempt, once the deal is out. */
  const canRestart = (state) => Boolean(state.name) && !state.daily && Object.keys(state.players).length === 1
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
   * a card on a foundation is never lost, a move onto a card keeps the empty columns free.
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
    return found.map((t, i) => ({ ...t, i })).sort((a, b) => order[a.kind] - order[b.kind] || a.i - b.i);
  }

  /** The most cards any legal move takes from `source` (the "at most N at once" of the selection bar). */
  function mostFrom(state, source) {
    return state.legal.reduce((most, [command, cards]) => (command.split("-")[0] === source && command.includes("-")
      ? Math.max(most, cards) : most), 0);
  }

  return { initial, reduce, can, gameOver, canRestart, elapsed, countdown, targets, mostFrom, foundationCount, ENDED };
})();
