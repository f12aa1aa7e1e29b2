/**
 * log.js — the hand log: one human-readable line per table event ("bob raises to $6").
 *
 * `describe(msg, model)` reads the event and the model *before* the event is applied (for
 * names and streets) and returns a line or null (events that need no line). `HandLog`
 * appends lines to the <ol> with textContent only, keeps the last few hundred, and
 * scrolls to the newest. Each line of a hand is tagged with the hand's id, so that a
 * snapshot (a reopened page, a reconnect) can put back that hand's whole log from the
 * snapshot's `hand.log` in place of what this page had of it (`replaceHand`).
 */

import { cardsText, money, POST_NAMES, STREET_NAMES } from "./format.js";

const MAX_LINES = 300;

function nameOf(model, seat) {
  const hand = model.hand || model.lastHand;
  const p = hand && hand.players.find((q) => q.seat === seat);
  if (p) return p.player;
  const s = model.seats.find((q) => q.seat === seat);
  return s ? s.player : `Seat ${seat}`;
}

function potName(index) {
  return index === 0 ? "the main pot" : `side pot ${index}`;
}

export function describe(msg, model) {
  const who = () => nameOf(model, msg.seat);
  const allIn = msg.all_in ? " and is all-in" : "";
  switch (msg.type) {
    case "hand_started":
      return {
        text: `Hand #${String(msg.hand_id).split("-").pop()} — ${nameOf(model, msg.button)} has the button`,
        kind: "start",
      };
    case "posted":
      return `${who()} posts ${POST_NAMES[msg.kind] || msg.kind} ${money(msg.amount)}${allIn}`;
    case "hole_cards":
      return msg.cards ? { text: `Dealt to you: ${cardsText(msg.cards)}`, kind: "mine" } : null;
    case "dealt_board": {
      const run = msg.run === 2 ? "Second board, " : "";
      return { text: `${run}${STREET_NAMES[msg.street] || msg.street}: ${cardsText(msg.cards)}`, kind: "street" };
    }
    case "run_twice_asked":
      return { text: `All-in: ${msg.seats.map((s) => nameOf(model, s)).join(", ")} may run it twice`, kind: "info" };
    case "run_twice_answered":
      if (msg.timed_out) return { text: `${who()} did not answer in time: the board is run once`, kind: "warn" };
      return `${who()} ${msg.agree ? "agrees" : "refuses"} to run it twice`;
    case "run_twice_decided":
      return {
        text: msg.runs === 2 ? "Everyone agreed: the board is run twice, each pot split between the runs" : "The board is run once",
        kind: "info",
      };
    case "acted":
      switch (msg.action) {
        case "fold": return `${who()} folds`;
        case "check": return `${who()} checks`;
        case "call": return `${who()} calls ${money(msg.amount)}${allIn}`;
        case "bet": return `${who()} bets ${money(msg.street_total)}${allIn}`;
        case "raise": return `${who()} raises to ${money(msg.street_total)}${allIn}`;
        default: return `${who()} ${msg.action}`;
      }
    case "timed_out": {
      const what = {
        check: "checks", fold: "folds", protected: "stays in with all-in protection",
      }[msg.resolution] || msg.resolution;
      return { text: `${who()} ran out of time and ${what}`, kind: "warn" };
    }
    case "protected":
      return `${who()} is all-in protected for ${money(msg.amount_in)}`;
    case "uncalled_returned":
      return `${money(msg.amount)} uncalled, returned to ${who()}`;
    case "shown": {
      const board = msg.run === 2 ? " on the second board" : "";
      return `${who()} shows ${cardsText(msg.cards)}${board} (${msg.high}${msg.low ? `; low: ${msg.low}` : ""})`;
    }
    case "mucked":
      return `${who()} mucks`;
    case "won": {
      const share = msg.share ? ` (${msg.share})` : "";
      const how = msg.description ? ` with ${msg.description}` : "";
      const board = msg.run === 2 ? " on the second board" : "";
      return { text: `${who()} wins ${money(msg.amount)} from ${potName(msg.pot)}${share}${board}${how}`, kind: "win" };
    }
    case "rake":
      return msg.amount ? `Rake ${money(msg.amount)}` : null;
    case "chopped":
      return "The blinds chop: the blinds go back to their owners";
    case "blind_option": {
      const what = msg.kind === "straddle" ? "straddle" : "post an overblind";
      return msg.wanted ? `${who()} asks to ${what} next hand` : `${who()} no longer asks to ${what}`;
    }
    case "seat_left":
      return `${msg.player} leaves the table`;
    case "turn":
      return msg.reconnect_bonus_seconds
        ? { text: `${who()} is back: +${msg.reconnect_bonus_seconds} s reconnect bonus`, kind: "info" }
        : null;
    default:
      return null;
  }
}

export class HandLog {
  constructor(list) {
    this.list = list;
  }

  add(line, hand = null) {
    const li = this.item(line, hand);
    if (!li) return;
    this.list.append(li);
    this.trim();
  }

  /** Put back a hand's whole log (lines or nulls) where this page's lines of it were. */
  replaceHand(hand, lines) {
    const old = [...this.list.children].filter((li) => li.dataset.hand === String(hand));
    const items = lines.map((line) => this.item(line, hand)).filter(Boolean);
    if (old.length) old[0].before(...items);
    else this.list.append(...items);
    old.forEach((li) => li.remove());
    this.trim();
  }

  item(line, hand) {
    if (!line) return null;
    const entry = typeof line === "string" ? { text: line } : line;
    const li = document.createElement("li");
    li.textContent = entry.text;
    if (entry.kind) li.className = `log-${entry.kind}`;
    if (hand !== null && hand !== undefined) li.dataset.hand = String(hand);
    return li;
  }

  trim() {
    while (this.list.childElementCount > MAX_LINES) this.list.firstElementChild.remove();
    this.list.scrollTop = this.list.scrollHeight;
  }
}
