/* A daily attempt's place on its day's board and its line to share, for the daily page, the archive and the
   play page's results. Data: GET /daily/{date}/{variant}/leaderboard?name=N&limit=1, whose `entry` carries the
   place line and the share text as the server builds them (the command line prints the same); re-read when
   the day's event stream says an attempt ended or started. The share text names no card, deal or seed. */
"use strict";

const FTRDaily = (() => {
  const { el, getJSON, follow } = FTR;

  /** Copy `text` to the clipboard: the Clipboard API, else a selected textarea (a page not served over a
      secure context has no navigator.clipboard). Resolves true when copied. */
  async function copyText(text) {
    if (navigator.clipboard && navigator.clipboard.writeText) {
      try { await navigator.clipboard.writeText(text); return true; } catch (error) { /* below */ }
    }
    const area = el("textarea", { "aria-hidden": "true", style: "position:fixed;left:-9999px;top:0" });
    area.value = text;
    document.body.append(area);
    area.select();
    let done = false;
    try { done = document.execCommand("copy"); } catch (error) { done = false; }
    area.remove();
    return done;
  }

  /** A button that shares `text()`: the Web Share sheet where the browser has one (phones), else Copy, which
      says "Copied ✓" for a few seconds (or "Copy failed: select the text"). */
  function shareButton(text) {
    const canShare = typeof navigator.share === "function";
    const label = canShare ? "Share" : "Copy";
    // aria-live: the "Copied ✓" that replaces the label is said, not only shown.
    const button = el("button", { type: "button", class: "share-button", "aria-live": "polite", text: label });
    let reset = null;
    button.addEventListener("click", async () => {
      const value = text();
      if (!value) return;
      if (canShare) {
        try { await navigator.share({ text: value }); } catch (error) { /* dismissed */ }
        return;
      }
      const ok = await copyText(value);
      button.textContent = ok ? "Copied ✓" : "Copy failed: select the text";
      button.classList.toggle("copied", ok);
      clearTimeout(reset);
      reset = setTimeout(() => { button.textContent = label; button.classList.remove("copied"); }, 4000);
    });
    return button;
  }

  /** The place of `name`'s ended attempt on the board of `date` and `variant`: {element, refresh, entry()}.
      The element holds the place line ("#3 of 41 · you beat 73 % of players today"), the name's streak
      ("Streak 5 (best 9) · 1 freeze", as of that day), the share text and its
      Share/Copy button; it stays hidden while the name has no ended attempt. `follow`: re-read on the day's
      events (a page that follows them itself calls refresh). `onEntry(entry, board)`: told of each answer.
      `extra`: an element after the place line (a link); `fallback(board)`: the line while there is no entry
      (the element is then shown with it, without the share); `streak: false` leaves the streak out (a page
      that shows it from elsewhere). */
  function placeView(date, variant, name, { follow: following = false, onEntry = null, extra = null,
                                               fallback = null, streak: withStreak = true } = {}) {
    const base = `/daily/${date}/${encodeURIComponent(variant)}`;
    const line = el("span", { class: "place-line" });
    const streak = el("div", { class: "streak-line" });
    const text = el("pre", { class: "share-text" });
    let current = null, pending = null;
    const button = shareButton(() => current && current.share);
    const element = el("div", { class: "day-place", "data-variant": variant },
      el("div", { class: "place-row" }, line, ...(extra ? [" · ", extra] : [])), streak, text, button);
    element.hidden = true;
    async function refresh() {
      let answer;
      try {
        answer = await getJSON(`${base}/leaderboard?limit=1&name=${encodeURIComponent(name)}`);
      } catch (error) { return; }  // the server out of reach: the place shown stays, the next event reads again
      const { status, body } = answer;
      if (status !== 200) return;
      current = body.entry || null;
      element.hidden = !current && !fallback;
      text.hidden = button.hidden = !current;
      streak.hidden = !current || !withStreak;
      streak.textContent = current ? FTR.streakLine(current) : "";
      line.textContent = current ? current.place : (fallback ? fallback(body) : "");
      text.textContent = current ? current.share : "";
      if (onEntry) onEntry(current, body);
    }
    function soon() { clearTimeout(pending); pending = setTimeout(refresh, 600); }
    refresh();
    if (following) follow(`${base}/events`, { attempt: soon });
    return { element, refresh: soon, entry: () => current };
  }

  return { copyText, shareButton, placeView };
})();
