/* /: create a race (POST /matches; the host token stays in local storage for the play page's Start
   button), play alone on a game number, or go to a code's play or watch page; links to the pages of the
   names this browser holds keys of. Bots (GET /bots) are offered only where the server has them. */
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const onlySolvable = new Set(["classic", "relaxed"]);  // the variants the server keeps solvable deals of
  const MAX_DIGITS = 200;  // a seed is 1..200 characters (server/engine/README.md, "The deal algorithm")
  const MAX_BOTS = 3;  // the server's bound of bots in a match
  const PACES = [1, 600];  // a bot's moves a minute, least and most
  const RANDOM_NUMBERS = 1000000;  // a random game number is 1 .. 999999: short to type and to share

  $("alone-variant").replaceChildren(...[...$("variant").options].map((option) => option.cloneNode(true)));
  $("alone-name").value = localStorage.getItem("ftr:name") || "";

  $("variant").addEventListener("change", () => {
    const pooled = onlySolvable.has($("variant").value);
    $("solvable").checked = pooled;
    $("solvable").disabled = !pooled;
  });

  /** The game number typed in `input` (trimmed; "" when empty), or null after `problem` (an element) was told
      what is wrong with it. The fields have no maxlength: a longer number pasted would be cut to another deal. */
  function gameNumber(input, problem, empty) {
    const number = input.value.trim();
    if (number && !/^[0-9]+$/.test(number)) {
      problem.textContent = `a game number is digits only (or leave it empty for ${empty})`;
      return null;
    }
    if (number.length > MAX_DIGITS) {
      problem.textContent = `a game number has at most ${MAX_DIGITS} digits (this one has ${number.length})`;
      return null;
    }
    return number;
  }

  /** The `bots` field of POST /matches from a picker: `count` bots of the level chosen (none: []), or null after
      `problem` (an element) was told why the count or the pace will not do (an empty field reads as 0). */
  function botsChosen(level, count, pace, problem) {
    if (!level) return [];
    if (!Number.isInteger(count) || count < 1 || count > MAX_BOTS) {
      problem.textContent = `how many bots: 1 to ${MAX_BOTS}`;
      return null;
    }
    if (!Number.isInteger(pace) || pace < PACES[0] || pace > PACES[1]) {
      problem.textContent = `a bot's pace: ${PACES[0]} to ${PACES[1]} moves a minute`;
      return null;
    }
    return Array.from({ length: count }, () => ({ level, moves_per_min: pace }));
  }

  /** POST /matches with `settings`: the created match ({code, host_token, ...}) with its host token kept, or
      null after `problem` (an element) was told why not. */
  /** FTR.createMatch, its refusal told in `problem` (an element): the answer, or null. */
  async function createMatch(settings, problem) {
    try {
      return await FTR.createMatch(settings);
    } catch (error) {
      problem.textContent = error.message;
      return null;
    }
  }

  $("create").addEventListener("submit", async (event) => {
    event.preventDefault();
    $("create-error").textContent = "";
    const bots = botsChosen($("bot-level").value, Number($("bot-count").value), Number($("bot-pace").value),
                            $("create-error"));
    const seed = gameNumber($("seed"), $("create-error"), "a new deal");
    if (!bots || seed === null) return;
    // The players field counts the people; the server's `players` counts every seat, bots included.
    const settings = {
      variant: $("variant").value, players: Number($("players").value) + bots.length,
      time_limit_s: Number($("time-limit").value) * 60,
      undo: $("undo").value, hints: $("hints").checked, solvable_only: $("solvable").checked && !$("solvable").disabled,
      autoplay: $("autoplay").checked,
    };
    if (bots.length) settings.bots = bots;
    if (seed) settings.seed = seed;  // empty: the server draws the deal
    $("create-button").disabled = true;
    const created = await createMatch(settings, $("create-error"));
    $("create-button").disabled = false;
    if (created) location.href = `/join/${encodeURIComponent(created.code)}`;
  });

  // ------------------------------------------------------------------ play alone

  /** "Race my best on this deal" is offered for a name this browser holds the key of: a name with games. */
  function offerGhost() {
    const held = FTR.heldName($("alone-name").value.trim());
    $("alone-ghost-line").hidden = !held;
    if (!held) $("alone-ghost").checked = false;
  }
  $("alone-name").addEventListener("input", offerGhost);
  offerGhost();

  $("alone").addEventListener("submit", async (event) => {
    event.preventDefault();
    $("alone-error").textContent = "";
    let number = gameNumber($("alone-seed"), $("alone-error"), "a random one");
    const name = $("alone-name").value.trim();
    const bots = botsChosen($("alone-bot-level").value, 1, Number($("alone-bot-pace").value), $("alone-error"));
    if (number === null || !bots) return;
    if (!name) {  // only spaces: the form's `required` lets them through
      $("alone-error").textContent = "type your name: the game goes into its history and records";
      return;
    }
    if (!number) {  // a random number, shown: the player can play or share this deal again
      number = String(1 + crypto.getRandomValues(new Uint32Array(1))[0] % (RANDOM_NUMBERS - 1));
      $("alone-seed").value = number;
    }
    const settings = { variant: $("alone-variant").value, players: 1 + bots.length, seed: number, solvable_only: false,
                       undo: "full", hints: true, time_limit_s: 0 };
    if (bots.length) settings.bots = bots;
    if ($("alone-ghost").checked) settings.ghost = { name: FTR.heldName(name) || name };
    $("alone-button").disabled = true;
    const created = await createMatch(settings, $("alone-error"));
    $("alone-button").disabled = false;
    if (!created) return;
    localStorage.setItem("ftr:name", name);
    // The play page joins under this name and says ready at once (play.js), and shows the game number.
    sessionStorage.setItem("ftr:alone", JSON.stringify({ code: created.code, name, number }));
    location.href = `/join/${encodeURIComponent(created.code)}`;
  });

  // ------------------------------------------------------------------ bots, where the server has them

  /** The levels of GET /bots as options of `select` (after its "none"); the pickers stay hidden when the
      server has no bots (404, or no answer). */
  async function offerBots() {
    const { status, body } = await FTR.getJSON("/bots").catch(() => ({ status: 0, body: null }));
    const levels = status === 200 && body && Array.isArray(body.levels) ? body.levels : [];
    if (!levels.length) return;
    for (const select of [$("bot-level"), $("alone-bot-level")]) {
      select.append(...levels.map((level) => FTR.el("option", { value: level.level, text: level.label || level.level,
                                                                 title: level.about || "" })));
    }
    $("create-bots").hidden = false;
    $("alone-bots").hidden = false;
  }
  // How many bots and their pace mean something once a level is chosen.
  for (const [level, fields] of [["bot-level", ["bot-count", "bot-pace"]], ["alone-bot-level", ["alone-bot-pace"]]]) {
    const chosen = () => { for (const field of fields) $(field).disabled = !$(level).value; };
    $(level).addEventListener("change", chosen);
    chosen();
  }
  offerBots();

  const code = () => $("code").value.trim();
  $("go").addEventListener("submit", (event) => {
    event.preventDefault();
    if (code()) location.href = "/join/" + encodeURIComponent(code());
  });
  $("go-watch").addEventListener("click", () => { if (code()) location.href = "/watch/" + encodeURIComponent(code()); });

  // The names this browser races as (it holds their keys): the last one used first.
  const last = localStorage.getItem("ftr:name") || "";
  const names = Object.keys(FTR.playerKeys()).sort((a, b) => (b === last) - (a === last) || a.localeCompare(b));
  $("my-pages").hidden = !names.length;
  $("my-page-links").replaceChildren(...names.flatMap((name, i) => [i ? ", " : "",
    FTR.el("a", { href: FTR.playerPath(name), text: `${name}'s page →` })]));
})();
