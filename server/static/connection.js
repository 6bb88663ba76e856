/* The play page's one WebSocket to /play (protocol/README.md): hello and version, join or resume, the
   sequence numbers of play/resign and of hint, ping for the server's clock, and reconnecting with
   backoff and jitter (as client_cli/server_link.py). A join sends the player key this browser holds for the
   name (FTR.playerKey), and a join that claimed the name keeps the key it brings. Frames are msgpack maps (the
   vendored @msgpack/msgpack). It knows no rules and keeps no page state: every frame goes to onFrame. */
"use strict";

const FTRConnection = (() => {
  const PROTOCOL_VERSION = 3;
  const CLIENT = "forty-thieves-page";
  const PING_EVERY_MS = 5000;
  /** Reconnect delays as client_cli.server_link.backoff: base * 2**n capped, times a jitter in [0.5, 1.5). */
  function* backoff(base = 250, cap = 5000) {
    for (let attempt = 0; ; attempt++) yield Math.min(cap, base * 2 ** attempt) * (0.5 + Math.random());
  }
  /** Close codes after which reconnecting cannot help (4000 replaced, 4001 version, 4004 the match is gone). */
  const FINAL_CLOSE = new Set([4000, 4001, 4004]);

  const storageKey = (code) => `ftr:player:${code}`;

  /** The player's saved {name, token} for match `code` (local storage), or null. */
  function savedPlayer(code) {
    try { return JSON.parse(localStorage.getItem(storageKey(code)) || "null"); } catch (error) { return null; }
  }
  function savePlayer(code, name, token) {
    localStorage.setItem(storageKey(code), JSON.stringify({ name, token }));
  }
  function hostToken(code) { return localStorage.getItem(`ftr:host:${code}`) || ""; }
  function saveHostToken(code, token) { if (token) localStorage.setItem(`ftr:host:${code}`, token); }

  /**
   * new Connection(code, {onFrame(frame), onStatus(status, detail)}); status is "connecting", "open",
   * "closed" (will retry) or "gone" (will not: replaced, version, the match lost, or closed by the page).
   * join(name) / resume() / ready() / start() / play(command) / resign() / hint() / rematch() / restart() send;
   * numbered frames go one at a time (the next once the one before is answered), and one sent but not
   * answered when the connection drops is sent again under the same seq (never applied twice).
   */
  class Connection {
    constructor(code, handlers) {
      this.code = code;
      this.handlers = handlers;
      this.ws = null;
      this.welcomed = false;
      this.seq = 0;          // last play/resign seq accepted
      this.hints = 0;        // last hint seq answered
      this.inflight = null;  // {type, seq, command?} sent, not answered
      this.queue = [];       // numbered requests waiting for the one in flight
      this.intent = null;    // {type: "join", name} until joined; then resume on every reconnect
      this.delays = backoff();
      this.timer = null;
      this.pinger = null;
      this.closedByPage = false;
      this.lastPing = 0;
    }

    url() { return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/play`; }

    open() {
      clearTimeout(this.timer);
      this.handlers.onStatus("connecting");
      const ws = this.ws = new WebSocket(this.url());
      ws.binaryType = "arraybuffer";
      ws.onopen = () => this.sendRaw({ type: "hello", version: PROTOCOL_VERSION, client: CLIENT });
      ws.onmessage = (event) => {
        if (typeof event.data === "string") return;
        let frame;
        try { frame = MessagePack.decode(new Uint8Array(event.data)); } catch (error) { return; }
        if (frame && typeof frame === "object") this.receive(frame);
      };
      ws.onclose = (event) => {
        if (this.ws !== ws) return;
        clearInterval(this.pinger);
        this.welcomed = false;
        if (this.closedByPage || FINAL_CLOSE.has(event.code)) {
          this.handlers.onStatus("gone", event.code);
          return;
        }
        this.handlers.onStatus("closed", event.code);
        this.timer = setTimeout(() => this.open(), this.delays.next().value);
      };
    }

    close() {
      this.closedByPage = true;
      clearTimeout(this.timer);
      clearInterval(this.pinger);
      if (this.ws) this.ws.close(1000, "bye");
    }

    sendRaw(message) {
      if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(MessagePack.encode(message));
    }

    receive(frame) {
      switch (frame.type) {
        case "welcome":
          this.welcomed = true;
          this.delays = backoff();
          this.handlers.onStatus("open");
          this.ping();
          clearInterval(this.pinger);
          this.pinger = setInterval(() => this.ping(), PING_EVERY_MS);
          this.sayWho();
          break;
        case "joined":
          savePlayer(frame.match, frame.name, frame.token);
          // This join claimed the name: its key goes with every later join of it (the recovery code is the
          // page's to show once, never kept).
          if (frame.player_key) FTR.keepPlayerKey(frame.name, frame.player_key);
          this.code = frame.match;  // the server's spelling of the code: a reconnect resumes under it
          this.intent = { type: "resume" };
          break;
        case "started":
          this.seq = Math.max(this.seq, frame.seq || 0);
          this.hints = Math.max(this.hints, frame.hints || 0);
          this.resend();
          break;
        case "position":
          this.seq = Math.max(this.seq, frame.seq);
          if (this.inflight && this.inflight.type !== "hint" && frame.seq >= this.inflight.seq) this.answered();
          break;
        case "rejected":
          if (this.inflight && this.inflight.type !== "hint" && frame.seq === this.inflight.seq) this.answered();
          break;
        case "suggestion":
          this.hints = Math.max(this.hints, frame.seq);
          if (this.inflight && this.inflight.type === "hint") this.answered();
          break;
        case "error":
          // An error refusing a numbered frame carries its seq (that number is not used up: the next frame
          // carries it again). One without a seq answers something else (a ready, a start, a join); a rate
          // limit may have dropped the frame in flight unread, so it goes again a little later.
          if (this.inflight && frame.seq === this.inflight.seq) this.answered();
          else if (this.inflight && frame.code === "rate_limited") setTimeout(() => this.resend(), 500);
          break;
        case "pong":
          frame.rtt_ms = Date.now() - this.lastPing;
          frame.local_ms = Date.now() - frame.rtt_ms / 2;
          break;
        default:
          break;
      }
      this.handlers.onFrame(frame);
    }

    ping() {
      this.lastPing = Date.now();
      this.sendRaw({ type: "ping", nonce: this.lastPing });
    }

    /** After welcome: join (the page asked to) or resume (a token is saved), else wait for join(). */
    sayWho() {
      const saved = savedPlayer(this.code);
      if (this.intent && this.intent.type === "join" && !saved) {
        const name = this.intent.name;
        this.sendRaw({ type: "join", match: this.code, name, player_key: FTR.playerKey(name) });
      } else if (saved) {
        this.sendRaw({ type: "resume", match: this.code, token: saved.token });
      }
    }

    join(name) {
      this.intent = { type: "join", name };
      if (this.welcomed) this.sayWho();
      else if (!this.ws) this.open();
    }

    ready() { this.sendRaw({ type: "ready" }); }
    start() { this.sendRaw({ type: "start", host_token: hostToken(this.code) }); }
    rematch() { this.sendRaw({ type: "rematch" }); }
    /** Alone (one player, not a daily attempt): end this game and play its deal again (answer: next_round). */
    restart() { this.sendRaw({ type: "restart" }); }

    play(command) { this.numbered({ type: "play", command }); }
    resign() { this.numbered({ type: "resign" }); }
    hint() { this.numbered({ type: "hint" }); }

    /** True while a play or resign waits for its answer, or waits behind another numbered frame. */
    moving() { return [this.inflight, ...this.queue].some((request) => request && request.type !== "hint"); }

    numbered(request) {
      this.queue.push(request);
      if (!this.inflight) this.next();
    }

    next() {
      const request = this.queue.shift();
      if (!request) return;
      const seq = request.type === "hint" ? this.hints + 1 : this.seq + 1;
      this.inflight = { ...request, seq };
      this.sendRaw(this.inflight);
    }

    answered() {
      this.inflight = null;
      this.next();
    }

    /** Send the unanswered frame again under its seq (after a resume: the server acknowledges a retry). */
    resend() {
      if (this.inflight) {
        const current = this.inflight.type === "hint" ? this.hints : this.seq;
        if (this.inflight.seq <= current) { this.answered(); return; }
        this.sendRaw(this.inflight);
      } else {
        this.next();
      }
    }
  }

  return { Connection, savedPlayer, savePlayer, hostToken, saveHostToken, backoff, PROTOCOL_VERSION };
})();
