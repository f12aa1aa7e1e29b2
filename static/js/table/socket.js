/**
 * socket.js — the table's WebSocket: connect, number commands, check event versions,
 * resynchronise, reconnect.
 *
 * Protocol (tables/consumers.py): on connect the server sends a `snapshot` carrying the
 * stream version `v`; every later event carries the next `v` (a command's events come in
 * one frame, as a JSON array in order; one event alone as itself). An event with a `v` we
 * already have is dropped; a jump in `v` means a message was lost (the channel layer
 * delivers at most once), so we ask `{"cmd": "snapshot"}` and ignore events until it
 * arrives. Commands carry an increasing `seq` per connection and are answered with
 * `ack` or `error` for that `seq`: `send()` returns a promise of that answer.
 * A dropped connection reconnects by itself with exponential backoff (1 s … 15 s) and
 * starts again from the fresh snapshot. A close with 4429 (too many table sockets from
 * this player or address, or connecting too fast) is said on the page and tried again
 * only after LIMITED_RETRY_SECONDS. A close with 4401 (the session ended: logged out, a
 * password changed, the account closed) is said on the page and not retried: the player
 * signs in again. A `server_error` answer (the room's database or Redis failed) may hide
 * a command carried out with its events lost: we resynchronise, retrying the snapshot
 * every second while the room cannot answer it.
 */

const RESYNC_RETRY_MS = 1000;

const BACKOFF_SECONDS = [1, 2, 4, 8, 15];

// After a 4429 close: reconnecting at once would only be refused again.
const LIMITED_RETRY_SECONDS = 30;

export class TableSocket {
  /**
   * @param {string} path  e.g. "/ws/tables/3/"
   * @param {object} on    callbacks: snapshot(msg), event(msg), status(state, detail), error(msg)
   */
  constructor(path, on) {
    this.url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${path}`;
    this.on = on;
    this.ws = null;
    this.seq = 0;
    this.version = null;
    this.resyncing = false;
    this.pending = new Map();
    this.attempt = 0;
    this.retryTimer = null;
    this.closedForGood = false;
    window.addEventListener("online", () => this.retryNow());
  }

  connect() {
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.on.status(this.attempt ? "reconnecting" : "connecting", {});
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.addEventListener("open", () => {
      this.seq = 0;
      this.version = null;
      this.resyncing = true; // until the connect snapshot arrives
    });
    ws.addEventListener("message", (e) => this.receive(e.data));
    ws.addEventListener("close", (e) => this.closed(ws, e));
  }

  get connected() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN && this.version !== null;
  }

  /** Send a command; resolves with the server's `ack` or `error` message. */
  send(cmd, fields = {}) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
      return Promise.resolve({
        type: "error", code: "disconnected",
        message: "Not connected to the table: wait for the connection to come back and try again.",
      });
    }
    this.seq += 1;
    const seq = this.seq;
    const answer = new Promise((resolve) => this.pending.set(seq, resolve));
    this.ws.send(JSON.stringify({ cmd, seq, ...fields }));
    return answer;
  }

  receive(text) {
    let frame;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    // A command's stream messages come in one frame, as an array, in order.
    for (const msg of Array.isArray(frame) ? frame : [frame]) this.handle(msg);
  }

  handle(msg) {
    if (msg === null || typeof msg !== "object") return;
    if (msg.type === "ack" || msg.type === "error") {
      const resolve = this.pending.get(msg.seq);
      if (resolve) {
        this.pending.delete(msg.seq);
        resolve(msg);
      } else if (msg.type === "error") {
        this.on.error(msg);
      }
      if (msg.code === "server_error" && !this.resyncing) this.resync();
      return;
    }
    if (msg.type === "snapshot") {
      this.version = msg.v;
      this.resyncing = false;
      if (this.attempt) this.attempt = 0;
      this.on.status("open", {});
      this.on.snapshot(msg);
      return;
    }
    if (typeof msg.v !== "number" || this.resyncing || this.version === null) return;
    if (msg.v <= this.version) return; // already part of the snapshot we hold
    if (msg.v !== this.version + 1) {
      this.resync();
      return;
    }
    this.version = msg.v;
    this.on.event(msg);
  }

  /** A message was lost: start again from a snapshot. */
  resync() {
    this.resyncing = true;
    this.on.status("resyncing", {});
    const ws = this.ws;
    this.send("snapshot").then((answer) => {
      if (answer.type !== "error") return;
      if (answer.code === "server_error" || answer.code === "rate_limited") {
        // The room cannot answer yet: ask again shortly, on this same connection.
        setTimeout(() => { if (this.ws === ws && this.resyncing) this.resync(); }, RESYNC_RETRY_MS);
        return;
      }
      this.on.error(answer);
    });
  }

  closed(ws, event) {
    if (ws !== this.ws) return;
    for (const resolve of this.pending.values()) {
      resolve({ type: "error", code: "disconnected", message: "The connection was lost before the table answered." });
    }
    this.pending.clear();
    this.version = null;
    if (event.code === 4404) {
      this.closedForGood = true;
      this.on.status("gone", {});
      return;
    }
    if (event.code === 4401) {
      this.closedForGood = true;
      this.on.status("signed_out", {});
      return;
    }
    const limited = event.code === 4429;
    const delay = limited
      ? LIMITED_RETRY_SECONDS
      : BACKOFF_SECONDS[Math.min(this.attempt, BACKOFF_SECONDS.length - 1)];
    this.attempt += 1;
    this.on.status(limited ? "limited" : "lost", { seconds: delay, attempt: this.attempt });
    this.retryTimer = setTimeout(() => this.connect(), delay * 1000 * (0.8 + Math.random() * 0.4));
  }

  retryNow() {
    if (this.retryTimer && !this.closedForGood) this.connect();
  }

  /** Drop the connection as a network failure would (used by tests and the debug console). */
  drop() {
    if (this.ws) this.ws.close(4000, "dropped");
  }
}
