/**
 * store.js — the client's model of the table: a snapshot, then every event applied to it.
 *
 * `fromSnapshot(msg)` builds the model from the server's snapshot (tables/selectors.py
 * `table_snapshot`); `applyEvent(model, msg)` folds one versioned event into it (the
 * event types of tables/engine/events.py plus the table's own `turn`, `run_twice_ask`,
 * `seats` and `seat_left`) and returns notes for the log (who sat down, who dropped or came back,
 * what became of a straddle or overblind request). It does no poker arithmetic: the
 * events carry their results (stacks, commitments, pot total, amount to match, the bet
 * shortcuts) and this copies them; any doubt (a lost message) is settled by a fresh
 * snapshot (socket.js). tests/browser/test_stream_replay.py checks that a snapshot plus
 * the events shows what the next snapshot shows.
 */

import { money } from "./format.js";

// What the log says when an admin (or the room, after repeated failures) changes the table.
const TABLE_STATUS_NOTES = {
  open: "The table is open again.",
  paused: "The table is paused: this hand is played out, then no more are dealt.",
  closed: "The table is closed: no new hands; you can still leave with your chips.",
};

function player(hand, seat) {
  return hand ? hand.players.find((p) => p.seat === seat) : undefined;
}

function newHandExtras(hand) {
  hand.lastAction = {};
  hand.won = {};
  // seat -> {whole, high, low}: what each winner took, by half (hi-lo) or whole pots;
  // the same for each run of a board run twice (run -> seat -> shares).
  hand.shares = {};
  hand.runShares = { 1: {}, 2: {} };
  hand.descriptions = {};
  hand.mucked = {};
  hand.legal = hand.legal || null;
  // The viewer's best hand now (the server names it), and at the end the five cards of
  // every hand shown down.
  hand.bestHand = hand.bestHand || null;
  hand.showdown = null;
  hand.showdownSecond = null;
  // Run it twice: the question ({asked, agreed, undecided, runs}) once the players
  // all-in are asked, and the second run's board once it is dealt.
  hand.runTwice = hand.runTwice || null;
  hand.secondBoard = hand.secondBoard || null;
  return hand;
}

export function fromSnapshot(msg, previous) {
  const model = {
    table: msg.table,
    seats: msg.seats,
    you: msg.you,
    // The buy-in this viewer may bring (the no-ratholing rule included); null when seated.
    buyIn: msg.buy_in,
    // The viewer's auto top-up order ({mode, big_blinds}; null for a spectator).
    autoTopUp: msg.auto_top_up || null,
    hand: null,
    pendingAct: false,
    // The viewer's answer to run it twice is on its way (the buttons wait for it).
    pendingAnswer: false,
    // The finished hand stays on screen until the next one starts.
    lastHand: previous ? previous.lastHand : null,
  };
  const h = msg.hand;
  if (h) {
    model.hand = newHandExtras({
      id: h.id,
      number: h.number,
      game: h.game,
      structure: h.structure,
      limits: { ...h.limits, reason: h.limit_reason },
      button: h.button,
      street: h.street,
      board: [...h.board],
      pots: h.pots,
      actor: h.actor,
      isOver: h.is_over,
      players: h.players.map((p) => ({ ...p, dealt: true })),
      legal: h.legal_actions,
      turn: h.turn,
      deadline: h.deadline,
      timeBank: msg.table.time_bank_seconds,
      bestHand: h.best_hand || null,
      toMatch: h.to_match,
      potTotal: h.pot_total,
      presets: h.presets || null,
      advanceOptions: h.advance_options || null,
      // The hand's events so far as this viewer saw them (main.js rebuilds the log).
      log: h.log || [],
      runTwice: h.run_twice ? runTwiceOf(h.run_twice) : null,
    });
    model.lastHand = null;
  }
  return model;
}

export function toMatch(hand) {
  return hand.toMatch;
}

export function potTotal(hand) {
  return hand.potTotal;
}

export function mySeat(model) {
  return model.you ? model.you.seat : null;
}

