/* What a player types into the Command field, turned into what the page sends (pure, no DOM, no I/O).
   A port of client_cli/commands.py (resolve) and protocol/commands.py (the canonical notation, RULES.md
   section 10): the same short forms, decided from the server's legal list and view only, never from rules.
   tests/browser/test_play_page.py checks the port gives the Python answer on a table of inputs. */
"use strict";

const FTRNotation = (() => {
  /** Words the page handles itself (client_cli.commands.LOCAL_WORDS; no "quit": closing the tab is that). */
  const LOCAL_WORDS = {
    "?": "help", help: "help", h: "help", hint: "hint", resign: "resign", "give up": "resign",
    ready: "ready", start: "start", quit: "quit", exit: "quit", q: "quit",
  };
  /** Words that stand for a canonical keyword command (client_cli.commands.ALIASES). */
  const ALIASES = { d: "s", draw: "s", stock: "s", redeal: "r", undo: "u", fin: "finish" };
  const KEYWORDS = new Set(["s", "r", "u", "finish"]);
  const MOVE = /^(?:([0-9]+)|(w)|f([0-9]+))-(?:([0-9]+)|f([0-9]*))(?:x([0-9]+))?$/;
  const SEPARATORS = /[\s,>]+/;
  const PILE = /^(?:w|f[0-9]*|[0-9]+)$/;

  function numberOk(text) {
    return text !== "0" && text[0] !== "0" && text.length <= 4;
  }

  /** The canonical form of `text` (protocol.commands.parse_command then str), or null when not canonical. */
  function canonical(text) {
    if (KEYWORDS.has(text)) return text;
    const m = MOVE.exec(text);
    if (!m) return null;
    const [, srcCol, srcWaste, srcSlot, dstCol, dstSlot, count] = m;
    for (const n of [srcCol, srcSlot, dstCol, dstSlot || undefined, count]) {
      if (n !== undefined && !numberOk(n)) return null;
    }
    if (count !== undefined && (srcCol === undefined || dstCol === undefined)) return null;
    if (srcSlot !== undefined && dstCol === undefined) return null;
    const source = srcCol !== undefined ? srcCol : srcWaste ? "w" : "f" + srcSlot;
    const target = dstCol !== undefined ? dstCol : "f" + (dstSlot || "");
    return `${source}-${target}` + (count !== undefined ? "x" + count : "");
  }

  const sourceOf = (command) => (command.includes("-") ? command.split("-")[0] : "");
  const targetOf = (command) => (command.includes("-") ? command.split("-").slice(1).join("-").split("x")[0] : "");

  function emptyColumns(view) {
    const empty = new Set();
    if (!view) return empty;
    view.tableau.forEach((column, i) => { if (!column.length && !view.hidden[i]) empty.add(String(i + 1)); });
    return empty;
  }

  /** The distinct targets of `source` ("3" or "w") in the legal list, moves into empty columns collapsed
      into the first (client_cli.commands.moves_from). `legal` is [[command, cards], ...]. */
  function movesFrom(source, legal, view) {
    const empty = emptyColumns(view);
    const result = [];
    let seenEmpty = false;
    for (const [command] of legal) {
      if (sourceOf(command) !== source || command.includes("x")) continue;
      if (empty.has(targetOf(command))) {
        if (seenEmpty) continue;
        seenEmpty = true;
      }
      result.push(command);
    }
    return result;
  }

  function bestMove(source, legal, view) {
    const choices = movesFrom(source, legal, view);
    const empty = emptyColumns(view);
    const ontoCards = choices.filter((c) => !empty.has(targetOf(c)));
    const where = source === "w" ? "the waste" : `column ${source}`;
    if (ontoCards.length === 1) return { action: "play", command: ontoCards[0] };
    if (!choices.length) return { action: "error", message: `${where} has no legal move now` };
    if (!ontoCards.length) {
      return { action: "error", message: `${where} can only go to an empty column: type it, e.g. ${choices[0]}` };
    }
    return { action: "error", message: `${where} has several targets: ${choices.join(", ")}` };
  }

  function digitSplits(digits, columns) {
    const found = [];
    for (let cut = 1; cut < digits.length; cut++) {
      const a = digits.slice(0, cut), b = digits.slice(cut);
      if (a[0] === "0" || b[0] === "0") continue;
      if (+a >= 1 && +a <= columns && +b >= 1 && +b <= columns && a !== b) found.push(`${a}-${b}`);
    }
    return found;
  }

  /** One typed line -> {action, command?, message?}; action is one of play, help, hint, resign, ready,
      start, quit, error, none (client_cli.commands.resolve, form for form). */
  function resolve(text, legal, view) {
    legal = legal || [];
    const line = text.trim();
    if (!line) return { action: "none" };
    const lowered = line.toLowerCase();
    if (Object.hasOwn(LOCAL_WORDS, lowered)) return { action: LOCAL_WORDS[lowered] };
    if (Object.hasOwn(ALIASES, lowered)) return { action: "play", command: ALIASES[lowered] };
    const direct = canonical(line) || canonical(lowered);
    if (direct !== null) return { action: "play", command: direct };
    const legalCommands = new Set(legal.map(([command]) => command));
    const columns = view ? view.tableau.length : 10;
    let parts = lowered.replaceAll("-", " ").split(SEPARATORS).filter(Boolean);
    let count = "";
    if (parts.length === 3 && /^x?[0-9]+$/.test(parts[2])) {
      count = parts.pop().replace(/^x+/, "");
    } else if (parts.length === 2 && /^[0-9]+x[0-9]+$/.test(parts[1])) {
      [parts[1], count] = parts[1].split("x");
    }
    if (parts.length === 1) {
      const word = parts[0];
      const m = /^(w|f[0-9]+|[0-9]+)(f[0-9]*|w)?$/.exec(word);
      if (word === "w" || (/^[0-9]+$/.test(word) && +word <= columns && word[0] !== "0")) {
        return bestMove(word, legal, view);
      }
      if (/^[0-9]+$/.test(word)) {
        let splits = digitSplits(word, columns);
        if (splits.length > 1) {
          const held = splits.filter((s) => legalCommands.has(s));
          if (held.length) splits = held;
        }
        if (splits.length === 1) return { action: "play", command: splits[0] };
        if (splits.length) return { action: "error", message: `'${word}' is ambiguous: ${splits.join(" or ")}?` };
        return { action: "error", message: `'${word}': no such column` };
      }
      if (m && m[2] && m[2] !== "w") {
        parts = [m[1], m[2]];
      } else {
        const m2 = /^(w|f[0-9]+)([0-9]+)$/.exec(word);
        if (m2) parts = [m2[1], m2[2]];
      }
    }
    if (parts.length === 2 && parts.every((p) => PILE.test(p))) {
      const command = canonical(`${parts[0]}-${parts[1]}` + (count ? "x" + count : ""));
      if (command !== null) return { action: "play", command };
    }
    return { action: "error", message: `'${line}' is not a command: type ? for help` };
  }

  /** How many legal commands play a card of the table (not s, r, u, finish): the stock's reminder. */
  function tableMoves(legal) {
    return (legal || []).filter(([command]) => !KEYWORDS.has(command)).length;
  }

  const HELP = "s draw [d] · r redeal · 3-7 column 3 onto 7 [3 7, 37] · 3-7x2 two cards [3 7 2] · " +
    "w-2, w-f waste onto column 2 / a foundation [w2, wf] · 5-f [5f] · 3 column 3 to its one target · " +
    "finish · u undo · hint · ready · start · resign";

  return { resolve, canonical, movesFrom, tableMoves, sourceOf, targetOf, LOCAL_WORDS, ALIASES, HELP };
})();
