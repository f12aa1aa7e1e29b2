/**
 * motion.js — the table's movement: cards dealt to the seats and the board, chips sliding
 * from the bets into the pot and from the pot to each winner, and an all-in runout dealt
 * street by street (each street waits for the one before to land, then a short pause).
 *
 * Everything is short (a quarter to half a second) and skippable: a click on the felt or
 * Escape finishes every movement at once. With `prefers-reduced-motion: reduce` nothing
 * moves at all (here, and in room.css, which stops every animation and transition).
 *
 * The table is redrawn from the model on every event (render.js), so a card's node is
 * made again while it may still be flying in: `card()` remembers when each card's deal
 * started and gives a new node the same animation with a negative delay, so it carries
 * on where the old one was instead of starting over or jumping to the end.
 */

const DEAL_MS = 320; // room.css .deal-in
const STREET_PAUSE_MS = 550; // between the streets of a runout
const CHIP_MS = 420;

export class Motion {
  constructor(root) {
    this.root = root;
    this.felt = root.querySelector("#felt");
    this.query = window.matchMedia("(prefers-reduced-motion: reduce)");
    this.hand = null;
    this.started = new Map(); // card key -> when its deal animation starts (ms)
    this.boardFree = 0; // when the board may show its next street
    this.settling = false;
    this.felt.addEventListener("click", () => this.skip());
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape") this.skip();
    });
  }

  get reduced() {
    return this.query.matches;
  }

  /** A new hand forgets the last one's cards. */
  newHand(hand) {
    if (hand === this.hand) return;
    this.hand = hand;
    this.started.clear();
  }

  /**
   * Animate `node`, the card `key` of this hand, if it is new or still flying in.
   * `board`: a board card, dealt after the street before it has landed; `index` staggers
   * the cards dealt together.
   */
  card(node, key, { board = false, index = 0 } = {}) {
    if (this.reduced) return;
    const now = performance.now();
    let start = this.started.get(key);
    if (start === undefined && this.settling) {
      start = -Infinity; // on screen already when the page (re)joined the table
      this.started.set(key, start);
    }
    if (start === undefined) {
      start = now + index * 70;
      if (board) {
        if (index === 0) this.streetStart = Math.max(now, this.boardFree);
        start = this.streetStart + index * 70;
        this.boardFree = start + DEAL_MS + STREET_PAUSE_MS;
      }
      this.started.set(key, start);
    }
    if (now >= start + DEAL_MS) return;
    node.classList.add("deal-in");
    node.style.animationDelay = `${Math.round(start - now)}ms`;
  }

  /** Draw the table as it is, with no deal movement (a snapshot: joining, reconnecting). */
  still(draw) {
    this.settling = true;
    try {
      draw();
    } finally {
      this.settling = false;
    }
  }

  /** The bets on the felt slide into the pot (call before the bets are redrawn away). */
  chipsToPot() {
    if (this.reduced) return;
    const pot = this.root.querySelector("#pot");
    for (const bet of this.root.querySelectorAll("#seats .bet")) this.fly(bet, pot);
  }

  /** A chip slides from the pot to the winner's seat. */
  chipsToSeat(seat) {
    if (this.reduced) return;
    const target = this.root.querySelector(`#seats .seat[data-seat="${seat}"]`);
    if (target) this.fly(this.root.querySelector("#pot"), target);
  }

  fly(from, to) {
    const box = this.felt.getBoundingClientRect();
    const a = from.getBoundingClientRect();
    const b = to.getBoundingClientRect();
    // An empty pot is a zero-width box: its centre is still where the chips go.
    if (!box.width) return;
    const chip = document.createElement("div");
    chip.className = "chip-fly";
    chip.setAttribute("aria-hidden", "true");
    chip.style.left = `${a.left + a.width / 2 - box.left}px`;
    chip.style.top = `${a.top + a.height / 2 - box.top}px`;
    this.felt.append(chip);
    const dx = b.left + b.width / 2 - (a.left + a.width / 2);
    const dy = b.top + b.height / 2 - (a.top + a.height / 2);
    const flight = chip.animate(
      [
        { transform: "translate(-50%, -50%)", opacity: 1 },
        { transform: `translate(calc(${dx}px - 50%), calc(${dy}px - 50%))`, opacity: 0.2 },
      ],
      { duration: CHIP_MS, easing: "ease-in" },
    );
    flight.finished.then(() => chip.remove(), () => chip.remove());
  }

  /** Finish every movement now. */
  skip() {
    this.boardFree = 0;
    for (const key of this.started.keys()) this.started.set(key, -Infinity);
    for (const animation of document.getAnimations()) animation.finish();
  }
}
