/**
 * chat.js — the table's chat box: the lines the server sends (`chat` messages and the
 * snapshot's recent `chat`), a line to write, and a mute per player.
 *
 * Text goes on screen with textContent only. A line from a muted player shows as such;
 * a line kept from spectators shows that one was written. Muting (and unmuting) is a
 * command: the server sends that player's later lines as muted, and this page hides the
 * ones already on screen. The dealer-messages switch hides the hand log's result lines
 * (who won what), remembered in this browser.
 */

const MAX_LINES = 200;
const DEALER_KEY = "poker-room.dealer-lines";

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

export class Chat {
  constructor(root, { send, showError, username, log }) {
    this.list = root.querySelector("#chat-lines");
    this.form = root.querySelector("#chat-form");
    this.input = root.querySelector("#chat-text");
    this.mutedBox = root.querySelector("#chat-muted");
    this.send = send;
    this.showError = showError;
    this.username = username;
    this.lines = [];
    this.muted = new Set();
    this.form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.write();
    });
    const dealer = root.querySelector("#dealer-lines");
    dealer.checked = localStorage.getItem(DEALER_KEY) !== "off";
    log.classList.toggle("no-dealer", !dealer.checked);
    dealer.addEventListener("change", () => {
      localStorage.setItem(DEALER_KEY, dealer.checked ? "on" : "off");
      log.classList.toggle("no-dealer", !dealer.checked);
    });
  }

  /** A snapshot: its recent lines replace what is on screen. */
  reset(lines, muted) {
    this.lines = [...lines];
    this.muted = new Set(muted || []);
    this.render();
  }

  add(message) {
    this.lines.push(message);
    this.lines = this.lines.slice(-MAX_LINES);
    this.render();
  }

  setSeated(seated) {
    this.input.disabled = !seated;
    this.form.querySelector("button").disabled = !seated;
    this.input.placeholder = seated ? "Say something nice…" : "Take a seat to chat";
  }

  async write() {
    const text = this.input.value.trim();
    if (!text) return;
    const answer = await this.send("chat", { text });
    if (answer.type === "error") {
      this.showError(answer.message);
      return;
    }
    this.input.value = "";
  }

  async mute(player, on) {
    const answer = await this.send("mute", { player, on });
    if (answer.type === "error") {
      this.showError(answer.message);
      return;
    }
    if (on) this.muted.add(player);
    else this.muted.delete(player);
    this.render();
  }

  render() {
    const items = this.lines.map((line) => this.item(line));
    this.list.replaceChildren(...items);
    this.list.scrollTop = this.list.scrollHeight;
    this.mutedBox.replaceChildren();
    for (const player of [...this.muted].sort()) {
      const button = el("button", "link", `${player} ✕`);
      button.type = "button";
      button.title = `Read ${player}'s chat again`;
      button.dataset.unmute = player;
      button.addEventListener("click", () => this.mute(player, false));
      this.mutedBox.append(button);
    }
    this.mutedBox.hidden = this.muted.size === 0;
  }

  item(line) {
    const li = el("li", "chat-line");
    li.dataset.id = String(line.id);
    if (line.hidden) {
      li.classList.add("chat-hidden");
      li.textContent = "A player wrote (chat is for seated players at this table).";
      return li;
    }
    if (line.muted || this.muted.has(line.player)) {
      li.classList.add("chat-muted");
      li.textContent = `${line.player}: (muted)`;
      return li;
    }
    li.append(el("strong", "chat-who", line.player), document.createTextNode(`: ${line.text}`));
    if (this.username && line.player !== this.username) {
      const mute = el("button", "link chat-mute", "Mute");
      mute.type = "button";
      mute.dataset.mute = line.player;
      mute.setAttribute("aria-label", `Mute ${line.player}`);
      mute.addEventListener("click", () => this.mute(line.player, true));
      li.append(" ", mute);
    }
    return li;
  }
}
