/* /groups/{group} and /groups/{group}/join: a group of named players, its daily board and its head-to-head.
   Data: GET /groups/{group} (JSON: name, owner, members, join_url, head_to_head, today, variants) and per
   variant GET /groups/{group}/daily/{date}/{variant} (the day's ended attempts of members only, ranked among
   them, each with its place on the day's public board), re-read on the day's events while the day goes on.
   Joining: POST /groups/{group}/members with a player key this browser holds (local storage "ftr:players",
   common.js), or with a name claimed here first (POST /players, whose recovery code is shown once); leaving:
   DELETE /groups/{group}/members/{name}. The join link is shared with the phone's share sheet, else copied
   (daily-share.js). Every name is any Unicode: it goes into the page as text, never as markup. */
"use strict";

(() => {
  const { el, formatMs, getJSON, plural, STATUS } = FTR;
  const $ = (id) => document.getElementById(id);
  const DATE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;

  const parts = location.pathname.split("/").filter(Boolean);
  const id = FTR.pathSegment(1);  // "" for a malformed escape: the page says "No such group"
  const joining = parts[2] === "join";  // the link friends are sent: Join comes first
  const asked = new URLSearchParams(location.search).get("date");
  const groupPath = `/groups/${encodeURIComponent(id)}`;
  let group = null, date = null, confirmingLeave = false;
  const followed = [];  // the day's event streams of the boards shown (closed when the day shown changes)

  function say(text, kind) {
    $("message").textContent = text;
    $("message").className = "message" + (kind ? " " + kind : "");
  }

  const fold = (name) => name.toLocaleLowerCase();

  // Keys held here that the server refused (a new key made on another device, the name claimed anew): their
  // names are not this browser's on this page (checkKeys).
  const refusedKeys = new Set();
  const heldNames = () => Object.entries(FTR.playerKeys()).filter(([, key]) => !refusedKeys.has(key))
    .map(([name]) => name);

  /** The names this browser holds a key of that are members, the last one it played under first. */
  function ownMembers() {
    if (!group) return [];
    const held = heldNames();
    const last = localStorage.getItem("ftr:name") || "";
    const members = new Map(group.members.map((name) => [fold(name), name]));
    return held.filter((name) => members.has(fold(name)))
      .sort((a, b) => (fold(b) === fold(last)) - (fold(a) === fold(last)))
      .map((name) => members.get(fold(name)));
  }

  /** The names this browser holds a key of that are not members (the last one played under first). */
  function otherHeld() {
    const members = new Set(group.members.map(fold));
    const last = localStorage.getItem("ftr:name") || "";
    return heldNames().filter((name) => !members.has(fold(name)))
      .sort((a, b) => (fold(b) === fold(last)) - (fold(a) === fold(last)));
  }

  const dayOffset = (day, days) => {
    const at = new Date(`${day}T00:00:00Z`);
    at.setUTCDate(at.getUTCDate() + days);
    return at.toISOString().slice(0, 10);
  };

  // ------------------------------------------------------------------ joining and leaving

  /** What a refused join means for `name`, in words (the server's code; its message for any other). */
  function joinProblem(status, body, name) {
    const code = body && body.error;
    if (code === "no_group" || status === 404 && !code) {
      return "This group is gone (its last member left) or the link is mistyped: ask for a new link.";
    }
    if (code === "group_full") return `This group is full (${plural(group.members.length, "member")}): ask a member `
      + "to make another one.";
    if (code === "too_many_groups") return `${name} is in as many groups as a name may be: leave one of them first `
      + "(your page lists them).";
    if (code === "bad_token") return `This browser's key for ${name} is not the one the server holds (a new key was `
      + `made on another device?): recover the name on its page with its recovery code, then join.`;
    if (code === "no_player") return `Nobody has the name ${name} on this server any more: join with another name.`;
    return (body && body.message) || `The server refused (${status}); try again later.`;
  }

  function joinRefused(text, name) {
    const problem = $("join-problem");
    problem.replaceChildren(text);
    if (name && /recover/.test(text)) {
      problem.append(" ", el("a", { href: FTR.playerPath(name), text: `${name}'s page →` }));
    }
  }

  async function join(name) {
    $("join-problem").textContent = "";
    const key = FTR.playerKey(name);
    let response;
    try {
      response = await fetch(`${groupPath}/members`, { method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json", Authorization: `Bearer ${key}` },
        body: JSON.stringify({ player: name, player_key: key }) });
    } catch (error) { joinRefused("The server is out of reach: try again in a moment."); return; }
    const body = await response.json().catch(() => null);
    if (response.status !== 200 || !body) { joinRefused(joinProblem(response.status, body, name), name); return; }
    localStorage.setItem("ftr:name", FTR.heldName(name) || name);
    if (joining) history.replaceState(null, "", groupPath + location.search);  // in: the group's own page now
    group = body;
    say(`You are in ${group.name} as ${name}.`, "hint");
    render();
    loadBoards();
  }

  /** A name typed in the box: claimed first when this browser holds no key of it (POST /players, its recovery
      code shown once), then joined. */
  async function joinNew(event) {
    event.preventDefault();
    const typed = $("join-name").value.trim();
    if (!typed) return;
    $("join-problem").textContent = "";
    const held = FTR.heldName(typed);
    if (held) { await join(held); return; }
    let response;
    try {
      response = await fetch("/players", { method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ name: typed }) });
    } catch (error) { joinRefused("The server is out of reach: try again in a moment."); return; }
    const body = await response.json().catch(() => ({}));
    if (response.status === 409) {
      joinRefused(`The name ${typed} is taken on this server. If it is yours, recover it on its page with its `
        + "recovery code; else pick another name.", typed);
      return;
    }
    if (response.status !== 201 || !body.player_key) {
      joinRefused(body.message || `The server refused the name (${response.status}).`);
      return;
    }
    FTR.keepPlayerKey(body.name, body.player_key);
    localStorage.setItem("ftr:name", body.name);
    $("claim-home").replaceChildren(FTR.recoveryPanel(body.name, body.recovery_code));
    $("join-name").value = "";
    await join(body.name);
  }

  async function leave() {
    const [name] = ownMembers();
    confirmingLeave = false;
    if (!name) { render(); return; }
    let response;
    try {
      response = await fetch(`${groupPath}/members/${encodeURIComponent(name)}`, { method: "DELETE",
        headers: { Authorization: `Bearer ${FTR.playerKey(name)}`, Accept: "application/json" } });
    } catch (error) { say("The server is out of reach: try again in a moment.", "error"); render(); return; }
    if (response.status !== 204) {
      const body = await response.json().catch(() => null);
      say(body && body.error === "bad_token" ? `This browser's key for ${name} is not the one the server holds: `
        + "recover the name on its page, then leave." : (body && body.message) || `refused (${response.status})`,
      "error");
      render();
      return;
    }
    const left = group.name;
    if (!(await load())) {
      if (!group) say(`You left ${left}: it had no other member, so it is gone.`, "hint");
      return;
    }
    say(`${name} left ${left}.`, "hint");
  }

  // ------------------------------------------------------------------ the parts of the page

  function renderMembers() {
    const mine = new Set(ownMembers());
    $("members-panel").hidden = false;
    $("members-note").textContent = plural(group.members.length, "member");
    $("members").replaceChildren(...group.members.map((name) => el("li", { "data-name": name },
      el("a", { class: "who", href: FTR.playerPath(name), text: name }),
      name === group.owner ? el("span", { class: "badge", text: "made it" }) : "",
      mine.has(name) ? el("span", { class: "badge you", text: "you" }) : "")));
    const [me] = mine;
    $("you-row").hidden = !me || confirmingLeave;
    $("confirm-leave").hidden = !me || !confirmingLeave;
    if (me) {
      $("you-line").textContent = `You are in this group as ${me}.`;
      $("confirm-leave-text").textContent = `Leave ${group.name}? ${me} comes off its board and its head-to-head; `
        + (group.members.length === 1 ? "you are its last member, so the group is gone after."
          : "the link joins again.");
    }
  }

  function renderJoin() {
    const inside = ownMembers().length > 0;
    const panel = $("join-panel");
    panel.hidden = inside;
    if (inside) return;
    // On the join link the panel comes first; on the group's page after the members.
    if (joining) $("boards").before(panel); else $("members-panel").after(panel);
    $("join-title").textContent = `Join ${group.name}`;
    const others = otherHeld();
    $("join-held").replaceChildren(...others.slice(0, 3).map((name) => {
      const button = el("button", { type: "button", text: `Join as ${name}` });
      button.addEventListener("click", () => join(name));
      return button;
    }));
    $("join-held").hidden = !others.length;
    $("join-form").hidden = false;
    $("join-new").textContent = others.length ? "Join with this name" : "Join";
    $("join-name-label").textContent = others.length ? "Another name" : "Name";
  }

  let shareButton = null;
  function renderInvite() {
    $("invite-panel").hidden = false;
    // A group of one has one thing to do, to be sent: its link comes before the board then.
    const invite = $("invite-panel");
    if (group.members.length === 1) $("boards").before(invite); else $("rivals-panel").before(invite);
    $("join-link").href = group.join_url;
    $("join-link").textContent = group.join_url;
    if (!shareButton) {
      shareButton = FTRDaily.shareButton(() => group && group.join_url);
      shareButton.id = "share-link";
      $("invite-row").append(shareButton);
    }
  }

  function renderRivals() {
    const pairs = group.head_to_head || [];
    $("rivals-panel").hidden = !pairs.length;
    const who = (name) => el("a", { href: FTR.playerPath(name), text: name });
    $("rivals-body").replaceChildren(...pairs.map((h) => el("tr", { "data-a": h.a, "data-b": h.b },
      el("td", { class: "pair" }, who(h.a), el("span", { class: "vs", text: " – " }), who(h.b)),
      el("td", { class: "num", text: String(h.races) }),
      el("td", { class: "num score", text: `${h.a_wins}–${h.b_wins}` }),
      el("td", { class: "num", text: String(h.draws) }))));
  }

  function render() {
    if (!group) return;
    $("state").textContent = ownMembers().length ? "your group" : "group";
    $("state").className = "state" + (ownMembers().length ? " finished" : "");
    $("headline").textContent = group.name;
    document.title = `${group.name} · Forty Thieves Race`;
    $("subline").textContent = `${plural(group.members.length, "member")} · made by ${group.owner}`;
    $("chips").replaceChildren(el("span", { class: "chip" }, "today ", el("b", { text: group.today })));
    renderMembers();
    renderJoin();
    renderInvite();
    renderRivals();
  }

  // ------------------------------------------------------------------ the day's boards

  function rowOf(entry, mine) {
    return el("tr", { "data-name": entry.name, class: mine.has(entry.name) ? "mine" : "" },
      el("td", {}, el("span", { class: `rank ${entry.status === "won" ? "r" + entry.rank : ""}`, text: entry.rank })),
      el("td", { class: "who" }, el("a", { href: FTR.playerPath(entry.name), text: entry.name }), " ",
        el("span", { class: `pill ${entry.status}`, text: STATUS[entry.status] || entry.status })),
      el("td", { class: "num", text: formatMs(entry.time_ms || 0, true) }),
      el("td", { class: "num", text: String(entry.moves) }),
      el("td", { class: "num board-rank", text: `#${entry.board_rank}` }));
  }

  function boardPanel(variant) {
    const tbody = el("tbody");
    const note = el("span", { class: "note", text: "" });
    const empty = el("div", { class: "empty", hidden: true });
    const table = el("div", { class: "scroll-x" }, el("table", { class: "standings group-board",
      "aria-label": `${variant} group board` },
    el("thead", {}, el("tr", {}, el("th", { text: "#" }), el("th", { text: "Player" }),
      el("th", { class: "num", text: "Time" }), el("th", { class: "num", text: "Moves" }),
      el("th", { class: "num", title: "place on the day's board of everyone", text: "Board" }))), tbody));
    const panel = el("section", { class: "panel", id: `board-${variant}`, "data-variant": variant },
      el("h3", {}, variant, note), table, empty);
    let pending = null;
    async function load() {
      let answer;
      try {
        answer = await getJSON(`${groupPath}/daily/${date}/${encodeURIComponent(variant)}`);
      } catch (error) { return; }  // out of reach: the board shown stays; the next event reads again
      const { status, body } = answer;
      if (status !== 200 || !body) {
        table.hidden = true;
        empty.hidden = false;
        empty.textContent = body && body.error === "no_day" ? "No daily challenge that day."
          : body && body.error === "no_variant" ? `No ${variant} daily that day.`
            : (body && body.message) || "This board is not available; try again later.";
        note.textContent = "";
        return;
      }
      const mine = new Set(ownMembers());
      tbody.replaceChildren(...body.entries.map((entry) => rowOf(entry, mine)));
      table.hidden = !body.entries.length;
      empty.hidden = body.entries.length > 0;
      const today = date === group.today;
      empty.replaceChildren(today ? "No member has ended today's attempt yet: " : "No member played that day.",
        today ? el("a", { href: `/daily#board-${variant}`, text: "play it on the daily page" }) : "");
      note.textContent = `${body.total} of ${plural(group.members.length, "member")} · `
        + (body.final ? "final" : "live");
    }
    load();
    if (date === group.today) {
      followed.push(FTR.follow(`/daily/${date}/${encodeURIComponent(variant)}/events`, {
        attempt() { clearTimeout(pending); pending = setTimeout(load, 600); },
      }));
    }
    return panel;
  }

  function loadBoards() {
    if (!group) return;
    date = asked && DATE.test(asked) && asked <= group.today ? asked : group.today;
    followed.splice(0).forEach((stream) => stream.close());
    $("boards").hidden = false;
    $("boards-title").textContent = date === group.today ? `Group board · today` : `Group board · ${date}`;
    const previous = dayOffset(date, -1), next = dayOffset(date, 1);
    $("previous-day").href = `${groupPath}?date=${previous}`;
    $("previous-day").setAttribute("aria-label", `previous day, ${previous}`);
    $("next-day").hidden = date >= group.today;
    $("next-day").href = next >= group.today ? groupPath : `${groupPath}?date=${next}`;
    $("next-day").setAttribute("aria-label", `next day, ${next}`);
    $("variants").replaceChildren(...group.variants.map(boardPanel));
  }

  /** Whether each member's key held here is still that member's (GET /players/{name} with it answers 403 when
      not): a refused one is no "you", and the page is drawn again (the join panel then offered). */
  async function checkKeys() {
    const keys = ownMembers().map((name) => [name, FTR.playerKey(name)]);
    const answers = await Promise.all(keys.map(([name, key]) => getJSON(`${FTR.playerPath(name)}?limit=1`, key)
      .catch(() => ({ status: 0 }))));
    const refused = keys.filter((_, i) => answers[i].status === 403).map(([, key]) => key);
    refused.forEach((key) => refusedKeys.add(key));
    if (refused.length) render();
  }

  /** GET the group and draw it; false (and the page says why) when there is none or the server is out of
      reach. */
  async function load() {
    let answer;
    try { answer = await getJSON(groupPath); } catch (error) { answer = { status: 0, body: null }; }
    const { status, body } = answer;
    if (status === 404 || !id) {
      group = null;
      $("state").textContent = "no group";
      $("state").className = "state gone";
      $("headline").textContent = "No such group";
      $("subline").textContent = "No group has this link: it may be mistyped, or the group is gone (it goes when "
        + "its last member leaves). Ask a member for the link again.";
      for (const part of ["join-panel", "members-panel", "invite-panel", "boards", "rivals-panel"]) {
        $(part).hidden = true;
      }
      return false;
    }
    if (status !== 200 || !body) {
      $("state").textContent = "unavailable";
      $("subline").textContent = (body && body.message)
        || `The server answered ${status || "nothing"}; try again later.`;
      return false;
    }
    group = body;
    render();
    await checkKeys();
    if (!date) loadBoards();
    const [me] = ownMembers();
    if (joining && me) {  // the link, opened again by a member: the group's own page
      history.replaceState(null, "", groupPath + location.search);
      say(`You are in this group already, as ${me}.`, "hint");
    }
    return true;
  }

  function wire() {
    $("join-form").addEventListener("submit", joinNew);
    $("leave-button").addEventListener("click", () => { confirmingLeave = true; render(); $("leave-no").focus(); });
    $("leave-no").addEventListener("click", () => { confirmingLeave = false; render(); $("leave-button").focus(); });
    $("leave-yes").addEventListener("click", leave);
  }

  wire();
  load();
})();
