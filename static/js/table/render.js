/**
 * render.js — the table on screen, built from the model with DOM APIs only (textContent,
 * never innerHTML with server data).
 *
 * Seats sit around the oval, turned so that the viewer's own seat is at the bottom; each
 * shows the name, stack, last action, cards (own face up, others face down until shown),
 * and, when it is that seat's turn, its countdown (bar and seconds) for everyone to see;
 * a player whose connection dropped wears a "Disconnected" badge. Bets sit in front of
 * the seats, the dealer button beside its seat, the board and pots in the middle. New
 * cards are handed to motion.js to be dealt in. `Clock` runs the countdown: action time
 * first, then the time bank (`turn.deadline` already includes it), and names a reconnect
 * bonus ("+20 s reconnect bonus") when the turn's deadline was moved by one.
 */

import { cardElement, handLimitsText, money, winNote } from "./format.js";
import { askedToRunTwice, holeCount, mySeat, potTotal, shownHand, toMatch } from "./store.js";

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

/** Screen position (percent) of the k-th seat from the bottom, clockwise, on an ellipse. */
function around(k, n, rx, ry) {
  const angle = Math.PI / 2 + (2 * Math.PI * k) / n;
  return { left: 50 + rx * Math.cos(angle), top: 50 + ry * Math.sin(angle) };
}

function place(node, pos) {
  node.style.left = `${pos.left.toFixed(2)}%`;
  node.style.top = `${pos.top.toFixed(2)}%`;
}

const STATUS_LABELS = {
  waiting: "Waiting for the big blind",
  sitting_out: "Sitting out",
};

export class TableView {
  constructor(root, { onSeatClick, motion }) {
    this.motion = motion;
    this.root = root;
    this.seatsBox = root.querySelector("#seats");
    this.board = root.querySelector("#board");
    this.secondBoard = root.querySelector("#board-2");
    this.pot = root.querySelector("#pot");
    this.handInfo = root.querySelector("#hand-info");
    this.handLimits = root.querySelector("#hand-limits");
    this.bestHand = root.querySelector("#best-hand");
    this.onSeatClick = onSeatClick;
  }

  render(model, { canSit }) {
    const n = model.table.seats;
    const me = mySeat(model);
    const offset = me ? me - 1 : 0;
    const hand = shownHand(model);
    const live = model.hand;
    if (hand) this.motion.newHand(hand.id);
    const nodes = [];
    for (let number = 1; number <= n; number += 1) {
      const k = (number - 1 - offset + n) % n;
      const seat = model.seats.find((s) => s.seat === number);
      const p = hand ? hand.players.find((q) => q.seat === number) : undefined;
      const node = seat ? this.seatNode(model, seat, p, hand) : this.emptySeat(number, canSit && !me);
      place(node, around(k, n, 44, 41));
      node.dataset.pos = String(k);
      nodes.push(node);
      if (p && p.committed > 0) {
        const bet = el("div", "bet", money(p.committed));
        bet.dataset.seat = String(number);
        bet.setAttribute("aria-label", `${p.player} bet ${money(p.committed)}`);
        place(bet, around(k, n, 28, 24));
        nodes.push(bet);
      }
      if (hand && hand.button === number) {
        const button = el("div", "dealer", "D");
        button.setAttribute("role", "img");
        button.setAttribute("aria-label", "Dealer button");
        place(button, around(k + 0.38, n, 31, 28));
        nodes.push(button);
      }
    }
    this.seatsBox.replaceChildren(...nodes);

    const best = winningCards(hand);
    this.board.replaceChildren(...(hand ? hand.board.map((c, i) => {
      const node = cardElement(c);
      if (best.board.has(c)) node.classList.add("best");
      // The flop's three cards come together; the turn and the river one by one.
      this.motion.card(node, `board:${i}`, { board: true, index: i < 3 ? i : 0 });
      return node;
    }) : []));
    const twice = Boolean(hand && hand.secondBoard);
    const boardName = twice ? "First board" : "Board";
    this.board.setAttribute("aria-label", hand && hand.board.length ? `${boardName}, ${hand.board.length} cards` : "Board, no cards yet");
    this.board.classList.toggle("first-board", twice);
    // Run it twice: the second run's board under the first (the shared cards on both).
    this.secondBoard.hidden = !twice;
    this.secondBoard.replaceChildren(...(twice ? hand.secondBoard.map((c) => {
      const node = cardElement(c);
      if (best.second.has(c)) node.classList.add("best");
      return node;
    }) : []));
    if (twice) this.secondBoard.setAttribute("aria-label", `Second board, ${hand.secondBoard.length} cards`);
    this.renderPot(hand, live);
    const limits = live ? handLimitsText(hand.structure, hand.limits) : "";
    this.handLimits.textContent = limits ? ` · this hand ${limits}` : "";
    this.handLimits.hidden = !limits;
    this.renderBestHand(live);
    this.handInfo.textContent = hand
      ? `Hand #${hand.number}${live ? ` · ${hand.street[0].toUpperCase()}${hand.street.slice(1)}` : " · finished"}`
      : model.seats.length < 2 ? "Waiting for players" : "Next hand soon";
  }

