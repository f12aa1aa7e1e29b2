/**
 * format.js — how money and cards read on screen and to a screen reader.
 *
 * Money is always integer cents from the server; `money(150)` is "$1.50" and
 * `money(200)` is "$2". `parseDollars("1.5")` turns what a player typed back into cents
 * (null when it is not an amount). Cards are the engine's two-character codes ("As",
 * "Td"): `cardText` gives the rank and suit symbol, `cardName` the words for aria-label
 * ("Ace of spades"), `cardElement` the DOM node (never innerHTML).
 */

export function money(cents) {
  if (cents === null || cents === undefined) return "";
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  const whole = Math.floor(abs / 100).toLocaleString("en-US");
  const part = abs % 100;
  return part === 0 ? `${sign}$${whole}` : `${sign}$${whole}.${String(part).padStart(2, "0")}`;
}

/** "12.5" / "$12.50" / "1,000" -> cents; null when not a non-negative amount. */
export function parseDollars(text) {
  const cleaned = String(text).trim().replace(/[$,\s]/g, "");
  if (!/^\d+(\.\d{0,2})?$/.test(cleaned)) return null;
  const [whole, part = ""] = cleaned.split(".");
  return Number(whole) * 100 + Number(part.padEnd(2, "0"));
}

/** Cents as a plain number for an <input type=number> ("12.5" not "$12.50"). */
export function inputDollars(cents) {
  return (cents / 100).toFixed(cents % 100 === 0 ? 0 : 2);
}

const RANKS = {
  A: ["A", "Ace"], K: ["K", "King"], Q: ["Q", "Queen"], J: ["J", "Jack"], T: ["10", "Ten"],
  9: ["9", "Nine"], 8: ["8", "Eight"], 7: ["7", "Seven"], 6: ["6", "Six"], 5: ["5", "Five"],
  4: ["4", "Four"], 3: ["3", "Three"], 2: ["2", "Two"],
};
const SUITS = {
  s: ["♠", "spades"], h: ["♥", "hearts"], d: ["♦", "diamonds"], c: ["♣", "clubs"],
};

export function cardName(code) {
  const rank = RANKS[code[0]];
  const suit = SUITS[code[1]];
  return rank && suit ? `${rank[1]} of ${suit[1]}` : "Unknown card";
}

export function cardText(code) {
  const rank = RANKS[code[0]];
  const suit = SUITS[code[1]];
  return rank && suit ? `${rank[0]}${suit[0]}` : "?";
}

export function cardsText(codes) {
  return codes.map(cardText).join(" ");
}

/** A face-up card (code) or a face-down one (null). */
export function cardElement(code, { small = false } = {}) {
  const el = document.createElement("span");
  el.setAttribute("role", "img");
  el.className = small ? "card small" : "card";
  if (!code) {
    el.classList.add("back");
    el.setAttribute("aria-label", "Face-down card");
    el.dataset.card = "back";
    return el;
  }
  el.classList.add(`suit-${code[1]}`);
  el.dataset.card = code;
  el.setAttribute("aria-label", cardName(code));
  const rank = document.createElement("span");
  rank.className = "rank";
  rank.textContent = (RANKS[code[0]] || ["?"])[0];
  const suit = document.createElement("span");
  suit.className = "suit";
  suit.textContent = (SUITS[code[1]] || ["?"])[0];
  rank.setAttribute("aria-hidden", "true");
  suit.setAttribute("aria-hidden", "true");
  el.append(rank, suit);
  return el;
}

export const GAME_HOLE_CARDS = { holdem: 2, omaha: 4, omaha8: 4 };

export const STREET_NAMES = { preflop: "Preflop", flop: "Flop", turn: "Turn", river: "River" };

export const POST_NAMES = {
  ante: "an ante",
  small_blind: "the small blind",
  big_blind: "the big blind",
  newcomer_big_blind: "a big blind to come in",
  straddle: "a straddle",
  kill_blind: "a kill blind",
  overblind: "an overblind",
};

/**
 * What a winner's plate says: "Wins $4" for whole pots; at hi-lo, which half they won
 * ("High $1.90", "Low $1.90", both joined by " · "), or "Scoops $3.80" when they took
 * both halves and nobody else won anything.
 */
export function winNote(shares, seat) {
  const mine = shares[seat];
  if (!mine) return "";
  const total = mine.whole + mine.high + mine.low;
  const alone = Object.keys(shares).every((other) => Number(other) === seat);
  if (mine.high && mine.low && !mine.whole && alone) return `Scoops ${money(total)}`;
  const parts = [];
  if (mine.whole) parts.push(`Wins ${money(mine.whole)}`);
  if (mine.high) parts.push(`High ${money(mine.high)}`);
  if (mine.low) parts.push(`Low ${money(mine.low)}`);
  return parts.join(" · ");
}

/**
 * The limits in force this hand when a kill or an overblind raised them ("$4/$8 · kill
 * ×2", "$2-$6 · overblind ×2"); "" for a hand at the table's own limits.
 */
export function handLimitsText(structure, limits) {
  if (!limits || !limits.reason) return "";
  const stakes = structure === "SL"
    ? `${money(limits.spread_min)}-${money(limits.spread_max)}`
    : `${money(limits.small_bet)}/${money(limits.big_bet)}`;
  return `${stakes} · ${limits.reason} ×${limits.multiplier}`;
}