export function myPlayer(model) {
  return model.hand && model.you ? player(model.hand, model.you.seat) : undefined;
}

export function shownHand(model) {
  return model.hand || model.lastHand;
}

/**
 * Apply one event. Returns `{changes}`: notes for the log that the event alone cannot
 * say (who sat down), computed from the model before the change.
 */
export function applyEvent(model, msg) {
  const notes = [];
  if (Object.prototype.hasOwnProperty.call(msg, "advance") && model.you) {
    model.you.advance = msg.advance;
  }
  const hand = model.hand;
  const p = player(hand, msg.seat);
  switch (msg.type) {
    case "hand_started":
      model.lastHand = null;
      model.hand = newHandExtras({
        id: msg.hand,
        number: Number(String(msg.hand_id).split("-").pop()),
        game: msg.game,
        structure: msg.structure,
        limits: {
          big_blind: msg.big_blind, small_bet: msg.small_bet, big_bet: msg.big_bet,
          spread_min: msg.spread_min, spread_max: msg.spread_max,
          multiplier: msg.limit_multiplier,
          reason: msg.kill ? "kill" : msg.overblind_seat ? "overblind" : null,
        },
        button: msg.button,
        street: "preflop",
        board: [],
        pots: [],
        actor: null,
        isOver: false,
        players: msg.seats.map((s) => ({
          seat: s.seat, player: s.player, player_id: s.player_id ?? null, stack: s.stack,
          committed: 0, in_pot: 0, status: "in", cards: null, shown: false, dealt: false,
        })),
        legal: null,
        turn: 0,
        deadline: null,
        timeBank: model.table.time_bank_seconds,
        toMatch: 0,
        potTotal: 0,
        presets: null,
        advanceOptions: null,
      });
      // Everyone dealt in is playing now (the server sends no seat list for that).
      for (const s of model.seats) {
        if (msg.seats.some((d) => d.seat === s.seat)) s.status = "active";
      }
      if (model.you) {
        model.you.advance = null;
        if (msg.seats.some((d) => d.seat === model.you.seat)) model.you.status = "active";
      }
      break;
    case "posted":
      if (p) {
        copyResults(hand, p, msg, msg.committed);
        if (msg.all_in) p.status = "all_in";
        hand.lastAction[p.seat] = msg.kind === "ante" ? "Ante" : "Blind";
      }
      break;
    case "hole_cards":
      if (p) {
        p.dealt = true;
        if (msg.cards) p.cards = msg.cards;
      }
      break;
    case "dealt_board":
      if (hand && msg.run === 2 && hand.secondBoard) {
        hand.secondBoard.push(...msg.cards);
      } else if (hand) {
        hand.board.push(...msg.cards);
        hand.street = msg.street;
      }
      break;
    case "run_twice_asked":
      if (hand) {
        hand.runTwice = runTwiceOf({ asked: msg.seats, agreed: [], undecided: msg.seats, runs: 0 });
        hand.actor = null;
      }
      break;
    case "run_twice_ask":
      // The question's clock: a turn of the hand (no actor), its deadline for all.
      if (hand && hand.runTwice) {
        hand.turn = msg.turn;
        hand.deadline = msg.deadline;
        hand.runTwice.undecided = [...msg.seats];
      }
      break;
    case "run_twice_answered":
      if (hand && hand.runTwice) {
        hand.runTwice.undecided = [...msg.undecided];
        if (msg.agree) hand.runTwice.agreed.push(msg.seat);
        hand.lastAction[msg.seat] = msg.agree ? "Run twice: yes" : msg.timed_out ? "Time out: run once" : "Run twice: no";
        if (msg.seat === mySeat(model)) model.pendingAnswer = false;
      }
      break;
    case "run_twice_decided":
      if (hand && hand.runTwice) {
        hand.runTwice.runs = msg.runs;
        hand.runTwice.undecided = [];
        hand.deadline = null;
        // The second run starts from the cards both runs share: those on the board now.
        if (msg.runs === 2) hand.secondBoard = [...hand.board];
        model.pendingAnswer = false;
      }
      break;
    case "acted":
      if (p) {
        copyResults(hand, p, msg, msg.street_total);
        if (msg.action === "fold") p.status = "folded";
        // The hand helper names a hand only while it is in play (the server stops too).
        if (msg.action === "fold" && p.seat === mySeat(model)) hand.bestHand = null;
        if (msg.all_in) p.status = "all_in";
        // A timeout's own label ("Time out: fold") stays over the fold it caused.
        if (!String(hand.lastAction[p.seat] || "").startsWith("Time out")) {
          hand.lastAction[p.seat] = actionLabel(msg);
        }
        if (p.seat === mySeat(model)) {
          hand.legal = null;
          model.pendingAct = false;
        }
      }
      break;
    case "timed_out":
      if (p) {
        hand.lastAction[p.seat] = `Time out: ${msg.resolution === "protected" ? "protected" : msg.resolution}`;
        if (p.seat === mySeat(model)) {
          hand.legal = null;
          model.pendingAct = false;
        }
      }
      break;
    case "protected":
      if (p) p.status = "protected";
      break;
    case "uncalled_returned":
      if (p) copyResults(hand, p, msg, msg.committed);
      break;
    case "pots":
      if (hand) {
        hand.pots = msg.pots;
        // A betting round is over: its bets are in the pots.
        for (const q of hand.players) q.committed = 0;
        hand.toMatch = 0;
        for (const seat of Object.keys(hand.lastAction)) {
          if (!/fold/i.test(hand.lastAction[seat])) delete hand.lastAction[seat];
        }
        hand.actor = null;
      }
      break;
    case "shown":
      if (p) {
        p.cards = msg.cards;
        p.shown = true;
        // (Run twice: the seat keeps the words of the first board; the log has both.)
        if (msg.run !== 2) hand.descriptions[p.seat] = msg.low ? `${msg.high}; low ${msg.low}` : msg.high;
      }
      break;
    case "mucked":
      if (p) {
        hand.mucked[p.seat] = true;
        hand.lastAction[p.seat] = "Mucks";
      }
      break;
    case "won":
      if (p) {
        p.stack = msg.stack;
        hand.won[p.seat] = (hand.won[p.seat] || 0) + msg.amount;
        for (const table of [hand.shares, hand.runShares[msg.run === 2 ? 2 : 1]]) {
          const shares = table[p.seat] || (table[p.seat] = { whole: 0, high: 0, low: 0 });
          shares[msg.share || "whole"] += msg.amount;
        }
      }
      break;
    case "chopped":
      if (hand) {
        // Every forced bet went back (the stacks come with hand_ended, next).
        for (const q of hand.players) {
          q.committed = 0;
          q.in_pot = 0;
        }
        hand.potTotal = 0;
      }
      break;
    case "hand_ended":
      if (hand) {
        for (const s of msg.stacks) {
          const q = player(hand, s.seat);
          if (q) q.stack = s.amount;
        }
        for (const q of hand.players) q.committed = 0;
        hand.isOver = true;
        hand.actor = null;
        hand.legal = null;
        hand.deadline = null;
        hand.rake = msg.rake;
        model.pendingAct = false;
        model.lastHand = hand;
        model.hand = null;
      }
      break;
    case "turn":
      if (hand) {
        hand.actor = msg.seat;
        hand.turn = msg.turn;
        hand.deadline = msg.deadline;
        hand.timeBank = msg.time_bank_seconds;
        hand.legal = msg.legal_actions || null;
        hand.presets = msg.presets || null;
        hand.advanceOptions = msg.advance_options || null;
        hand.toMatch = msg.to_match;
        hand.potTotal = msg.pot_total;
        // The seconds a reconnect bonus added to this turn's deadline (shown with the clock).
        hand.bonus = msg.reconnect_bonus_seconds || 0;
        delete hand.lastAction[msg.seat];
        model.pendingAct = false;
      }
      break;
    case "seats": {
      const before = new Map(model.seats.map((s) => [s.seat, s]));
      for (const s of msg.seats) {
        const was = before.get(s.seat);
        if (!was || was.player !== s.player) notes.push(`${s.player} sits down in seat ${s.seat}.`);
        else if (!was.disconnected && s.disconnected) notes.push(`${s.player} is disconnected.`);
        else if (was.disconnected && !s.disconnected) notes.push(`${s.player} is connected again.`);
      }
      model.seats = msg.seats;
      model.you = youFromSeats(model);
      break;
    }
    case "seat_left":
      model.seats = model.seats.filter((s) => s.seat !== msg.seat);
      model.you = youFromSeats(model);
      break;
    case "showdown_hands": {
      const shown = model.hand || model.lastHand;
      if (shown && shown.id === msg.hand) {
        shown.showdown = msg.hands;
        shown.showdownSecond = msg.second && msg.second.length ? msg.second : null;
      }
      break;
    }
    case "table_status":
      model.table = { ...model.table, status: msg.status };
      notes.push(TABLE_STATUS_NOTES[msg.status] || `The table is ${msg.status}.`);
      break;
    default:
      break;
  }
  // The viewer's own copy of a message may carry their straddle/overblind options for
  // the next hand, and at a deal what became of their request (posted, or why not).
  if (Object.prototype.hasOwnProperty.call(msg, "blind_options") && model.you) {
    model.you.blind_options = msg.blind_options;
  }
  for (const answer of msg.blind_requests || []) notes.push(answer.message);
  // The viewer's own copy of a board carries the hand they make now.
  if (msg.best_hand && model.hand) model.hand.bestHand = msg.best_hand;
  if (msg.auto_top_up) notes.push(autoTopUpNote(msg.auto_top_up));
  return notes;
}