  /** The hand helper: what the viewer holds now, named by the server. */
  renderBestHand(live) {
    const best = live && live.bestHand;
    this.bestHand.hidden = !best;
    this.bestHand.textContent = best
      ? `You have ${best.high}${best.low ? ` · low ${best.low}` : live.game === "omaha8" ? " · no low" : ""}`
      : "";
  }

  renderPot(hand, live) {
    // A finished hand keeps its pot total (and its side pots) on screen, with the rake,
    // until the next hand is dealt.
    this.pot.replaceChildren();
    if (!hand) return;
    const total = potTotal(hand);
    if (total) this.pot.append(el("span", "pot-total", `Pot ${money(total)}`));
    if (hand.pots.length > 1) {
      hand.pots.forEach((pot, i) => {
        this.pot.append(el("span", "pot-side", `${i === 0 ? "Main" : `Side ${i}`} ${money(pot.amount)}`));
      });
    }
    if (!live && hand.rake) this.pot.append(el("span", "pot-side", `Rake ${money(hand.rake)}`));
  }

  emptySeat(number, clickable) {
    if (!clickable) {
      const node = el("div", "seat empty", `Seat ${number}`);
      node.dataset.seat = String(number);
      return node;
    }
    const node = el("button", "seat empty open");
    node.type = "button";
    node.dataset.seat = String(number);
    node.setAttribute("aria-label", `Take seat ${number}`);
    node.append(el("span", "seat-num", `Seat ${number}`), el("span", "sit-here", "Sit here"));
    node.addEventListener("click", () => this.onSeatClick(number));
    return node;
  }

  seatNode(model, seat, p, hand) {
    const best = winningCards(hand);
    const node = el("div", "seat");
    node.dataset.seat = String(seat.seat);
    node.setAttribute("role", "group");
    const me = mySeat(model) === seat.seat;
    if (me) node.classList.add("me");
    const live = model.hand;
    const acting = live && live.actor === seat.seat;
    if (acting) node.classList.add("acting");
    if (p && (p.status === "folded" || (hand.mucked && hand.mucked[seat.seat]))) node.classList.add("folded");
    if (hand && hand.won && hand.won[seat.seat]) node.classList.add("winner");
    if (seat.status === "sitting_out") node.classList.add("away");

    const cards = el("div", "hole");
    if (p && p.status !== "folded" && !(hand.mucked && hand.mucked[seat.seat])) {
      const count = p.cards ? p.cards.length : p.dealt || live ? holeCount(hand.game) : 0;
      for (let i = 0; i < count; i += 1) {
        const node = cardElement(p.cards ? p.cards[i] : null);
        if (p.cards && best.seats.get(seat.seat)?.has(p.cards[i])) node.classList.add("best");
        // Keyed by seat and place, not face: a card turned up at showdown is not dealt again.
        this.motion.card(node, `hole:${seat.seat}:${i}`, { index: i });
        cards.append(node);
      }
      if (p.cards && (p.shown || !me)) cards.classList.add("shown");
    }
    cards.setAttribute("aria-label", me ? "Your cards" : `${seat.player}'s cards`);
    cards.setAttribute("role", "group");

    const plate = el("div", "plate");
    plate.append(el("span", "name", seat.player));
    const stack = p ? p.stack : seat.stack;
    const stackNode = el("span", "stack", p && p.status === "all_in" && live ? "All-in" : money(stack));
    stackNode.setAttribute("aria-label", `Stack ${money(stack)}`);
    plate.append(stackNode);
    let note = "";
    if (hand && hand.won && hand.won[seat.seat]) note = winNote(hand.shares, seat.seat);
    else if (hand && hand.lastAction && hand.lastAction[seat.seat]) note = hand.lastAction[seat.seat];
    else if (acting) note = me ? "Your turn" : "Thinking…";
    else if (!p && STATUS_LABELS[seat.status]) note = STATUS_LABELS[seat.status];
    if (seat.leaving) note = note ? `${note} · leaving` : "Leaving";
    if (seat.disconnected) {
      node.classList.add("dropped");
      const badge = el("span", "badge dropped-badge", "Disconnected");
      badge.dataset.role = "disconnected";
      plate.append(badge);
    }
    const noteNode = el("span", "note", note);
    noteNode.dataset.role = "note";
    plate.append(noteNode);
    if (hand && hand.descriptions && hand.descriptions[seat.seat]) {
      plate.append(el("span", "desc", hand.descriptions[seat.seat]));
    }
    node.setAttribute("aria-label", `Seat ${seat.seat}: ${seat.player}${me ? " (you)" : ""}`);
    node.append(cards, plate);
    if (acting) {
      const clock = el("div", "seat-clock");
      clock.setAttribute("aria-hidden", "true");
      clock.append(el("div", "fill"));
      // The seconds left, for everyone at the table (Clock.tick writes them).
      const time = el("span", "seat-time");
      time.dataset.role = "seat-time";
      node.append(clock, time);
    }
    return node;
  }
}

