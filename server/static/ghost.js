/* The ghost a race runs against (protocol `ghost` frame: a recorded game's progress, never a card), read
   against the match clock. Pure: no DOM, no I/O (client_cli/ghost.py says the same for the terminal).
   timeline: [[ms, moves, foundation], ...], the deal first, then one entry per accepted command. */
"use strict";

const FTRGhost = (() => {
  /** The ghost at `ms` of the match clock: {moves, foundation, status, timeMs}; `status` "playing" until its
      recorded end (ghost.time_ms), then how it ended. */
  function at(ghost, ms) {
    const line = ghost.timeline;
    let lo = 0, hi = line.length - 1;
    while (lo < hi) {  // the last entry with ms <= `ms` (the first one is the deal, at 0)
      const mid = (lo + hi + 1) >> 1;
      if (line[mid][0] <= ms) lo = mid; else hi = mid - 1;
    }
    const [, moves, foundation] = line[lo] || [0, 0, 0];
    const over = ms >= ghost.time_ms;
    return { moves, foundation, status: over ? ghost.status : "playing", timeMs: Math.min(ms, ghost.time_ms) };
  }

  /** The match clock ms at which the ghost first had `cards` up or more; null when it never had. */
  function reached(ghost, cards) {
    const entry = ghost.timeline.find(([, , foundation]) => foundation >= cards);
    return entry ? entry[0] : null;
  }

  /**
   * The gap at my cards up: I had `cards` up first at `myMs` (match clock), the ghost at reached(ghost, cards).
   * {ms, ahead, more}: `ms` how much later I got there (negative: earlier); null when unknown (no card up since
   * the deal, or my time of it not known). A ghost that never had so many cards up: `more` cards more than its
   * best, and `ahead` true. A win against a win compares the two times.
   */
  function gap(ghost, cards, myMs, myStatus) {
    if (myStatus === "won" && ghost.status === "won") return { ms: myMs - ghost.time_ms, ahead: myMs < ghost.time_ms, more: 0 };
    const start = ghost.timeline.length ? ghost.timeline[0][2] : 0;
    if (myMs === null || myMs === undefined || cards <= start) return null;
    const theirs = reached(ghost, cards);
    if (theirs === null) return { ms: null, ahead: true, more: cards - ghost.foundation };
    return { ms: myMs - theirs, ahead: myMs < theirs, more: 0 };
  }

  /** A gap's size in seconds to the tenth, "1.3" for 1250 ms or -1250 ms: rounded half up in whole numbers, as
      client_cli/ghost.py does (toFixed rounds 1.45 down and 1.25 up, Python's format 1.25 down), so that the
      page's and the terminal's words agree for the same gap. */
  function gapSeconds(ms) {
    const tenths = Math.floor((Math.abs(ms) + 50) / 100);
    return `${Math.floor(tenths / 10)}.${tenths % 10}`;
  }

  /** The gap as words: "12.3 s behind ann's best", "4.0 s ahead of ann's best", "3 cards more than ann's best". */
  function gapLine(ghost, g) {
    if (!g) return "";
    if (g.ms === null) return `${g.more} card${g.more === 1 ? "" : "s"} more than ${ghost.label}`;
    const seconds = gapSeconds(g.ms);
    if (seconds === "0.0") return `level with ${ghost.label}`;  // within 50 ms: the tenths shown are equal
    return g.ahead ? `${seconds} s ahead of ${ghost.label}` : `${seconds} s behind ${ghost.label}`;
  }

  return { at, reached, gap, gapLine, gapSeconds };
})();