/** The question to run it twice as the model keeps it (from a snapshot or an event). */
function runTwiceOf(q) {
  return { asked: [...q.asked], agreed: [...q.agreed], undecided: [...q.undecided], runs: q.runs };
}

/** Whether the viewer is asked to run it twice and has not answered yet. */
export function askedToRunTwice(model) {
  const q = model.hand && model.hand.runTwice;
  return Boolean(q && q.runs === 0 && q.undecided.includes(mySeat(model)));
}

/** A chip-moving event's results: the player's numbers and the hand's, as sent. */
function copyResults(hand, p, msg, committed) {
  p.stack = msg.stack;
  p.in_pot = msg.in_pot;
  p.committed = committed;
  hand.toMatch = msg.to_match;
  hand.potTotal = msg.pot_total;
}

function autoTopUpNote({ added, due }) {
  if (added === due) return `Auto top-up: ${money(added)} added.`;
  if (added > 0) return `Auto top-up: ${money(added)} of ${money(due)} added (that was all your wallet held).`;
  return `Auto top-up: your wallet is empty, nothing added (${money(due)} was due).`;
}

/** Keep `you` in step with the public seat list (by user id: a name can change). */
function youFromSeats(model) {
  const id = model.userId;
  const seat = id ? model.seats.find((s) => s.user_id === id) : undefined;
  if (!seat) return null;
  const old = model.you && model.you.seat === seat.seat ? model.you : {};
  const satOut = seat.status === "sitting_out";
  return {
    advance: null,
    sitting_out_next: false,
    blind_options: null,
    ...old,
    seat: seat.seat,
    status: seat.status,
    stack: seat.stack,
    leaving: seat.leaving,
    sitting_out_next: !satOut && Boolean(seat.sitting_out_next),
  };
}

export function actionLabel(msg) {
  const allIn = msg.all_in ? " (all-in)" : "";
  switch (msg.action) {
    case "fold": return "Fold";
    case "check": return "Check";
    case "call": return `Call${allIn}`;
    case "bet": return `Bet${allIn}`;
    case "raise": return `Raise${allIn}`;
    default: return msg.action;
  }
}

/** The engine's hole-card count for a game. */
export function holeCount(game) {
  return game === "holdem" ? 2 : 4;
}