/**
 * The cards to light up at a showdown: for each winner, the five cards of the hand that
 * won (the high hand for a whole pot or the high half, the low for the low half), on the
 * board and in their hand; a board run twice lights each run's winners on its own board.
 * Empty until the server sends `showdown_hands`.
 */
function winningCards(hand) {
  const out = { board: new Set(), second: new Set(), seats: new Map() };
  if (!hand || !hand.showdown) return out;
  const runs = [[hand.showdown, hand.runShares[1], hand.board, out.board]];
  if (hand.showdownSecond && hand.secondBoard) {
    runs.push([hand.showdownSecond, hand.runShares[2], hand.secondBoard, out.second]);
  }
  for (const [showdown, byseat, board, lit] of runs) {
    for (const shown of showdown) {
      const shares = byseat[shown.seat];
      if (!shares) continue;
      const cards = new Set([
        ...(shares.whole || shares.high ? shown.high_cards : []),
        ...(shares.low && shown.low_cards ? shown.low_cards : []),
      ]);
      const seatCards = out.seats.get(shown.seat) || new Set();
      for (const c of cards) {
        seatCards.add(c);
        if (board.includes(c)) lit.add(c);
      }
      out.seats.set(shown.seat, seatCards);
    }
  }
  return out;
}

/** Counts down the turn: fills the actor's seat bar and the viewer's own clock. */
export class Clock {
  constructor(root, { announce, onHurry }) {
    this.root = root;
    this.onHurry = onHurry;
    this.box = root.querySelector("#turn-clock");
    this.fill = root.querySelector("#clock-fill");
    this.text = root.querySelector("#clock-text");
    this.announce = announce;
    this.phase = null;
    setInterval(() => this.tick(), 200);
  }

  set(model) {
    this.model = model;
    this.tick();
  }

  /** The clock of the question to run it twice: the action seconds, no time bank. */
  answerClock(model, hand) {
    const left = Math.max(0, (Date.parse(hand.deadline) - Date.now()) / 1000);
    const fraction = Math.min(1, left / Math.max(model.table.action_seconds, 1));
    const seconds = Math.ceil(left);
    this.box.hidden = false;
    this.fill.style.width = `${(fraction * 100).toFixed(1)}%`;
    this.fill.classList.remove("bank");
    this.text.textContent = `${seconds} s to answer`;
    const phase = `${hand.turn}:run_twice`;
    if (phase !== this.phase) {
      this.phase = phase;
      this.announce(`Run it twice? ${seconds} seconds to answer.`);
    }
  }

  tick() {
    const model = this.model;
    const hand = model && model.hand;
    const bar = this.root.querySelector(".seat.acting .seat-clock .fill");
    const seatTime = this.root.querySelector(".seat.acting [data-role=seat-time]");
    if (hand && hand.deadline && askedToRunTwice(model)) {
      this.answerClock(model, hand);
      return;
    }
    if (!hand || !hand.deadline || hand.actor === null) {
      this.box.hidden = true;
      this.phase = null;
      return;
    }
    const actionSeconds = model.table.action_seconds;
    const bank = hand.timeBank ?? model.table.time_bank_seconds;
    const left = Math.max(0, (Date.parse(hand.deadline) - Date.now()) / 1000);
    const inBank = left <= bank;
    const fraction = inBank ? (bank ? left / bank : 0) : Math.min(1, (left - bank) / Math.max(actionSeconds, 1));
    const seconds = Math.ceil(inBank ? left : left - bank);
    if (bar) {
      bar.style.width = `${(fraction * 100).toFixed(1)}%`;
      bar.classList.toggle("bank", inBank);
    }
    const bonus = hand.bonus ? ` (+${hand.bonus} s reconnect bonus)` : "";
    if (seatTime) {
      seatTime.textContent = `${inBank ? `Time bank ${seconds} s` : `${seconds} s`}${bonus}`;
      seatTime.classList.toggle("bank", inBank);
    }
    const mine = mySeat(model) === hand.actor;
    this.box.hidden = !mine;
    if (!mine) {
      this.phase = null;
      return;
    }
    this.fill.style.width = `${(fraction * 100).toFixed(1)}%`;
    this.fill.classList.toggle("bank", inBank);
    this.text.textContent = `${inBank ? `Time bank: ${seconds} s` : `${seconds} s to act`}${bonus}`;
    const phase = `${hand.turn}:${inBank ? "bank" : "action"}`;
    if (phase !== this.phase) {
      // Into the time bank (not a page opened during it): time is running out.
      if (inBank && this.phase === `${hand.turn}:action`) this.onHurry();
      this.phase = phase;
      this.announce(inBank ? `Time bank: ${seconds} seconds left.` : `Your turn: ${seconds} seconds.`);
    }
  }
}

export { toMatch };
